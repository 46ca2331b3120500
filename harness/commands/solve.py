"""``yatzy-harness solve``: the exact figures of optimal play (:mod:`harness.exact.solver`), and with
``--target`` the target table's (:mod:`harness.exact.target`)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from harness.commands.options import (
    add_cache_dir_option,
    add_set_option,
    add_window_options,
    describe,
    print_json,
    window_limits,
)

#: What ``solve`` says of a rule set with saved rolls.
SAVED_ROLLS_NOTE = (
    "saved_rolls is not part of the solved state: these are the exact figures of optimal play "
    "with ordinary turns (no roll carried over); the solver bot uses carried-over rolls when it "
    "has them, so its scores run higher"
)


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Solve a rule set exactly (backward induction; cached on disk) and print "
        "the optimal expected score, and the exact std, bonus probability and "
        "percentiles of the final score under optimal play.",
        "yatzy-harness solve scandinavian --json",
        "yatzy-harness solve scandinavian --set upper_bonus_threshold=62 --no-distribution",
        "yatzy-harness solve scandinavian --target 300   # P(score >= 300) playing for it vs EV-optimal play",
        "yatzy-harness solve maxi --cache-dir /data/yatzy-cache   # then: run --cache-dir /data/yatzy-cache",
    )
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    add_set_option(p)
    add_cache_dir_option(p)
    p.add_argument("--no-distribution", action="store_true", help="only the value table and expected score")
    add_window_options(p, "percentiles are skipped")
    p.add_argument(
        "--target",
        type=int,
        default=None,
        metavar="T",
        help="also P(score >= T) under play that maximises it (exact target table, cached beside the "
        "value table) next to P(score >= T) under EV-optimal play (harness.exact.target)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `solve --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.game.rules import load_rules
    from harness.exact.solver import exact_distribution, solve
    from harness.exact.target import target_report

    cache_dir = select_cache_dir(args.cache_dir)  # the same directory for solve as for run and replay
    rules = load_rules(args.rules, args.settings)
    t0 = time.perf_counter()
    if args.no_distribution:
        sol = solve(rules, cache_dir)
        out: dict[str, Any] = {
            "rules": rules.name,
            "digest": rules.digest,
            "expected_score": sol.expected_score,
            "states": sol.states,
            "seconds": time.perf_counter() - t0,
            "solve_seconds": sol.seconds,
            "cached": sol.cached,
        }
    else:
        fig = exact_distribution(rules, cache_dir, **window_limits(args), progress=sys.stderr.isatty())
        out = fig.to_json()
        out["seconds"] = time.perf_counter() - t0
    if rules.saved_rolls:
        out["note"] = SAVED_ROLLS_NOTE
    if args.target is not None:
        out["target"] = target_report(
            rules, args.target, cache_dir, **window_limits(args), progress=sys.stderr.isatty()
        )
    if args.json:
        print_json(out)
        return 0
    print(f"{rules.title or rules.name} ({rules.name}, digest {rules.digest[:12]})")
    print(f"  expected score  {out['expected_score']:.6f}  (optimal play, one column)")
    if rules.saved_rolls:
        print(f"  note            {SAVED_ROLLS_NOTE}")
    if "std" in out:
        print(f"  std             {out['std']:.6f}")
        # a rule set without an upper bonus (value 0, as in generala) has no bonus to earn: its
        # p_bonus (the chance of reaching the threshold) stays in the JSON, the text says so
        print("  bonus           " + (f"{100 * out['p_bonus']:.4f} %" if rules.bonus_value else "no upper bonus"))
        if out["percentiles"] is not None:
            print("  percentiles     " + "  ".join(f"p{q}={v}" for q, v in out["percentiles"].items()))
        else:
            print(f"  percentiles     not computed ({out['distribution_storage'][len('skipped: ') :]})")
    print(f"  states          {out['states']:,}")
    how = "loaded from cache" if out["cached"] else "solved"
    print(f"  seconds         {out['seconds']:.2f} (table {how}; solve took {out['solve_seconds']:.2f} s)")
    if args.target is not None:
        _print_target(out["target"])
    return 0


def _print_target(out: dict[str, Any]) -> None:
    t = out["target"]
    ev = "n/a (distribution skipped)" if out["p_ev_play"] is None else f"{100 * out['p_ev_play']:.4f} %"
    print(f"  P(score >= {t})  {100 * out['p_target_play']:.4f} % playing for it  (EV-optimal play: {ev})")
    how = "loaded from cache" if out["cached"] else "solved"
    print(
        f"  target table    {out['entries']:,} entries, {out['table_bytes'] / 2**20:.1f} MiB float32, "
        f"tmax {out['tmax']} ({how}; solve took {out['table_seconds']:.1f} s)"
    )

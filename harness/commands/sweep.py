"""``yatzy-harness sweep``: exact figures, head-to-heads and depth of skill across values of rule settings (:mod:`harness.studies.sweep`)."""

from __future__ import annotations

import argparse
import json

from harness.commands.options import (
    add_backend_options,
    add_cache_dir_option,
    add_depth_options,
    describe,
    new_out_dir,
    print_json,
)
from harness.util.specs import split_specs


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Sweep one or two rule settings: at every value (every cell of a two-setting grid) the exact "
        "figures of solitaire bots (mean, sd, P(bonus), percentiles), their exact pairwise win rates "
        "and, with --depth, the exact depth of skill. One table with a row per value, CSV, JSON and "
        "plots against the setting (heat maps for two). Evaluations run on --workers forked "
        "processes (or as tasks on a Dask cluster: --backend dask, docs/cluster.md) and are cached "
        "per rule set and bot: a rerun computes only what is missing; --dry-run says how much that is.",
        "yatzy-harness sweep scandinavian --set upper_bonus_threshold=55..70 --entrants greedy,solver",
        "yatzy-harness sweep scandinavian --set upper_bonus_threshold=55,60,63 --entrants greedy,solver "
        "--depth --rates 0.75 --out results/sweep",
        "yatzy-harness sweep standard --set upper_bonus_threshold=55..70:5 --set upper_bonus_value=25..50:5 "
        "--entrants greedy,solver --json",
        "yatzy-harness sweep scandinavian --set upper_bonus_threshold=55..70 --entrants greedy,solver --depth "
        "--backend dask --scheduler tcp://HOST:8786 --cache-dir /shared/cache",
        "yatzy-harness sweep generala --set upper_bonus_threshold=3..6 --set upper_bonus_value=35 --depth "
        "--backend dask --workers 3 --dry-run",
    )
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=LO..HI[:STEP]",
        help="a setting to sweep, KEY=LO..HI[:STEP] (whole numbers) or KEY=A,B,C (any setting), at most "
        "two; KEY=VALUE holds for every value (repeatable)",
    )
    p.add_argument("--entrants", metavar="A,B,...", help="solitaire bots (name or name:key=value) to evaluate")
    p.add_argument("--depth", action="store_true", help="also the exact depth of skill at every value")
    add_depth_options(p)
    add_backend_options(p, dry_run=True)
    add_cache_dir_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--out", default=None, metavar="DIR", help="write sweep.json, sweep.csv, sweep.md and the plots there"
    )


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `sweep --help` must not pay for numba
    from harness.util import render
    from harness.util.cache import select_cache_dir
    from harness.commands.options import depth_settings, evaluated_line, exact_tasks, shows_progress
    from harness.studies.cost import estimate_sweep
    from harness.studies.depth import DepthRequest, Evaluator
    from harness.util.jsonable import jsonable
    from harness.studies.sweep import parse_settings, sweep

    select_cache_dir(args.cache_dir)
    axes, fixed = parse_settings(args.settings)
    bots = split_specs(args.entrants) if args.entrants else []  # one parser of every list of bots
    rates, weakest, dial = depth_settings(args) if args.depth else ((), args.weakest, args.dial)
    depth = DepthRequest(tuple(rates), weakest, dial, args.candidates)
    if args.dry_run:
        est = estimate_sweep(args.rules, axes, fixed, bots, depth)
        if args.json:
            print_json(est.to_json())
        else:
            print("\n".join(est.lines(args.workers if args.backend == "dask" or args.workers > 1 else 1)))
        return 0
    out = new_out_dir(args.out, "sweep") if args.out else None
    progress = shows_progress(args)
    expected = estimate_sweep(args.rules, axes, fixed, bots, depth).evaluations if progress else None
    with exact_tasks(args) as tasks:
        ev = Evaluator(
            tasks=tasks, on_done=None if args.json or progress else evaluated_line, progress=progress, expected=expected
        )
        try:
            res = sweep(args.rules, axes, fixed, bots, depth, ev)
        finally:
            ev.close()
    table = res.table()
    if out is not None:
        from harness.reports.plot import plot_sweep

        (out / "sweep.json").write_text(json.dumps(jsonable(res.to_json()), indent=2))
        (out / "sweep.csv").write_text(res.csv())
        (out / "sweep.md").write_text(render.markdown([table], f"Sweep, {res.rules}", [res.describe()]))
        for stem, fig in plot_sweep(res).items():
            fig.savefig(out / f"{stem}.png")
    if args.json:
        print_json(res.to_json())
    else:
        print(render.text([table], [f"sweep: {res.describe()} in {res.seconds:.1f} s"]))
    return 0

"""Playing to win, measured: target tables (size, solve time), exact P(score >= T) under target and
EV-optimal play, the exact ceiling of play that knows the opponents' finals, and ``winprob`` against
``solver`` over seat-swapped duplicate games.

Run from the repository root (long: use ``nice``; the tables are cached after the first run)::

    python benchmarks/bench_target.py tables --rules scandinavian,standard,yahtzee
    python benchmarks/bench_target.py play --rules scandinavian --games 100000
    python benchmarks/bench_target.py play --rules scandinavian --games 20000 --seats 4

``tables`` solves (or loads) the three tables of each rule set ("target", "tie", "ev"; see
:mod:`harness.exact.target`), prints their size and the time their solve took, P(score >= T) for
T = 150, 200, 250, 300 under both policies (the EV side from the exact distribution), and the
ceiling: the win rate (ties half) of play that knows the best opponent final in advance, exact:
sum over b of P(best EV-optimal final = b) x the tie-aware table's start value at b.

``play`` plays ``winprob`` against ``solver`` through the runner (``--workers``, default 2): with two
seats, both seatings on the same seed (game i has the same dice in both runs, so the two runs make
a pair per game); with four, ``winprob`` in each seat against three ``solver`` bots, again on one
seed. Prints each seating's score rate (win 1, tie shared: 1/2 with two seats, 1/k in a k-way top
tie) with a 95 % interval, the average, an SPRT on the game pairs (pentanomial, H0 50 % vs H1
51 %), and games/s of the runs against solver-vs-solver on the same games.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from harness.exact import solver
from harness.exact import target
from harness.game.rules import load_rules
from harness.play.runconfig import RunConfig
from harness.play.runner import run
from harness.stats import elo_from_score, mean_ci, sprt_pentanomial

TARGETS = (150, 200, 250, 300)


def tables(names: list[str], extrapolate: list[str]) -> None:
    print("| rule set | table | states | tmax | entries | size | (a vector of tmax + 1 a state) | solve time |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    rows = []
    per_entry = math.inf
    for name in names:
        rules = load_rules(name)
        fig = solver.exact_distribution(rules)
        tabs = {}
        for kind in ("target", "tie", "ev"):
            t0 = time.perf_counter()
            tab = target.target_table(rules, kind)
            tabs[kind] = tab
            flat = 4 * tab.plan.n_states * (tab.tmax + 1)
            print(
                f"| {name} | {kind} | {tab.plan.n_states:,} | {tab.tmax} | {int(tab.off[-1]):,} | "
                f"{tab.nbytes / 2**20:,.0f} MiB | {flat / 2**20:,.0f} MiB | {tab.seconds:.0f} s |",
                flush=True,
            )
            if kind != "ev":  # the fastest maximising solve per entry and keep, for extrapolating
                per_entry = min(per_entry, tab.seconds / int(tab.off[-1]) / rules.dice.n_keeps)
            log = {
                "rules": name,
                "kind": kind,
                "seconds": tab.seconds,
                "load": time.perf_counter() - t0,
                "cached": tab.cached,
            }
            print(json.dumps(log), file=sys.stderr)
        rows.append((name, rules, fig, tabs))
    for name in extrapolate:
        rules = load_rules(name)
        size = target.table_bytes(rules)
        secs = size / 4 * rules.dice.n_keeps * per_entry
        print(
            f"| {name} | target or tie (not solved) | {solver.build_plan(rules).n_states:,} | "
            f"{target.default_tmax(rules)} | {size // 4:,} | {size / 2**30:,.1f} GiB | | "
            f"~{secs / 3600:.0f} h (extrapolated: the fastest solve above per entry and keep) |"
        )
    print()
    print("| rule set | T | P(score >= T), target play | P(score >= T), EV-optimal play |")
    print("|---|---:|---:|---:|")
    for name, _rules, fig, tabs in rows:
        for T in TARGETS:
            p_t = tabs["target"].prob(0, 0, False, T)
            p_ev = float(fig.distribution[T:].sum())
            print(f"| {name} | {T} | {100 * p_t:.2f} % | {100 * p_ev:.2f} % |")
    print()
    print("| rule set | opponents (EV-optimal) | ceiling: win rate knowing the best final | ")
    print("|---|---:|---:|")
    for name, _rules, fig, tabs in rows:
        dist = fig.distribution
        start = tabs["tie"].vector(0, 0, False).astype(np.float64)
        w = np.zeros(len(dist))
        n = min(len(dist), len(start))
        w[:n] = start[:n]
        cdf = np.cumsum(dist)
        for k in (1, 3):
            best = np.diff(np.concatenate([[0.0], cdf**k]))  # P(max of k finals = b)
            print(f"| {name} | {k} | {100 * float(best @ w):.3f} % |")


def _frame(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "chunks").sort_values(["game", "seat"]).reset_index(drop=True)


def _shares(df: pd.DataFrame, seats: int) -> np.ndarray:
    """(games, seats) share of the win: 1 to a sole top score, 1/k each in a k-way top tie."""
    tot = df.total.to_numpy().reshape(-1, seats)
    top = tot == tot.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def _ci(ci) -> str:
    return f"{100 * ci.mean:.2f} % [{100 * ci.lo:.2f}, {100 * ci.hi:.2f}]"


def play(name: str, games: int, seats: int, seed: int, workers: int, base: Path) -> None:
    runs = []
    for pos in range(seats):
        lineup = ["solver"] * seats
        lineup[pos] = "winprob"
        out = base / f"{name}-{seats}-wp{pos}"
        t0 = time.perf_counter()
        run(RunConfig(seats=tuple(lineup), rules=name, games=games, seed=seed, workers=workers), out)
        secs = time.perf_counter() - t0
        runs.append((_shares(_frame(out), seats)[:, pos], secs))
        print(
            f"{name}: winprob in seat {pos + 1} of {seats}: {games:,} games in {secs:.1f} s "
            f"({games / secs:,.0f} games/s)",
            flush=True,
        )
    out = base / f"{name}-{seats}-solver"
    t0 = time.perf_counter()
    run(RunConfig(seats=("solver",) * seats, rules=name, games=games, seed=seed, workers=workers), out)
    secs = time.perf_counter() - t0
    print(f"{name}: solver in every seat: {games:,} games in {secs:.1f} s ({games / secs:,.0f} games/s)")
    fair = 1.0 / seats
    print("\n| rules | seats | winprob's seat | games | score rate (95 % CI) |")
    print("|---|---:|---|---:|---|")
    for pos, (x, _) in enumerate(runs):
        ci = mean_ci(x.astype(np.float64))
        print(f"| {name} | {seats} | {pos + 1} | {len(x):,} | {_ci(ci)} |")
    avg = np.mean([x for x, _ in runs], axis=0)  # per game: the mean over winprob's seats (same dice)
    ci = mean_ci(avg)
    print(f"| {name} | {seats} | average | {len(avg):,} | {_ci(ci)} |")
    if seats == 2:
        pair = np.rint((runs[0][0] + runs[1][0]) * 2).astype(int)  # 0..4 half-points per pair
        counts = np.bincount(pair, minlength=5)
        elo1 = float(elo_from_score(0.51))
        s = sprt_pentanomial(counts, 0.0, elo1)
        print(
            f"\nSPRT (pentanomial over {len(pair):,} game pairs) H0 50 % vs H1 51 %: LLR {s.llr:+.2f} "
            f"[{s.lower:.2f}, {s.upper:.2f}] -> {s.decision}; pairs {counts.tolist()}"
        )
    else:
        z = (ci.mean - fair) / max((ci.hi - ci.mean) / 1.959964, 1e-12)
        print(f"\nfair share {100 * fair:.0f} %: z = {z:+.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("tables")
    t.add_argument("--rules", default="scandinavian,standard,yahtzee")
    t.add_argument("--extrapolate", default="maxi", help="rule sets whose size and time are only estimated")
    p = sub.add_parser("play")
    p.add_argument("--rules", default="scandinavian")
    p.add_argument("--games", type=int, default=100_000)
    p.add_argument("--seats", type=int, default=2)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=None, help="where the runs go (default: a temporary directory)")
    args = ap.parse_args(argv)
    if args.what == "tables":
        tables(args.rules.split(","), [x for x in args.extrapolate.split(",") if x])
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-target-") as tmp:
        base = Path(args.out) if args.out else Path(tmp)
        for name in args.rules.split(","):
            play(name, args.games, args.seats, args.seed, args.workers, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())

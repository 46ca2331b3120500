"""Exact evaluation of the built-in solitaire bots (issue 19 item 6), on a rule set whose value table
(and, for target play, target table) is cached already.

    nice python benchmarks/bench_evaluate.py bots --rules scandinavian --bots timeout,greedy --games 1000000
    nice python benchmarks/bench_evaluate.py bots --rules scandinavian --bots solver:target=250 --games 200000 --warm
    nice python benchmarks/bench_evaluate.py pair --rules scandinavian --pair greedy,bonus --games 200000
    nice python benchmarks/bench_evaluate.py table --rules scandinavian --bots random,timeout,greedy,bonus,solver
    nice python benchmarks/bench_evaluate.py rows --rules scandinavian --bot solver:target=250 [--census]

``bots``: per bot one Markdown row. The evaluation runs in a process of its own under
``/usr/bin/time -v`` (``one`` below) with a cache directory holding links to the rule set's solver
tables only, so it is cold (no evaluation cache) from a cached value table: its time inside
``evaluate``, the process's CPU time (user + sys) and peak RSS. Then the time of the same
evaluation from the evaluation cache it wrote, and a seeded run of ``--games`` games
(``harness.play.runner.run``, one seat, ``--workers`` workers, seed 11; its wall time) checked against
the exact distribution: z of its mean in standard errors, chi-square p of its histogram (bins with
fewer than 5 expected games pooled).

``pair``: a seeded two-seat run (seed 13) of two bots, the sampled P(A wins) / P(draw) against the
exact ones (independent finals), with z of the sampled win rate.

``table``: ``yatzy-harness evaluate RULES --entrants ...`` (every pair, two seats) from a cold
evaluation cache, under ``/usr/bin/time -v``: wall, CPU, peak RSS, and its output.

``one RULES BOT``: one cold evaluation, its figures as JSON (what ``bots`` times).

``rows``: target play's cold evaluation (in this process, from the cached value and target tables),
counting the (state, points still needed) rows, those no live cell reaches and the rows whose turn
it works out (the others), beside the target table's cells: its CPU time per row is the figure a
faster kernel has to move. Then the thread CPU time inside each kernel: the turns
(``target_outcomes``), the pushes (``target_push``) and the tallies (``target_mass``). (The partial
sums its blocks send when split over workers: ``bench_target_split.py run``.) With
``--census`` (its counting runs inside the pass, in the times) also the rows of states whose upper bonus can no
longer be reached (the open upper boxes' best scores cannot lift the subtotal to the threshold, so
the state's future does not depend on its subtotal) and how many rows would be left if each
sheet's such states were one: what merging them would save.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _cold_cache(rules, where: Path, src: Path | None = None) -> Path:
    """A cache directory with links to the rule set's solver tables (value table, target and policy
    tables) in ``src`` (default: the cache directory now) and nothing else: evaluations there start
    cold. (A second cold cache made after the environment points at the first needs ``src``.)"""
    from harness.exact import solver as S

    src = S.cache_path(rules).parent if src is None else src
    where.mkdir(parents=True, exist_ok=True)
    for f in glob.glob(str(src / f"solve-{rules.digest[:40]}-v{S.FORMAT}*")):
        os.symlink(f, where / Path(f).name)
    return where


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[str, dict[str, float]]:
    """Run cmd under /usr/bin/time -v: (stdout, {wall, cpu, rss_mib})."""
    res = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{res.stderr[-3000:]}")
    err = res.stderr

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", err)
        if not m:
            raise SystemExit(f"/usr/bin/time gave no {name!r}")
        return m.group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return res.stdout, {"wall": wall, "cpu": cpu, "rss_mib": int(field("Maximum resident set size (kbytes)")) / 1024}


def _env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if cache is not None:
        env["YATZY_HARNESS_CACHE"] = str(cache)
    return env


def _totals(run_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(game, seat, total) of every row of a run's chunks."""
    import pyarrow.parquet as pq

    parts = [
        pq.read_table(f, columns=["game", "seat", "total"])
        for f in sorted(glob.glob(str(run_dir / "chunks" / "*.parquet")))
    ]
    col = lambda n: np.concatenate([p.column(n).to_numpy() for p in parts])  # noqa: E731
    return col("game"), col("seat"), col("total").astype(np.int64)


def one(rules_name: str, bot: str) -> None:
    from harness.exact import evaluate as E
    from harness.game.rules import load_rules
    from harness.exact.solver import solve

    rules = load_rules(rules_name)
    solve(rules)
    ev = E.evaluate(rules, bot)
    assert not ev.cached, f"{bot}: the evaluation cache was not cold"
    print(json.dumps({"bot": ev.bot, "mean": ev.mean, "std": ev.std, "seconds": ev.seconds}))


def bots(a: argparse.Namespace) -> None:
    from harness.exact import evaluate as E
    from harness.game.rules import load_rules
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from harness.exact.solver import solve
    from tests.test_evaluate import chi_square_p

    rules = load_rules(a.rules)
    solve(rules)
    print(
        "| bot | exact mean | std | evaluation, cold (s) | its process: CPU (s) / peak RSS | from cache (s) "
        f"| run of {a.games:,} games (s) | sampled mean | z | chi-square p |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for bot in a.bots.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if a.warm:  # the evaluation from the user's cache (made there if missing): the sampled check only
                ev = E.evaluate(rules, bot)
                row = [bot, f"{ev.mean:.6f}", f"{ev.std:.4f}", "", "", f"{ev.seconds:.3f}" if ev.cached else ""]
            else:
                cache = _cold_cache(rules, Path(tmp) / "cache")
                out, t = _timed([sys.executable, __file__, "one", a.rules, bot], _env(cache))
                got = json.loads(out.strip().splitlines()[-1])
                t0 = time.perf_counter()
                ev = E.evaluate(rules, bot, cache)
                t_cache = time.perf_counter() - t0
                assert ev.cached and ev.mean == got["mean"]
                row = [
                    bot,
                    f"{ev.mean:.6f}",
                    f"{ev.std:.4f}",
                    f"{got['seconds']:.1f}",
                    f"{t['cpu']:.1f} / {t['rss_mib']:,.0f} MiB",
                    f"{t_cache:.3f}",
                ]
            if a.games:
                t0 = time.perf_counter()
                d = run(
                    RunConfig(seats=(bot,), rules=a.rules, games=a.games, workers=a.workers, seed=11), Path(tmp) / "run"
                )
                t_run = time.perf_counter() - t0
                s = _totals(d)[2]
                z = (s.mean() - ev.mean) / (ev.std / math.sqrt(len(s)))
                row += [f"{t_run:.1f}", f"{s.mean():.3f}", f"{z:+.2f}", f"{chi_square_p(s, ev.distribution):.3f}"]
            else:
                row += ["", "", "", ""]
        print("| " + " | ".join(row) + " |", flush=True)


def pair(a: argparse.Namespace) -> None:
    from harness.exact import evaluate as E
    from harness.game.rules import load_rules
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    rules = load_rules(a.rules)
    A, B = a.pair.split(",")
    ea, eb = E.evaluate(rules, A), E.evaluate(rules, B)
    win, draw, loss = E.versus(ea, eb)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        d = run(RunConfig(seats=(A, B), rules=a.rules, games=a.games, workers=a.workers, seed=13), Path(tmp) / "run")
        t_run = time.perf_counter() - t0
        game, seat, total = _totals(d)
    order = np.lexsort((seat, game))
    ta, tb = total[order][0::2], total[order][1::2]
    n = len(ta)
    sw, sd = float(np.mean(ta > tb)), float(np.mean(ta == tb))
    z = (sw - win) / math.sqrt(win * (1 - win) / n)
    print(f"| {A} vs {B} | {n:,} | {sw:.5f} | {win:.5f} | {z:+.2f} | {sd:.5f} | {draw:.5f} | {t_run:.1f} |")


def rows(a: argparse.Namespace) -> None:
    import threading

    from harness.exact import evaluate as E
    from harness.exact.kernels import target as TK
    from harness.game.rules import load_rules
    from harness.exact.solver import solve
    from harness.exact.target import cached_tmax, target_table

    rules = load_rules(a.rules)
    solve(rules)
    strat = E.solitaire_bot(rules, a.bot)
    tp = strat.target_play()
    if tp is None:
        raise SystemExit(f"{a.bot} does not play for a target")
    cells = target_table(rules, "target", cached_tmax(rules, "target", tp.target)).values.size
    count = {"rows": 0, "live states": 0, "rows without mass": 0, "rows worked out": 0}
    spent = {"turns": 0.0, "pushes": 0.0, "tallies": 0.0, "counting": 0.0}  # thread CPU seconds, summed
    lock = threading.Lock()
    kernels = TK.target_outcomes, TK.target_push, TK.target_mass

    def timed(name, kernel):
        def run(*args):
            t0 = time.thread_time()
            kernel(*args)
            with lock:
                spent[name] += time.thread_time() - t0

        return run

    def turns(*args):  # the kernel's c_n (in its states), lo, hi: the rows of runs lo..hi-1
        with lock:
            count["rows worked out"] += int(args[6][5][args[7] : args[8]].sum())
        timed("turns", kernels[0])(*args)

    def tallies(lay, oc, st_u, c_n, row0, outp, m, *rest):  # a chunk's states and the masses of its rows
        t0 = time.thread_time()
        count["rows"] += int(c_n.sum())
        count["live states"] += len(c_n)
        count["rows without mass"] += int(np.sum(m == 0.0))
        spent["counting"] += time.thread_time() - t0  # not the evaluation's: taken off its CPU time
        timed("tallies", kernels[2])(lay, oc, st_u, c_n, row0, outp, m, *rest)

    pushes = timed("pushes", kernels[1])
    TK.target_outcomes, TK.target_push, TK.target_mass = turns, pushes, tallies
    row_mass = TK.row_mass
    if a.census:
        dead, sheet = _bonus_dead(rules)
        census = {"rows in bonus-dead states": 0}
        merged: list[np.ndarray] = []

        def counted(off, target, run_shift, live, jlo, jhi, start, c_lo, row0, wlo, woff, D, m):
            row_mass(off, target, run_shift, live, jlo, jhi, start, c_lo, row0, wlo, woff, D, m)
            g = live + start
            q = np.repeat(np.arange(len(live)), np.diff(np.append(row0, len(m))))
            pick = (m != 0.0) & dead[g[q]]  # the rows with mass of the bonus-dead states
            t = c_lo[q[pick]] + np.flatnonzero(pick) - row0[q[pick]]
            census["rows in bonus-dead states"] += int(pick.sum())
            merged.append(np.unique(sheet[g[q[pick]]] * (1 << 20) + t))  # a sheet's state has a layer

        TK.row_mass = counted
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cpu0 = time.process_time()
            ev = E.evaluate(rules, a.bot, _cold_cache(rules, Path(tmp) / "cache"))
            cpu = time.process_time() - cpu0 - spent.pop("counting")
    finally:
        TK.target_outcomes, TK.target_push, TK.target_mass = kernels
        TK.row_mass = row_mass
    n = count["rows"]
    print(
        "| bot | exact mean | live states | (state, target) rows | rows without mass | rows worked out "
        "| target table cells | evaluation (s) | CPU (s) | CPU per row (us) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {a.bot} | {ev.mean:.6f} | {count['live states']:,} | {n:,} | {count['rows without mass']:,} "
        f"({100 * count['rows without mass'] / n:.1f} %) | {count['rows worked out']:,} | {cells:,} "
        f"| {ev.seconds:.1f} | {cpu:.1f} | {1e6 * cpu / n:.1f} |"
    )
    print("\nCPU inside each kernel, summed over the threads:")
    for name, t in spent.items():
        print(f"  {name}: {t:.1f} s, {1e6 * t / n:.2f} us a row")
    if a.census:
        worked = count["rows worked out"]
        census["their rows once merged"] = len(np.unique(np.concatenate(merged))) if merged else 0
        print(
            f"\nbonus-dead states: {int(dead.sum()):,} of {len(dead):,}; their rows worked out "
            f"{census['rows in bonus-dead states']:,} ({100 * census['rows in bonus-dead states'] / worked:.1f} %), "
            f"{census['their rows once merged']:,} once each sheet's are one state: merging would remove "
            f"{census['rows in bonus-dead states'] - census['their rows once merged']:,} rows "
            f"({100 * (census['rows in bonus-dead states'] - census['their rows once merged']) / worked:.1f} %)"
        )


def _bonus_dead(rules) -> tuple[np.ndarray, np.ndarray]:
    """(dead, sheet) per solver state: dead where the upper bonus can no longer be reached (the
    subtotal plus the open upper boxes' best scores stays below the threshold, the upper section
    not full), sheet the state's (mask, flag) key."""
    from harness.exact.solver import build_plan

    plan = build_plan(rules)
    lay = plan.layout
    mask, flag, _, u = plan.states()
    most = np.zeros(len(mask), np.int64)  # the open upper boxes' best scores
    for b in np.flatnonzero(lay.is_upper):
        most += np.where((mask >> b) & 1, 0, lay.box_vals[b, lay.box_nvals[b] - 1])
    dead = (lay.bonus > 0) & (u + most < lay.threshold) & (lay.umask_of[mask] != lay.full_upper)
    return dead, mask * lay.n_flags + flag


def table(a: argparse.Namespace) -> None:
    from harness.game.rules import load_rules

    rules = load_rules(a.rules)
    with tempfile.TemporaryDirectory() as tmp:
        cache = _cold_cache(rules, Path(tmp) / "cache")
        out, t = _timed([sys.executable, "-m", "harness.cli", "evaluate", a.rules, "--entrants", a.bots], _env(cache))
    print(out)
    print(f"wall {t['wall']:.1f} s, CPU {t['cpu']:.1f} s, peak RSS {t['rss_mib']:,.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("bots")
    p.add_argument("--rules", default="scandinavian")
    p.add_argument(
        "--bots", default="timeout,greedy,bonus,random,solver,solver:temperature=1,solver:blunder=0.1,solver:target=250"
    )
    p.add_argument("--games", type=int, default=1_000_000, help="games of the sampled run (0: none)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--warm",
        action="store_true",
        help="no cold evaluation: take each bot's evaluation from the cache (made if missing) and "
        "run the sampled check only",
    )
    p = sub.add_parser("pair")
    p.add_argument("--rules", default="scandinavian")
    p.add_argument("--pair", default="greedy,bonus")
    p.add_argument("--games", type=int, default=200_000)
    p.add_argument("--workers", type=int, default=2)
    p = sub.add_parser("table")
    p.add_argument("--rules", default="scandinavian")
    p.add_argument("--bots", default="random,timeout,greedy,bonus,solver")
    p = sub.add_parser("rows")
    p.add_argument("--rules", default="scandinavian")
    p.add_argument("--bot", default="solver:target=250")
    p.add_argument(
        "--census",
        action="store_true",
        help="also count the rows of bonus-dead states and what merging them would save (slower)",
    )
    p = sub.add_parser("one")
    p.add_argument("rules")
    p.add_argument("bot")
    a = ap.parse_args()
    if a.what == "one":
        one(a.rules, a.bot)
    else:
        {"bots": bots, "pair": pair, "table": table, "rows": rows}[a.what](a)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()

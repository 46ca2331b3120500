"""What the game-quality metrics cost: following the lead in the engine, the three row columns, the report section.

* engine: the kernel alone (``Leads`` over 15 rounds of a batch), then games/s of one ``engine.play`` batch (``--batch`` games, two seats, scandinavian, warm
  caches) with ``leads=True`` (the default: lead changes, last round behind, deficit after round 10)
  and ``leads=False``, interleaved, best of ``--repeat``;
* rows: Parquet bytes of one chunk (``worker.to_parquet``) with and without the columns
  ``lead_changes``, ``last_behind``, ``deficit``, and the time to build and write it;
* report: ``summarize`` of a ``--games`` run (played once under ``--dir``, ``timeout,random``) with
  every section and without :class:`harness.reports.summary.QualitySection`, best of ``--repeat``.

    python benchmarks/bench_quality.py --batch 50000 --games 1000000 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def engine(bots: list[str], batch: int, repeat: int) -> None:
    import numpy as np

    from harness.game.loop import play
    from harness.game.registry import make
    from harness.game.rules import load_rules

    rules = load_rules("scandinavian")
    print("| seats | leads | best games/s | median games/s |")
    print("|---|---|---:|---:|")
    for bot in bots:
        seats = [make(bot, rules), make(bot, rules)]
        for s in seats:
            s.prepare()
        games = np.arange(batch, dtype=np.int64)
        play(rules, seats, games, 1)  # warm the bots' caches and the kernels
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(repeat):
            for leads in (True, False):
                t = time.perf_counter()
                play(rules, seats, games, 1, leads=leads)
                times[leads].append(time.perf_counter() - t)
        for leads in (True, False):
            ts = sorted(times[leads])
            print(
                f"| {bot} vs {bot} | {'on' if leads else 'off'} | {batch / ts[0]:,.0f} | "
                f"{batch / ts[len(ts) // 2]:,.0f} |"
            )


def kernel(batch: int, repeat: int) -> None:
    """The lead-following itself: ``Leads.update`` over the 15 rounds of ``batch`` two-seat games
    (running scores drawn like a game's: 0..29 points a turn), best of ``repeat``."""
    import numpy as np

    from harness.game.loop import Leads

    rng = np.random.default_rng(1)
    scores = np.cumsum(rng.integers(0, 30, (15, batch, 2)), axis=0).astype(np.int32)
    Leads(1, 2, 15).update(scores[0][:1])  # compile
    best = 1e9
    for _ in range(repeat):
        t = time.perf_counter()
        lead = Leads(batch, 2, 15)
        for r in range(15):
            lead.update(scores[r])
        best = min(best, time.perf_counter() - t)
    print(
        f"Leads over 15 rounds of {batch:,} two-seat games: {best * 1e3:.1f} ms (best of {repeat}), "
        f"{best / batch * 1e6:.3f} µs a game"
    )


def rows(batch: int, repeat: int) -> None:
    import dataclasses

    import numpy as np

    from harness.game.loop import play
    from harness.game.registry import make
    from harness.game.rules import load_rules
    from harness.play.worker import to_parquet

    rules = load_rules("scandinavian")
    seats = [make("greedy", rules), make("greedy", rules)]
    res = play(rules, seats, np.arange(batch, dtype=np.int64), 1)
    bare = dataclasses.replace(res, lead_changes=None, last_behind=None, deficit=None)
    print("| rows of one chunk | bytes | bytes per million rows | to_parquet (s, best) |")
    print("|---|---:|---:|---:|")
    for name, r in (("with the three columns", res), ("without", bare)):
        best, size = 1e9, 0
        for _ in range(repeat):
            t = time.perf_counter()
            data, n = to_parquet(r, 0, ["greedy"])
            best = min(best, time.perf_counter() - t)
            size = len(data)
        print(f"| {name} ({n:,} rows) | {size:,} | {size / n * 1e6 / 2**20:.2f} MiB | {best:.3f} |")


def report(run: Path, games: int, repeat: int) -> None:
    from harness.reports.summary import SECTIONS, QualitySection, summarize

    if not (run / "manifest.json").is_file() or not json.loads((run / "manifest.json").read_text()).get("complete"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "run",
                "--seats",
                "timeout,random",
                "--games",
                str(games),
                "--seed",
                "1",
                "--workers",
                "2",
                "--out",
                str(run),
                "--quiet",
            ],
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    without = tuple(s for s in SECTIONS if s is not QualitySection)
    summarize(run, sections=without)  # warm the page cache
    print(f"| report of {games:,} two-seat games ({2 * games:,} rows) | best (s) | median (s) |")
    print("|---|---:|---:|")
    times: dict[str, list[float]] = {"every section": [], "without QualitySection": [], "QualitySection alone": []}
    for _ in range(repeat):
        for name, secs in (
            ("every section", SECTIONS),
            ("without QualitySection", without),
            ("QualitySection alone", (QualitySection,)),
        ):
            t = time.perf_counter()
            summarize(run, sections=secs)
            times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        ts.sort()
        print(f"| {name} | {ts[0]:.2f} | {ts[len(ts) // 2]:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bots", default="random,greedy,timeout")
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--games", type=int, default=1_000_000, help="games of the run the report reads")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=str(ROOT / "results" / "bench-quality"))
    ap.add_argument("--only", choices=["engine", "rows", "report"])  # engine includes the kernel
    a = ap.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[0]}\n")
    if a.only in (None, "engine"):
        kernel(a.batch, a.repeat)
        print()
        engine(a.bots.split(","), a.batch, a.repeat)
        print()
    if a.only in (None, "rows"):
        rows(a.batch, a.repeat)
        print()
    if a.only in (None, "report"):
        report(Path(a.dir) / f"run-{a.games}", a.games, a.repeat)


if __name__ == "__main__":
    main()

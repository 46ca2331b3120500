"""What the sub-batch journal (Ctrl-C keeps what was played, issue 49) costs a run.

Plays the same run three ways, in turn, each in a fresh interpreter (imports not timed; set-up,
warm-up game, pool, Parquet and the journal's files are): ``off``, the runner before the journal
(``harness.play.runner.JOURNAL = False``: a quiet run plays each chunk as one batch); ``dry``, the
journal's sub-batches of ~2 s without writing them (``journal.save`` does nothing); ``on``, the
journal as shipped. ``on`` against ``dry`` is what writing the journal costs; ``on`` against
``off`` what the change costs a run altogether. Prints one Markdown row per chunk size: median
wall and CPU seconds (this process and its workers), the differences, and the bytes written. Fast
bots are the journal's worst case: the most games, so the most bytes, per second of play.

    python benchmarks/bench_journal.py                              # 1,000,000 games, random vs random
    python benchmarks/bench_journal.py --games 1000000 --chunks 50000,500000 --workers 2 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one(games: int, chunk: int, workers: int, bots: str, mode: str) -> dict[str, float]:
    """One run in this process: wall seconds, CPU seconds (this process and its workers), journal
    bytes, and (what this process plays itself, so with one worker) the CPU seconds inside the
    game loop (``play``), joining a chunk's sub-batches (``concat_results``) and ``journal.save``."""
    from harness.play import journal, runner, worker

    written = [0, 0.0, 0.0]  # bytes, wall and CPU seconds inside journal.save (this process's)
    inside = {"play": 0.0, "concat_results": 0.0}
    save = journal.save

    def counting_save(run_dir, lineup, part):  # times and counts the writes the runner makes
        t0, c0 = time.perf_counter(), time.thread_time()
        save(run_dir, lineup, part)
        written[1] += time.perf_counter() - t0
        written[2] += time.thread_time() - c0
        written[0] += (
            (Path(run_dir) / journal.JOURNAL_DIR / journal.part_name(lineup, part.start, part.stop)).stat().st_size
        )

    def timed(name):
        fn = getattr(worker, name)

        def call(*args, **kwargs):
            c0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                inside[name] += time.thread_time() - c0

        setattr(worker, name, call)

    for name in inside:
        timed(name)
    journal.save = counting_save if mode == "on" else (lambda run_dir, lineup, part: None)
    runner.JOURNAL = mode != "off"
    cfg = runner.RunConfig(
        seats=(bots, bots), rules="scandinavian", games=games, seed=1, chunk_size=chunk, workers=workers
    )
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        runner.run(cfg, Path(tmp) / "run")
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime) + c1.ru_utime + c1.ru_stime
    # (forked workers' writes are not counted here: :func:`inside` plays in this process)
    return {
        "wall": wall,
        "cpu": cpu,
        "bytes": written[0],
        "save_wall": written[1],
        "save_cpu": written[2],
        "play_cpu": inside["play"],
        "concat_cpu": inside["concat_results"],
    }


def measure(games: int, chunk: int, workers: int, bots: str, mode: str) -> dict[str, float]:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); from benchmarks.bench_journal import one; "
        f"print(json.dumps(one({games}, {chunk}, {workers}, {bots!r}, {mode!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def inside(games: int, chunk: int, bots: str, mode: str = "on") -> dict[str, float]:
    """The run with one worker, in this process, so that the CPU time of the game loop, of joining
    the sub-batches and of writing the journal can be taken apart from the rest."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); from benchmarks.bench_journal import one; "
        f"print(json.dumps(one({games}, {chunk}, 1, {bots!r}, {mode!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--chunks", default="50000,500000", help="chunk sizes, comma-separated")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bots", default="random")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M %Z')}, {platform.node()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| chunk | games | workers | wall off / dry / on (s) | on vs dry | on vs off "
        "| CPU off / dry / on (s) | on vs dry | on vs off | journal written | 1 worker: CPU in the game loop off / on "
        "| 1 worker: CPU joining sub-batches + writing the journal (share of the run's) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for chunk in (int(x) for x in a.chunks.split(",")):
        got: dict[str, list[dict[str, float]]] = {"off": [], "dry": [], "on": []}
        for _ in range(a.repeat):  # in turn, so a change of load hits every mode alike
            for mode in got:
                got[mode].append(measure(a.games, chunk, a.workers, a.bots, mode))
        w = {m: statistics.median(x["wall"] for x in r) for m, r in got.items()}
        c = {m: statistics.median(x["cpu"] for x in r) for m, r in got.items()}
        ins: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
        for _ in range(a.repeat):
            for mode in ins:
                ins[mode].append(inside(a.games, chunk, a.bots, mode))
        med = lambda mode, k: statistics.median(x[k] for x in ins[mode])  # noqa: E731
        own = statistics.median(x["concat_cpu"] + x["save_cpu"] for x in ins["on"])
        pct = lambda d, x, y: f"{100 * (d[x] / d[y] - 1):+.1f} %"  # noqa: E731
        print(
            f"| {chunk:,} | {a.games:,} | {a.workers} | {w['off']:.1f} / {w['dry']:.1f} / {w['on']:.1f} "
            f"| {pct(w, 'on', 'dry')} | {pct(w, 'on', 'off')} | {c['off']:.1f} / {c['dry']:.1f} / {c['on']:.1f} "
            f"| {pct(c, 'on', 'dry')} | {pct(c, 'on', 'off')} | {med('on', 'bytes') / 2**20:.0f} MiB "
            f"| {med('off', 'play_cpu'):.2f} / {med('on', 'play_cpu'):.2f} s "
            f"| {own:.3f} s ({100 * own / med('on', 'cpu'):.2f} %) |",
            flush=True,
        )


if __name__ == "__main__":
    main()

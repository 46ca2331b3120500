"""Peak memory of a long run: the runner streams chunks, so memory must not grow with the games.

Plays ``--games`` (default 10,000,000) two-seat games through :func:`harness.play.runner.run` while a
thread samples the resident memory of this process plus all its worker processes every 0.2 s
(psutil). Prints the peak of that sum, the peak of the summed PSS (proportional set size: pages
shared after the fork, such as the solver bot's keep policy, counted once in all), the parent's
and the largest child's ``ru_maxrss``, and the RSS at 10 %, 50 % and 100 % of the run (flat =
streaming).

    python benchmarks/bench_memory.py --games 10000000 --workers 2 > /tmp/mem.txt 2>&1 &
"""

from __future__ import annotations

import argparse
import platform
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.play.runconfig import DEFAULT_CHUNK_SIZE, RunConfig  # noqa: E402
from harness.play.runner import run  # noqa: E402

MiB = 1024 * 1024


class Sampler(threading.Thread):
    """Samples RSS of this process + descendants; keeps the peak and a coarse time line."""

    def __init__(self, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.every, self.peak, self.peak_pss, self.samples = every, 0, 0, []
        self.stop = threading.Event()
        self.me = psutil.Process()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.is_set():
            total = pss = 0
            for p in [self.me, *self.me.children(recursive=True)]:
                try:
                    full = p.memory_full_info()  # reads smaps: rss and pss
                    total += full.rss
                    pss += getattr(full, "pss", full.rss)
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.peak_pss = max(self.peak_pss, pss)
            self.samples.append((time.monotonic() - t0, total))
            self.stop.wait(self.every)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000_000)
    ap.add_argument("--seats", default="random,random")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE)
    ap.add_argument("--keep", metavar="DIR", help="write the run here and keep it (default: a temp dir, removed)")
    args = ap.parse_args(argv)
    cfg = RunConfig(
        seats=tuple(args.seats.split(",")),
        rules=args.rules,
        games=args.games,
        seed=1,
        chunk_size=args.chunk_size,
        workers=args.workers,
    )
    tmp = None if args.keep else Path(tempfile.mkdtemp(prefix="bench-memory-"))
    out = Path(args.keep) if args.keep else tmp / "run"
    sampler = Sampler()
    sampler.start()
    t = time.perf_counter()
    try:
        run(cfg, out)
        dt = time.perf_counter() - t
        size = sum(p.stat().st_size for p in (out / "chunks").iterdir())
    finally:
        sampler.stop.set()
        sampler.join()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    s = sampler.samples

    def at(frac: float) -> float:
        return s[min(len(s) - 1, int(frac * (len(s) - 1)))][1] / MiB

    print(
        f"{time.strftime('%Y-%m-%d')} {platform.node()} python {platform.python_version()}: "
        f"{args.seats} on {args.rules}, {args.games:,} games, workers {args.workers}, chunk {args.chunk_size}"
    )
    print(f"wall {dt:.0f} s ({args.games / dt:,.0f} games/s); Parquet {size / MiB:.0f} MiB")
    print(
        f"peak RSS parent + workers (sampled): {sampler.peak / MiB:.0f} MiB; "
        f"peak PSS (shared pages counted once): {sampler.peak_pss / MiB:.0f} MiB"
    )
    print(f"ru_maxrss parent {me / MiB:.0f} MiB, largest worker {kids / MiB:.0f} MiB")
    print(f"RSS sum at 10% / 50% / 100% of the run: {at(0.1):.0f} / {at(0.5):.0f} / {at(1.0):.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The first run after install: wall time with empty kernel and table caches, and its silences.

Each repetition points numba's kernel cache (``NUMBA_CACHE_DIR``) and the harness's cache
(``YATZY_HARNESS_CACHE``) at fresh empty folders, then runs the command under a
pseudo-terminal of 100 x 30 (as a user's terminal: progress is drawn) and records when each
piece of output arrived. Prints per run the wall time and the longest stretch with nothing
written (the "not silent" rule: no gap over 2 s), then the median wall time; ``--show`` prints
the last run's output lines with their times.

    python benchmarks/bench_first_run.py                          # run --seats solver,greedy --games 2000, 3 times
    python benchmarks/bench_first_run.py --repeat 3 -- run        # the README's first command
    python benchmarks/bench_first_run.py --repeat 1 --show -- evaluate scandinavian --entrants greedy
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["run", "--seats", "solver,greedy", "--games", "2000"]


def run_once(argv: list[str]) -> tuple[float, float, list[tuple[float, str]]]:
    """(wall seconds, longest silence, [(time, text)]) of one cold run under a pseudo-terminal."""
    cache = tempfile.mkdtemp(prefix="first-run-cache-")
    kernels = tempfile.mkdtemp(prefix="first-run-kernels-")
    work = tempfile.mkdtemp(prefix="first-run-cwd-")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "YATZY_HARNESS_CACHE": cache, "NUMBA_CACHE_DIR": kernels, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "harness.cli", *argv]  # this checkout's code (PYTHONPATH), installed or not
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out: list[tuple[float, str]] = []
    last, gap = t0, 0.0
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                break
            now = time.monotonic()
            gap, last = max(gap, now - last), now
            out.append((now - t0, data.decode(errors="replace")))
        elif proc.poll() is not None:
            break
    proc.wait()
    wall = time.monotonic() - t0
    gap = max(gap, time.monotonic() - last)
    os.close(master)
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(kernels, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return wall, gap, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--show", action="store_true", help="print the last run's output with its times")
    ap.add_argument("argv", nargs="*", help="the command (after --); default: " + " ".join(DEFAULT))
    args = ap.parse_args()
    argv = args.argv or DEFAULT
    walls = []
    print(f"yatzy-harness {' '.join(argv)}   (load average {os.getloadavg()[0]:.2f} at start)")
    for i in range(args.repeat):
        wall, gap, out = run_once(argv)
        walls.append(wall)
        print(f"run {i + 1}: {wall:.1f} s wall, longest silence {gap:.1f} s")
    print(f"median wall: {statistics.median(walls):.1f} s")
    if args.show:
        for t, text in out:
            for piece in re.split(r"[\r\n]+", text):
                if piece.strip():
                    print(f"  {t:6.1f} s  {piece.strip()[:110]}")


if __name__ == "__main__":
    main()

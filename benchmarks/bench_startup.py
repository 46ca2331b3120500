"""How long the command line takes to start: whole processes, the way a user types them.

Each command runs ``--runs`` times as a fresh process (``sys.executable -m harness.cli ...``, the
same code as the ``yatzy-harness`` script), after one warm-up run that also warms numba's cache;
prints the minimum, median and maximum wall time and which heavy libraries the command loaded.

    python benchmarks/bench_startup.py --runs 11
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (
    ["--version"],
    ["--help"],
    ["score", "--help"],
    ["run", "--help"],
    ["compare", "--help"],
    ["calibrate", "--help"],
    ["score", "scandinavian", "6", "6", "4", "4", "1"],
    ["rules", "scandinavian"],
)

HEAVY = ("numpy", "numba", "pandas", "pyarrow", "scipy", "matplotlib")

PROBE = ("import sys, runpy; sys.argv = ['yatzy-harness'] + sys.argv[1:]\n"
         "try:\n    runpy.run_module('harness.cli', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         f"print(','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")


def loaded(argv: list[str]) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True)
    return out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness.cli", *argv], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    print(f"| command | min (s) | median (s) | max (s) | heavy libraries loaded |\n|---|---:|---:|---:|---|")
    for argv in COMMANDS:
        timed(argv)  # warm-up: page cache, numba's on-disk cache
        t = [timed(argv) for _ in range(args.runs)]
        print(f"| `yatzy-harness {' '.join(argv)}` | {min(t):.3f} | {statistics.median(t):.3f} | {max(t):.3f} | "
              f"{loaded(argv) or 'none'} |", flush=True)


if __name__ == "__main__":
    main()

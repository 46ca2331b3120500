"""How long the command line takes to start: whole processes, the way a user types them.

Each command runs ``--runs`` times as a fresh process (``python -m harness.cli ...``, the same code
as the ``yatzy-harness`` script) after one untimed warm-up run (page cache, numba's on-disk cache),
alternating the trees given with ``--tree`` (each tree's code on ``PYTHONPATH``: an old checkout
against this one, e.g. ``git worktree add /tmp/before REV``; each runs from its own tree, since
``python -m`` puts the working directory before ``PYTHONPATH``). Prints the median wall time and the
median CPU time (user + system, the child's own accounting: on a busy machine it stays close to what
an idle machine's wall clock shows) per command and tree, and which heavy libraries each loads.

    python benchmarks/bench_startup.py --runs 7 --tree /tmp/before --tree .
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

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


def env_of(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def loaded(tree: Path, argv: list[str]) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env_of(tree),
                         cwd=tree)
    lines = out.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def timed(tree: Path, argv: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness.cli", *argv], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, env=env_of(tree), cwd=tree)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree", action="append", type=Path, help="a checkout to time (repeatable; default: this one)")
    args = ap.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parent.parent])]
    print(f"load average {os.getloadavg()[0]:.1f} at the start; median of {args.runs} runs")
    head = " | ".join(f"{t.name}: wall (s) | {t.name}: CPU (s) | {t.name}: loads" for t in trees)
    print(f"| command | {head} |\n|---|" + "---:|---:|---|" * len(trees))
    for argv in COMMANDS:
        for t in trees:
            timed(t, argv)  # warm-up
        runs: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
        for _ in range(args.runs):
            for t in trees:  # alternating, so that the machine's drift hits every tree alike
                runs[t].append(timed(t, argv))
        cells = []
        for t in trees:
            wall = statistics.median(w for w, _ in runs[t])
            cpu = statistics.median(c for _, c in runs[t])
            cells.append(f"{wall:.2f} | {cpu:.2f} | {loaded(t, argv) or 'none'}")
        print(f"| `yatzy-harness {' '.join(argv)}` | " + " | ".join(cells) + " |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

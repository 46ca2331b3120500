"""How long the command line takes to start: whole processes, the way a user types them.

Each command runs ``--runs`` times as a fresh process (``python -m harness.cli ...``, the same code
as the ``yatzy-harness`` script) after one untimed warm-up run (page cache, numba's on-disk cache),
alternating the trees given with ``--tree`` (each tree's code on ``PYTHONPATH``: an old checkout
against this one, e.g. ``git worktree add /tmp/before REV``; each runs from its own tree, since
``python -m`` puts the working directory before ``PYTHONPATH``). Prints the median wall time and the
median CPU time (user + system, the child's own accounting: on a busy machine it stays close to what
an idle machine's wall clock shows) per command and tree, and which heavy libraries each loads.
With two trees it also gives the median of the pairs' CPU ratios (second tree / first) and each
tree's largest peak RSS. ``--command`` replaces the built-in list (repeatable; ``{tree}`` in it
becomes the tree's name, so that each tree can write its own output file). The children run
without ``PYTHONDONTWRITEBYTECODE``, so the warm-up writes the bytecode caches an installed
package has.

    python benchmarks/bench_startup.py --runs 7 --tree /tmp/before --tree .
    python benchmarks/bench_startup.py --runs 7 --tree /tmp/before --tree . \
        --command "review results/scand10k --game 1 --out /tmp/{tree}.html"
"""

from __future__ import annotations

import argparse
import os
import shlex
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

PROBE = (
    "import sys, runpy; sys.argv = ['yatzy-harness'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('harness.cli', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    f"print(','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
)


def env_of(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree)}


def loaded(tree: Path, argv: list[str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env_of(tree), cwd=tree
    )
    lines = out.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def timed(tree: Path, argv: list[str]) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of one run (the child's own accounting, ``wait4``)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env_of(tree),
        cwd=tree,
    )
    _, _, use = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped by wait4
    wall = time.perf_counter() - t0
    return wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree", action="append", type=Path, help="a checkout to time (repeatable; default: this one)")
    ap.add_argument(
        "--command",
        action="append",
        metavar="ARGS",
        help="a command line to time instead of the built-in list (repeatable; {tree}: the tree's name)",
    )
    args = ap.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parent.parent])]
    commands = [shlex.split(c) for c in args.command] if args.command else [list(c) for c in COMMANDS]
    print(f"load average {os.getloadavg()[0]:.1f} at the start; median of {args.runs} runs")
    head = " | ".join(f"{t.name}: wall (s) | {t.name}: CPU (s) | {t.name}: loads" for t in trees)
    pair = len(trees) == 2
    print(
        f"| command | {head} |{' CPU ratio (range) | peak RSS (MiB) |' if pair else ''}\n|---|"
        + "---:|---:|---|" * len(trees)
        + ("---:|---:|" if pair else "")
    )
    for template in commands:
        argvs = {t: [a.replace("{tree}", t.name) for a in template] for t in trees}
        for t in trees:
            timed(t, argvs[t])  # warm-up
        runs: dict[Path, list[tuple[float, float, float]]] = {t: [] for t in trees}
        for _ in range(args.runs):
            for t in trees:  # alternating, so that the machine's drift hits every tree alike
                runs[t].append(timed(t, argvs[t]))
        cells = []
        for t in trees:
            wall = statistics.median(r[0] for r in runs[t])
            cpu = statistics.median(r[1] for r in runs[t])
            cells.append(f"{wall:.2f} | {cpu:.2f} | {loaded(t, argvs[t]) or 'none'}")
        if pair:
            a, b = (runs[t] for t in trees)
            ratios = [y[1] / x[1] for x, y in zip(a, b)]
            cells.append(
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
                + " / ".join(f"{max(r[2] for r in runs[t]):,.0f}" for t in trees)
            )
        print(f"| `yatzy-harness {shlex.join(template)}` | " + " | ".join(cells) + " |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

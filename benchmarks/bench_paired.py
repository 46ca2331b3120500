"""Paired whole-process timing of one ``yatzy-harness`` command: this checkout against another
(the code before a change), alternating, from cold evaluation caches (issue 53's costs of fixed-order
sums and of the harness's own exp).

    git worktree add /tmp/before <commit>       # or: git archive <commit> | tar -x -C /tmp/before
    python benchmarks/bench_paired.py --before /tmp/before --tables CACHE --rounds 5 -- \\
        evaluate scandinavian --entrants timeout --json

Each round runs the command once with each checkout's code (``python -m harness.cli`` with it on
``PYTHONPATH``), in an order that alternates between rounds, each in a fresh cache directory that
holds links to the solver tables (``solve-*.bin``) of ``--tables`` only, so every evaluation is
cold and no table is solved. ``{out}`` in the command is replaced by a fresh directory (a run's
``--out``). One warm-up run of each first (numba's caches). Prints per checkout the median wall
time and the CPU time (user + sys of the process and its children) of every run, and the median
of the rounds' CPU ratios, this checkout over the other: the figure to read on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def once(code: Path, argv: list[str], tables: Path, cwd: Path) -> tuple[float, float]:
    cache = Path(tempfile.mkdtemp(prefix="bench-paired-"))
    try:
        for f in tables.glob("solve-*.bin"):
            (cache / f.name).symlink_to(f.resolve())
        argv = [a.replace("{out}", str(cache / "out")) for a in argv]
        env = {**os.environ, "PYTHONPATH": str(code), "YATZY_HARNESS_CACHE": str(cache)}
        before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", *argv], cwd=cwd, env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (the code before the change)")
    ap.add_argument("--tables", type=Path, required=True, help="a cache directory holding the solver tables")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the yatzy-harness command, without its name")
    args = ap.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    cwd = Path(tempfile.mkdtemp(prefix="bench-paired-cwd-"))
    (cwd / "configs").symlink_to(HERE / "configs", target_is_directory=True)
    codes = {"before": args.before.resolve(), "this": HERE}
    for code in codes.values():
        once(code, argv, args.tables, cwd)
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in codes}
    for r in range(args.rounds):
        for name in ("before", "this") if r % 2 == 0 else ("this", "before"):
            got[name].append(once(codes[name], argv, args.tables, cwd))
    for name, runs in got.items():
        print(
            f"{name}: wall median {statistics.median(w for w, _ in runs):.2f} s; CPU "
            f"{', '.join(f'{c:.2f}' for _, c in runs)} s (median {statistics.median(c for _, c in runs):.2f})"
        )
    ratios = [t[1] / b[1] for t, b in zip(got["this"], got["before"])]
    print(
        f"CPU this / before, per round: {', '.join(f'{x:.3f}' for x in ratios)} (median {statistics.median(ratios):.3f})"
    )
    shutil.rmtree(cwd, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

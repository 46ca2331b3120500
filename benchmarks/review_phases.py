"""Where one game's `review` spends its CPU time: each phase of it, timed inside fresh processes.

The child does what ``yatzy-harness review RUN --game G`` does, one phase after another, and
reports each phase's CPU time (``time.process_time``, the process's own, so a loaded machine
inflates it less than the wall clock): the imports of numpy, pyarrow, numba and the review's
modules; reading the game from the run (its chunk's checksums, the rule file compiled); checking
the record, whose first kernel call is numba's start (its registries, and the scipy.linalg they
import) and the kernel's load; the value table and the analyser; the "ev" table and the win model;
the review (the other kernels' loads included) and writing the page. The interpreter's own start
is left out. ``--tree`` (repeatable) names the checkouts to compare, run alternately (each tree's
code on ``PYTHONPATH``, bytecode caches written); the table gives each phase's minimum and median
over ``--runs`` runs per tree.

    git worktree add /tmp/before REV
    python benchmarks/review_phases.py --runs 7 --tree /tmp/before --tree . results/scand10k 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PHASES = (
    "numpy",
    "pyarrow",
    "numba",
    "the review's modules",
    "reading the game",
    "checking it (numba's start)",
    "value table, analyser",
    "'ev' table, win model",
    "the review",
    "the page",
)

CHILD = """
import json, sys, time
out, c0 = [], time.process_time()
def mark():
    global c0
    c = time.process_time(); out.append(c - c0); c0 = c
import numpy; mark()
import pyarrow; mark()
import numba; mark()
import harness.reports.review as R
from harness.records.codec import records_of_run, run_rules
from harness.records.record import validate_record
mark()
src, game, page = sys.argv[1], int(sys.argv[2]), sys.argv[3]
((lineup, rec),) = list(records_of_run(src, lineup=0, games=[game])); rules = run_rules(src); mark()
validate_record(rec, rules); mark()
rv = R.Reviewer(rules); mark()
rv.win(); mark()
rev = rv.review(rec, lineup, src); mark()
R.write_review(rev, page); mark()
print(json.dumps(out))
"""


def phases(tree: Path, run: str, game: int, page: Path) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, run, str(game), str(page)],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "PYTHONPATH": str(tree)},
        cwd=tree,
    )
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run directory played with --record")
    ap.add_argument("game", type=int)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree", action="append", type=Path, help="a checkout to time (repeatable; default: this one)")
    ap.add_argument("--pages", type=Path, default=Path("/tmp"), help="where each tree's page goes (TREE-NAME.html)")
    args = ap.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parent.parent])]
    run = str(Path(args.run).resolve())
    pages = {t: args.pages / f"{t.name}.html" for t in trees}
    for t in trees:
        phases(t, run, args.game, pages[t])  # warm-up: page cache, bytecode, numba's on-disk cache
    got: dict[Path, list[list[float]]] = {t: [] for t in trees}
    print(f"load average {os.getloadavg()[0]:.1f} at the start; {args.runs} runs per tree, alternating")
    for _ in range(args.runs):
        for t in trees:
            got[t].append(phases(t, run, args.game, pages[t]))
    print("| phase | " + " | ".join(f"{t.name}: min | {t.name}: median" for t in trees) + " |")
    print("|---|" + "---:|---:|" * len(trees))
    for i, name in enumerate(PHASES + ("total",)):
        cells = []
        for t in trees:
            xs = [sum(r) for r in got[t]] if name == "total" else [r[i] for r in got[t]]
            cells.append(f"{min(xs):.3f} | {statistics.median(xs):.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end; CPU seconds")
    if len(trees) == 2:
        same = pages[trees[0]].read_bytes() == pages[trees[1]].read_bytes()
        print("the two trees' pages are " + ("byte for byte the same" if same else "DIFFERENT"))


if __name__ == "__main__":
    main()

"""The long forms of tests/test_chaos.py: every case on its own, many random points.

CI runs the short forms (one run per kind of chaos, the Dask moments on one cluster). This runs the
module ``--rounds`` times with ``YH_CHAOS_LONG=1`` (Ctrl-C with 1 and 2 workers, once and twice;
each Dask moment on a cluster of its own), each round drawing new random points, and prints how
many rounds each test passed; a failing round's output (with its random seed) is kept in
``--log``.

    python benchmarks/chaos.py                  # 5 rounds
    python benchmarks/chaos.py --rounds 20 -k ctrl_c
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-k", default="", help="only the tests whose name matches (pytest -k)")
    ap.add_argument("--log", default="chaos-failures.log", help="where failing rounds' output goes")
    a = ap.parse_args()
    env = {**os.environ, "YH_CHAOS_LONG": "1", "PYTHONPATH": str(ROOT)}
    tally: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    t0 = time.monotonic()
    for r in range(a.rounds):
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-rA",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_chaos.py"),
        ] + (["-k", a.k] if a.k else [])
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        for status, name in re.findall(r"^(PASSED|FAILED|ERROR) (\S+)", out.stdout, re.M):
            tally[name.split("::", 1)[-1]][status] += 1
        if out.returncode:
            with open(a.log, "a") as f:
                f.write(f"--- round {r + 1}\n{out.stdout}\n{out.stderr}\n")
        print(f"round {r + 1}/{a.rounds}: exit {out.returncode} ({time.monotonic() - t0:.0f} s)", flush=True)
    width = max(map(len, tally), default=10)
    for name, c in sorted(tally.items()):
        print(f"{name:<{width}}  passed {c['PASSED']}/{sum(c.values())}")
    return 0 if all(set(c) == {"PASSED"} for c in tally.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

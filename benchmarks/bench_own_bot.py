"""Calibrating a dial through an engine against the same dial in process (issue 50, "Speed").

The test engine ``tests/engines/solver_dial.py`` plays exactly ``solver:temperature=T`` (T its
option), so ``calibrate --strategy engine:cmd=... --param opt.temperature`` and ``calibrate
--strategy solver --param temperature`` evaluate the same values on the same games. For each, in a
fresh process: wall time, this process's CPU (the harness: runner, referee, analysis, search;
workers' and engines' CPU are their own) and, for the engine, the decisions it was asked. The
in-process calibration runs first, so the solver's table is cached for both.

    nice python benchmarks/bench_own_bot.py --rules forced --games 2000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELAY = ROOT / "tests" / "engines" / "solver_dial.py"

CHILD = """
import json, resource, sys, time
sys.argv = ['yatzy-harness'] + json.loads(sys.argv[1])
from harness.cli import main
t0 = time.perf_counter()
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    code = main(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "wall": time.perf_counter() - t0, "cpu": r.ru_utime + r.ru_stime,
                  "result": json.loads(buf.getvalue())}))
"""


def measure(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="forced")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--target", default="120")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        common = [
            "--rules",
            a.rules,
            "--target-mean",
            a.target,
            "--lo",
            "0",
            "--hi",
            "20",
            "--games",
            str(a.games),
            "--workers",
            str(a.workers),
            "--json",
        ]
        built_in = measure(
            ["calibrate", "--strategy", "solver", "--param", "temperature", *common, "--out", f"{tmp}/in"]
        )
        engine = measure(
            [
                "calibrate",
                "--strategy",
                f'engine:cmd="{sys.executable} {RELAY}"',
                "--param",
                "opt.temperature",
                *common,
                "--out",
                f"{tmp}/engine",
            ]
        )
    same = [(e["value"], e["response"]) for e in built_in["result"]["evaluations"]] == [
        (e["value"], e["response"]) for e in engine["result"]["evaluations"]
    ]
    n = len(engine["result"]["evaluations"])
    decisions = sum(e["faults"]["engine_decisions"] for e in engine["result"]["evaluations"])
    print(f"# {a.rules}, {a.games} games per evaluation, {a.workers} workers, {n} evaluations; same points: {same}")
    print("| calibration | wall s | harness CPU s (this process) |")
    print("|---|---:|---:|")
    print(f"| solver temperature, in process | {built_in['wall']:.1f} | {built_in['cpu']:.1f} |")
    print(f"| solver_dial opt.temperature, through the engine | {engine['wall']:.1f} | {engine['cpu']:.1f} |")
    print(
        f"ratio of wall times: {engine['wall'] / built_in['wall']:.2f}; engine decisions: {decisions:,}; "
        f"harness CPU per evaluated value: {engine['cpu'] / n:.2f} s (in process: {built_in['cpu'] / n:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

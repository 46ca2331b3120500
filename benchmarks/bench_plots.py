"""What each picture costs to draw and write: the report's (``harness.reports.plot.PLOTS``) and compare's (``COMPARE_PLOTS``).

Plays (once, kept under ``--dir``) two analysed runs of ``--games`` games on the same seed,
``solver`` against ``greedy`` with seats swapped, at upper-bonus threshold 63 and 62 (the README's
"Is threshold 62 a better game than 63?" runs, smaller), summarises one and compares the two,
then times each picture function plus its ``savefig`` (PNG, the size the commands write), median
of ``--repeat``. CPU time of this process (``time.process_time``) is quoted beside the wall time:
on a shared machine it is the fairer figure. The pictures are drawn from the summaries, so their
cost does not grow with the games.

    python benchmarks/bench_plots.py --games 2000 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _play(out: Path, games: int, settings: list[str]) -> None:
    m = out / "manifest.json"
    if m.is_file() and json.loads(m.read_text()).get("complete"):
        return
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--rules",
        "scandinavian",
        "--candidate",
        "solver",
        "--entrants",
        "greedy",
        "--games",
        str(games),
        "--seed",
        "1",
        "--analyse",
        "--quiet",
        "--out",
        str(out),
    ]
    for s in settings:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _time(fn, what, repeat: int, out: Path) -> tuple[float, float] | None:
    """(median wall s, median CPU s) of drawing ``fn(what)`` and writing it as PNG; None if it does not apply."""
    import matplotlib.pyplot as plt

    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fig = fn(what)
        if fig is None:
            return None
        fig.savefig(out)
        plt.close(fig)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="games per lineup of each run")
    ap.add_argument("--dir", default="results/bench-plots", help="where the runs are kept between invocations")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    root = Path(args.dir) if Path(args.dir).is_absolute() else ROOT / args.dir
    base, cand = root / f"q63-{args.games}", root / f"q62-{args.games}"
    _play(base, args.games, [])
    _play(cand, args.games, ["upper_bonus_threshold=62"])

    from harness.reports.compare import compare_runs
    from harness.reports.plot import COMPARE_PLOTS, PLOTS
    from harness.reports.summary import summarize

    print(
        f"# {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    summary, result = summarize(cand), compare_runs(base, cand)
    report = {n: f for sec in PLOTS.values() for n, f in sec.items()}
    with tempfile.TemporaryDirectory() as tmp:
        for plots, what in ((report, summary), (COMPARE_PLOTS, result)):
            for name, fn in plots.items():
                got = _time(fn, what, args.repeat, Path(tmp) / name)
                if got is not None:
                    print(f"{name:<22} {got[0]:6.2f} s wall  {got[1]:6.2f} s CPU", flush=True)
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

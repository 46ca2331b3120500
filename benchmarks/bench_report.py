"""Report and compare speed and peak memory on a large run: streaming keeps memory flat in the games.

Plays (once, kept under ``--dir``) two-seat runs of ``--games`` games (default 5,000,000 games =
10,000,000 rows per run), then measures, each in a fresh subprocess so that ``ru_maxrss`` is the
command's own peak resident memory:

* ``report RUN --no-plots`` and ``report RUN`` (plots, HTML) on the run;
* ``compare RUN RUN2``: the same seats on the same seed with ``full_house_scoring=flat``
  (20,000,000 rows read in lock step);
* the same three on a run 10x smaller, to show that memory does not grow with the games.

    python benchmarks/bench_report.py --games 5000000 > /tmp/bench_report.txt 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

MiB = 1024 * 1024


def _measure(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of ``cmd`` run as a child process."""
    code = (
        "import resource, sys, time\n"
        "from harness.cli import build_parser, main\n"
        "build_parser()  # imports every command module: start-up is not what is measured\n"
        "t = time.perf_counter()\n"
        f"rc = main({cmd!r})\n"
        "dt = time.perf_counter() - t\n"
        "print('BENCH', dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rc, file=sys.stderr)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    line = [x for x in p.stderr.splitlines() if x.startswith("BENCH ")]
    if not line:
        raise RuntimeError(f"{cmd} failed:\n{p.stderr}")
    _, dt, rss_kib, rc = line[-1].split()
    return float(dt), int(rss_kib) / 1024, int(rc)


def _play(out: Path, games: int, seats: str, settings: list[str], chunk: int) -> None:
    if (out / "manifest.json").is_file() and json.loads((out / "manifest.json").read_text()).get("complete"):
        return
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--seats",
        seats,
        "--games",
        str(games),
        "--seed",
        "1",
        "--chunk-size",
        str(chunk),
        "--workers",
        "2",
        "--quiet",
        "--out",
        str(out),
    ]
    for s in settings:
        cmd += ["--set", s]
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    print(f"played {out.name}: {games:,} games x 2 seats in {time.perf_counter() - t:.1f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=5_000_000, help="games per run (rows = 2 x games)")
    ap.add_argument("--seats", default="timeout,random")
    ap.add_argument("--chunk-size", type=int, default=50_000)
    ap.add_argument("--dir", default="results/bench-report", help="where the runs are kept between invocations")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per command (median time, max memory)")
    args = ap.parse_args(argv)
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    print(
        f"# {platform.node()} {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}",
        flush=True,
    )
    for games in (args.games // 10, args.games):
        a, b = root / f"base-{games}", root / f"cand-{games}"
        _play(a, games, args.seats, [], args.chunk_size)
        _play(b, games, args.seats, ["full_house_scoring=flat"], args.chunk_size)
        rows = 2 * games
        for label, cmd in (
            ("report --no-plots", ["report", str(a), "--no-plots", "--json"]),
            ("report (plots, html)", ["report", str(a), "--json"]),
            ("compare", ["compare", str(a), str(b), "--json"]),
        ):
            runs = sorted(_measure(cmd) for _ in range(args.repeat))
            dt, rss, rc = runs[len(runs) // 2]  # the median by time: the machine is shared
            print(
                f"{label:<22} {rows:>12,} rows/run  {dt:7.1f} s  {rows / dt / 1e6:6.2f} M rows/s  "
                f"peak RSS {max(r[1] for r in runs):7.0f} MiB  (exit {rc}; times {', '.join(f'{r[0]:.1f}' for r in runs)} s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Game codec benchmark: ``analyse RUN`` and ``fit RUN`` on a recorded run, wall time and peak memory.

Plays (once, kept under ``--dir``) recorded two-seat runs of ``--seats`` on scandinavian, seed 1,
one per ``--games`` size, then measures, each as its own process under ``/usr/bin/time -v``
(wall clock and maximum resident set size, imports included)::

    yatzy-harness analyse RUN --out DIR
    yatzy-harness fit RUN --model solver:temperature --out FILE

once per ``--tree`` (a checkout of this repository: the current one by default; give an older
commit's checkout, e.g. ``git worktree add /tmp/before 51a141d``, to compare), with that tree's
``harness`` first on ``PYTHONPATH``. Each tree runs each command once untimed on the smallest run
first (numba compiles a tree's kernels into its own cache once). The outputs of every tree must be
identical (``analysis.json`` but its ``files``, the fit's JSON): the script says so, or stops.

The runs use a copy of the built-in rule file under ``--dir``, so that every tree names the rules
alike (a record names a built-in rule set by name only when it is that tree's own file).

    python benchmarks/bench_codec.py --games 2000,10000 --tree /tmp/before --tree . > /tmp/bench_codec.txt 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


def _cli(tree: Path) -> list[str]:
    exe = shutil.which("yatzy-harness")
    return [exe] if exe else [sys.executable, "-m", "harness.cli"]


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _play(tree: Path, root: Path, games: int, seats: str) -> Path:
    out = root / f"run-{games}"
    if (out / "manifest.json").is_file() and json.loads((out / "manifest.json").read_text()).get("complete"):
        return out
    rules = root / "rules" / "scandinavian.toml"
    rules.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "configs" / "rules" / "scandinavian.toml", rules)
    cmd = _cli(tree) + [
        "run",
        "--rules",
        str(rules),
        "--seats",
        seats,
        "--games",
        str(games),
        "--seed",
        "1",
        "--record",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(out),
    ]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=tree, env=_env(tree), stdout=subprocess.DEVNULL)
    print(f"played {out.name}: {games:,} games x 2 seats in {time.perf_counter() - t:.1f} s", flush=True)
    return out


class Measured(NamedTuple):
    """One command under ``/usr/bin/time -v``: wall clock, CPU (user + system) seconds, peak RSS MiB."""

    wall: float
    cpu: float
    rss: float


def _measure(tree: Path, cmd: list[str], cli: list[str] | None = None) -> Measured:
    """``cmd`` under /usr/bin/time -v, with ``tree`` first on the path (it must succeed); ``cli``: how
    the command line starts (default: the ``yatzy-harness`` script, else ``python -m harness.cli``)."""
    p = subprocess.run(
        ["/usr/bin/time", "-v", *(cli or _cli(tree)), *cmd], cwd=tree, env=_env(tree), capture_output=True, text=True
    )
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed in {tree}:\n{p.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr).group(1)
    secs = sum(float(x) * 60**i for i, x in enumerate(reversed(wall.split(":"))))
    cpu = sum(float(re.search(rf"{what} time \(seconds\): (\S+)", p.stderr).group(1)) for what in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return Measured(secs, cpu, rss / 1024)


def _commands(run: Path, out: Path) -> dict[str, tuple[list[str], Path]]:
    return {
        "analyse": (["analyse", str(run), "--out", str(out / "analysis")], out / "analysis" / "analysis.json"),
        "fit": (["fit", str(run), "--model", "solver:temperature", "--out", str(out / "fit.json")], out / "fit.json"),
    }


def _result(what: str, path: Path) -> dict:
    d = json.loads(path.read_text())
    if what == "analyse":
        d.pop("files")
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="2000,10000", help="games per run, comma-separated")
    ap.add_argument("--seats", default="solver:temperature=1,greedy")
    ap.add_argument(
        "--tree",
        action="append",
        type=Path,
        help="a checkout whose harness runs the commands (repeatable; default: this one)",
    )
    ap.add_argument("--only", choices=("analyse", "fit"), help="measure one command only")
    ap.add_argument("--dir", default="results/bench-codec", type=Path, help="where the runs are kept")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    sizes = sorted(int(x) for x in args.games.split(","))
    root = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(
        f"# {platform.node()} {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, load average {load:.1f}",
        flush=True,
    )
    runs = {g: _play(trees[-1], root, g, args.seats) for g in sizes}
    whats = [args.only] if args.only else ["analyse", "fit"]
    for tree in trees:  # numba compiles a tree's kernels once, into that tree's cache
        for what in whats:
            cmd, _ = _commands(runs[sizes[0]], root / f"warm-{trees.index(tree)}")[what]
            _measure(tree, cmd)
    rows = []
    for g in sizes:
        for what in whats:
            got = {}
            for i, tree in enumerate(trees):
                cmd, path = _commands(runs[g], root / f"out-{i}-{g}")[what]
                secs, _, rss = _measure(tree, cmd)
                got[tree] = _result(what, path)
                rows.append((what, g, tree, secs, rss))
                print(f"{what} {g:,} games, {tree}: {secs:.1f} s, {rss:.0f} MiB", flush=True)
            first = next(iter(got.values()))
            same = all(v == first for v in got.values())
            print(f"{what} {g:,} games: outputs {'identical' if same else 'DIFFER'} across trees", flush=True)
            if not same:
                return 1
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    print("| command | games | tree | wall | peak RSS |")
    print("|---|---:|---|---:|---:|")
    for what, g, tree, secs, rss in rows:
        print(f"| `{what}` | {g:,} | {tree} | {secs:.1f} s | {rss:.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

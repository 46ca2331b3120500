"""Big logs: ``records``, ``analyse`` and ``fit`` of 10,000 and 100,000 recorded games: CPU, wall clock, peak memory.

Plays (once, kept under ``--dir``) a recorded two-seat run of ``--seats`` on scandinavian, seed 1,
one worker, per ``--games`` size, and writes it out as a JSON Lines file too (``games-N.jsonl``:
what a site's log holds, each record naming the built-in rule set). Then runs each command on each
size and source (the JSON Lines file, the run directory) once, as its own process under
``/usr/bin/time -v`` (imports and the solved table's load included), in a checkout (``--tree``,
default this one; ``python -m harness.cli``)::

    yatzy-harness records SOURCE
    yatzy-harness analyse SOURCE --out DIR --no-plots
    yatzy-harness fit SOURCE --model MODEL --quiet --json      (each of --models)

Prints a Markdown table: wall clock, CPU time (user + system, every thread: the fair figure on a
shared machine), peak RSS, and the load average before and after each. Each tree runs every
command once untimed on the smallest size first (numba compiles a tree's kernels into its cache)::

    python benchmarks/bench_biglogs.py --games 10000,100000 > /tmp/bench_biglogs.txt 2>&1 &
    python benchmarks/bench_biglogs.py --games 10000 --only fit --tree /tmp/before --tree .

``store``: what ``fit`` keeps of each run (in this process, :class:`harness.players.fit.DecisionStore` with
fit's default budget or ``--max-memory GIB``): informative decisions, the distinct ones it keeps
(rows, identical decisions merged within a segment), their options, the segments, the bytes kept in
memory and in the scratch file, per row and per decision::

    python benchmarks/bench_biglogs.py store --games 10000,100000
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from bench_codec import _env, _measure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("solver:temperature", "solver:temperature,blunder")


def _play(root: Path, games: int, seats: str) -> tuple[Path, Path]:
    """The run directory and the JSON Lines file of ``games`` games (made once)."""
    import subprocess

    run, jsonl = root / f"run-{games}", root / f"games-{games}.jsonl"
    if not (run / "manifest.json").is_file():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "run",
                "--rules",
                "scandinavian",
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
                str(run),
            ],
            check=True,
            cwd=ROOT,
            env=_env(ROOT),
            stdout=subprocess.DEVNULL,
        )
    if not jsonl.is_file():
        from harness.records.codec import records_of_run
        from harness.records.record import write_records_jsonl

        part = jsonl.with_suffix(".part")
        write_records_jsonl(part, (rec for _, rec in records_of_run(run)))
        part.rename(jsonl)
    return run, jsonl


def _commands(source: Path, out: Path, models: list[str], only: str | None) -> list[tuple[str, list[str]]]:
    cmds = [
        ("records", ["records", str(source)]),
        ("analyse", ["analyse", str(source), "--out", str(out / "analysis"), "--no-plots"]),
    ]
    cmds += [(f"fit {m}", ["fit", str(source), "--model", m, "--quiet", "--json"]) for m in models]
    return [(k, c) for k, c in cmds if only is None or k.split()[0] == only]


def store(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_biglogs.py store", description="what fit keeps of a log")
    ap.add_argument("--games", default="10000,100000")
    ap.add_argument("--seats", default="solver:temperature=1,greedy")
    ap.add_argument("--dir", default="results/bench-biglogs", type=Path)
    ap.add_argument("--max-memory", type=float, default=None, help="GiB (default: fit's)")
    args = ap.parse_args(argv)
    from harness.decisions.analysis import decision_batches
    from harness.players.fit.report import BATCH_GAMES, _Store
    from harness.players.fit.store import MAX_MEMORY
    from harness.records.record import RecordStream

    budget = MAX_MEMORY if args.max_memory is None else int(args.max_memory * 2**30)
    print(
        "| games | informative decisions | rows kept (distinct) | options kept | segments | in memory | "
        "in the scratch file | bytes per row | bytes per decision |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for g in sorted(int(x) for x in args.games.split(",")):
        run, _ = _play(args.dir.resolve(), g, args.seats)
        st = _Store(max_memory=budget)
        try:
            for _, table in decision_batches(RecordStream(run), BATCH_GAMES):
                st.add(table)
            b = st.b
            b.finish()
            total = b.memory_bytes + b.spilled_bytes
            print(
                f"| {g:,} | {b.decisions:,} | {b.rows:,} ({100 * b.rows / b.decisions:.0f} %) | {b.options:,} | "
                f"{b.segments} | {b.memory_bytes / 2**20:,.0f} MiB | {b.spilled_bytes / 2**20:,.0f} MiB | "
                f"{total / b.rows:.0f} | {total / b.decisions:.0f} |",
                flush=True,
            )
        finally:
            st.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["store"]:
        return store(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="10000,100000", help="games per run, comma-separated")
    ap.add_argument("--seats", default="solver:temperature=1,greedy")
    ap.add_argument("--models", default=";".join(MODELS), help="';'-separated fit models")
    ap.add_argument("--tree", action="append", type=Path, help="a checkout to measure (repeatable; default: this one)")
    ap.add_argument("--only", choices=("records", "analyse", "fit"), help="one command only")
    ap.add_argument("--sources", default="jsonl,run", help="jsonl, run or both")
    ap.add_argument("--dir", default="results/bench-biglogs", type=Path, help="where the logs are kept")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    sizes = sorted(int(x) for x in args.games.split(","))
    models = args.models.split(";")
    root = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "harness.cli"]
    print(
        f"# {platform.node()} ({os.cpu_count()} cores), Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    logs = {g: dict(zip(("run", "jsonl"), _play(root, g, args.seats))) for g in sizes}
    warm = _play(root, 200, args.seats)[1]
    for i, tree in enumerate(trees):
        for _, cmd in _commands(warm, root / f"warm-{i}", models, args.only):
            _measure(tree, cmd, cli)
    print("| command | source | games | tree | wall | CPU (user + sys) | peak RSS | load average |")
    print("|---|---|---:|---|---:|---:|---:|---|")
    for g in sizes:
        for kind in args.sources.split(","):
            for i, tree in enumerate(trees):
                for what, cmd in _commands(logs[g][kind], root / f"out-{i}-{kind}-{g}", models, args.only):
                    before = os.getloadavg()[0]
                    m = _measure(tree, cmd, cli)
                    print(
                        f"| `{what}` | {kind} | {g:,} | {tree.name} | {m.wall:,.1f} s | {m.cpu:,.1f} s | "
                        f"{m.rss:,.0f} MiB | {before:.1f} .. {os.getloadavg()[0]:.1f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

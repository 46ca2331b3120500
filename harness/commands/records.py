"""``yatzy-harness records``: check a file of game records (or a recorded run) and show them as text."""

from __future__ import annotations

import argparse
import sys

from harness.commands.options import add_records_options, describe, listed, stream_games


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Read game records (.jsonl, .jsonl.gz or .parquet, or a run directory "
        "played with --record), check every game against its rule set, list each "
        "bad game on one line (exit 1 if any).",
        "yatzy-harness records games.jsonl",
        "yatzy-harness records games.jsonl.gz --text",
        "yatzy-harness records results/sg --text",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a .jsonl, .jsonl.gz or .parquet file of game records, or a run directory played with --record",
    )
    p.add_argument("--text", action="store_true", help="print every valid game, one line per turn")
    add_records_options(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `records --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.records.record import NoUsableGame, format_game

    stream = stream_games(args.file, args)  # a batch at a time: a log of any size
    try:
        for part in stream:
            if args.text:
                for rec in part.games:
                    print(format_game(rec))
    except NoUsableGame as exc:
        raise listed(exc, shown=len(exc.bad)) from None  # each listed as its batch was read
    print(stream.summary, file=sys.stderr if args.text else sys.stdout)
    return 1 if stream.errors else 0

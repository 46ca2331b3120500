"""``yatzy-harness analyse``: exact luck and skill of every player in game records (or a recorded run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.options import (
    add_cache_dir_option,
    add_records_options,
    confidence_arg,
    describe,
    listed,
    number_arg,
    print_json,
    show_bad,
    stream_games,
)


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Exact luck and skill per player from game records (a .jsonl, .jsonl.gz or "
        ".parquet file, or a run directory played with --record): mean score, mean "
        "luck, luck-adjusted mean (final - luck) with its CI and variance reduction, "
        "regret per decision and per game, error rate, regret by decision kind, a "
        "rating and the worst decisions. final = start + luck - regret exactly "
        "(docs/luck-and-skill.md). Bad games are listed on stderr and skipped. Writes "
        "analysis.json, analysis.md and PNG plots into --out (default: the run "
        "directory, or FILE.analysis/ next to a file).",
        "yatzy-harness analyse games.jsonl",
        "yatzy-harness analyse results/sg --player greedy --worst 10",
        "yatzy-harness analyse results/sg --json --no-plots | jq '.players[0]'",
        "yatzy-harness analyse results/sg --worst 3 --review results/sg/reviews",
    )
    p.add_argument(
        "source",
        metavar="SOURCE",
        help="a .jsonl, .jsonl.gz or .parquet file of game records, or a run directory played with --record",
    )
    p.add_argument("--player", metavar="NAME", help="only this player (a person's name or a bot's label)")
    p.add_argument(
        "--worst",
        metavar="N",
        type=number_arg(minimum=0, inclusive=True, integer=True),
        default=5,
        help="list each player's N costliest decisions",
    )
    p.add_argument("--out", metavar="DIR", help="write analysis.json, analysis.md and the plots here")
    p.add_argument(
        "--review",
        metavar="DIR",
        help="also write a review page (as `yatzy-harness review` does) of every game holding one of the "
        "--worst decisions listed, into DIR",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    p.add_argument("--confidence", metavar="C", type=confidence_arg, default=0.95, help="interval confidence")
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    add_records_options(p)
    add_cache_dir_option(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `analyse --help` must not pay for numba and pandas
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.records.record import NoUsableGame
    from harness.reports.analysis_files import write_analysis
    from harness.decisions.skill import analyse_records, default_out, text

    cache_dir = select_cache_dir(args.cache_dir)
    stream = stream_games(args.source, args)  # a batch at a time; the bad games read listed as they come
    try:
        report = analyse_records(
            stream, player=args.player, worst=args.worst, confidence=args.confidence, cache_dir=cache_dir
        )
    except NoUsableGame as exc:
        raise listed(exc, shown=len(stream.errors)) from None
    show_bad(report.bad[len(stream.errors) :])  # then those the analysis skips
    report = write_analysis(report, args.out or default_out(args.source), plots=not args.no_plots)
    pages = []
    if args.review:
        from harness.reports.review import games_of, write_reviews

        worst = [(w.lineup, w.game) for p in report.players for w in p.worst]
        again = stream_games(args.source, args, show=False)  # a second walk keeps only these games
        pages = write_reviews(
            games_of(again, dict.fromkeys(worst)), args.review, cache_dir=cache_dir, source=args.source
        )
    d = report.to_dict()
    if pages:
        d["reviews"] = [str(path) for _, path in pages]
    if args.json:
        print_json(d)
        return 0
    print(text(d))
    print(f"\nwrote {', '.join(Path(f).name for f in report.files)} to {Path(report.files[0]).parent}")
    if args.review:
        names = ", ".join(path.name for _, path in pages) or "none: no decision gave points away"
        print(f"wrote {len(pages)} review page{'s' * (len(pages) != 1)} to {args.review}: {names}")
    return 0

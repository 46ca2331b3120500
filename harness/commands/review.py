"""``yatzy-harness review``: one game's review page (every decision, the luck, the expected finals, the win chances)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.options import (
    add_cache_dir_option,
    add_records_options,
    describe,
    number_arg,
    print_json,
    record_of,
)
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Write one game's review page: a self-contained HTML file (no network) with "
        "every roll drawn as dice, the dice kept, each decision's best option, value and "
        "regret classed inaccuracy / mistake / blunder, a scoresheet per seat filling in as "
        "you step through the turns (arrow keys or clicks), a chart of each seat's expected "
        "final with each roll's luck and each decision's regret marked, and for two or more "
        "seats the exact chance to win after every step (every seat playing on "
        "EV-optimally) with the decisive moments. Prints the summary.",
        "yatzy-harness review results/sg --game 0",
        "yatzy-harness review games.jsonl --game 17 --out game-17.html",
        "yatzy-harness review results/tournament --lineup 2 --game 5 --json | jq .seats",
    )
    p.add_argument(
        "source",
        metavar="SOURCE",
        help="a .jsonl, .jsonl.gz or .parquet file of game records, or a run directory played with --record",
    )
    p.add_argument("--game", required=True, metavar="ID", help="the game's id (a run's game index)")
    p.add_argument(
        "--lineup", type=int, metavar="N", help="the lineup, in a run directory (default 0) or a run's Parquet records"
    )
    p.add_argument(
        "--out",
        metavar="FILE.html",
        help="where the page goes (default: RUN_DIR/reviews/game-ID.html, or FILE.reviews/game-ID.html "
        "next to a records file)",
    )
    p.add_argument(
        "--max-memory",
        type=number_arg(),
        default=3.0,
        metavar="GIB",
        help="largest EV-play table (the win chances' 'ev' target table) built when it is not in the "
        "solver cache; above it the page says that its win chances are left out",
    )
    p.add_argument("--json", action="store_true", help="print the page's data (every turn, step and decision) as JSON")
    add_records_options(p)
    add_cache_dir_option(p)


def default_out(source: str, game: str, lineup: int | None) -> Path:
    """``RUN_DIR/reviews/game-ID.html``, or ``FILE.reviews/game-ID.html`` beside a records file."""
    from harness.reports.review import page_name

    src = Path(source)
    where = src / "reviews" if src.is_dir() else src.with_name(src.name + ".reviews")
    return where / page_name(game, lineup)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `review --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.records.codec import NoRecords
    from harness.util.jsonable import jsonable
    from harness.util.render import text
    from harness.reports.review import Reviewer, tables, write_review

    cache_dir = select_cache_dir(args.cache_dir)
    try:
        rec, rules, lineup = record_of(args.source, args.game, args.lineup, args)
    except NoRecords as exc:
        # the run's games replay exactly (same dice, same bots) and `replay --review` writes their
        # review page: a way to the page now, where "play it again with --record" is a whole run
        lu = "" if args.lineup is None else f" --lineup {args.lineup}"
        page = args.out or default_out(args.source, args.game, args.lineup)
        raise UserError(
            f"{exc.run} was played without --record, so it has no game records to review; replay the "
            f"game into a review page: yatzy-harness replay --run {args.source}{lu} --game {args.game} "
            f"--review {page} (or play the run again with --record)"
        ) from None
    rv = Reviewer(
        rules, cache_dir, win_tables_up_to=int(args.max_memory * 2**30), win_hint=" (a larger --max-memory builds it)"
    )
    rev = rv.review(rec, lineup, args.source)
    out = write_review(rev, args.out or default_out(args.source, str(rec.game), lineup))
    if args.json:
        print_json(jsonable(rev.to_dict()) | {"page": str(out)})
        return 0
    shown = [t for t in tables(rev) if not t.title.startswith("Decisions")]
    print(text(shown, [rev.title + ": " + " vs ".join(f"{s.label} {s.final}" for s in rev.seats)]))
    if rev.win_note:
        print(f"\n{rev.win_note}")
    print(f"\nwrote {out} ({out.stat().st_size / 1024:.0f} KB): open it in a browser; ← → step through the turns")
    return 0

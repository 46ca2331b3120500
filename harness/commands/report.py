"""``yatzy-harness report``: summarise a run directory into tables, plots and one HTML/Markdown report."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.options import (
    add_depth_mode_options,
    add_quality_options,
    confidence_arg,
    describe,
    first_time,
    print_json,
    quality_options,
)
from harness.game.outcome import DEFINITION


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Summarise a run directory: per entrant score distribution with a CI, "
        "bonus and yatzy rates, win/draw/loss, per-box means; per pairing "
        "win/draw/loss with Wilson intervals; head-to-head matrix and Bradley-Terry "
        "ratings; game quality (skill share, upset rate, first-mover edge, lead "
        "changes, decisive round, close games, comebacks); when every entrant is solitaire, "
        "each figure's exact value beside the sampled one, flagging a sampled mean, rate or "
        "percentile whose 99.9 % interval misses it (by default only when the exact "
        "evaluations are cached or cheap); the exact depth of skill of the rule set, when it can be "
        "evaluated (by default only when cached or small). Writes summary.json, summary.md, report.html and "
        f"PNG plots into the run directory (or --out). {DEFINITION}.",
        "yatzy-harness report results/gb",
        "yatzy-harness report results/gb --no-plots --out /tmp/gb-report",
        "yatzy-harness report results/gb --json --confidence 0.99 | jq .ratings",
        "yatzy-harness report results/gb --exact",
        "yatzy-harness report results/forced-run --depth",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by `yatzy-harness run`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    p.add_argument("--out", metavar="DIR", help="write the report files here instead of RUN_DIR")
    p.add_argument(
        "--no-reviews",
        action="store_true",
        help="skip the review pages of the costliest decisions' games (written into OUT/reviews/ for a "
        "run played with --analyse and --record, and linked from report.html)",
    )
    p.add_argument("--confidence", metavar="C", type=confidence_arg, default=0.95, help="interval confidence")
    add_quality_options(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--exact",
        dest="exact",
        action="store_const",
        const="on",
        default="auto",
        help="compute the exact column even where it is costly (half a minute to minutes of CPU per bot on scandinavian; "
        "cached for next time); by default it is shown when every evaluation is cached or the rule "
        "set is small, else a note says so",
    )
    g.add_argument("--no-exact", dest="exact", action="store_const", const="off", help="no exact column")
    add_depth_mode_options(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `report --help` must not pay for pandas and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.reports.report import summary_text, write_report
    from harness.reports.summary import summarize

    summary = summarize(
        args.run_dir,
        confidence=args.confidence,
        quality_options=quality_options(args),
        exact=args.exact,
        depth=args.depth,
    )
    d = write_report(summary, args.out, plots=not args.no_plots, reviews=not args.no_reviews)
    if args.json:
        print_json(d)
    else:
        # the depth of skill's note (not cached, the command that computes it) once in this process:
        # it would come back with every report of the rule set until that command is run
        depth_note = (d.get("depth") or {}).get("why")
        shown = [n for n in d["notes"] if n != depth_note or first_time(n)]
        print(summary_text({**d, "notes": shown}))
        files = [Path(f) for f in d["files"]]
        pages = [f for f in files if f.parent.name == "reviews"]
        shown = [f.name for f in files if f not in pages] + ([f"reviews/ ({len(pages)} review pages)"] if pages else [])
        print(f"\nwrote {', '.join(shown)} to {files[0].parent}")
    return 0

"""``yatzy-harness replay``: re-play one game by index, alone, with a turn-by-turn trace (or its record)."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Any

from harness.commands.options import add_cache_dir_option, add_set_option, describe
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Re-play one game by index: the same dice as in any run with the same "
        "seed. Give --run DIR to take the rules, bots and seed from a run, or "
        "--rules, --seats and --seed.",
        "yatzy-harness replay --run results/gr --game 17",
        "yatzy-harness replay --run results/quick-20260101-120000 --lineup 3 --game 0 --json",
        "yatzy-harness replay --rules scandinavian --seats greedy,timeout --seed 7 --game 3",
        "yatzy-harness replay --run results/gr --game 17 --review game-17.html",
    )
    p.add_argument("--run", metavar="DIR", help="take rules, seats and seed from this run directory")
    p.add_argument("--lineup", type=int, default=0, metavar="N", help="lineup of the run (tournaments, gauntlets)")
    p.add_argument("--game", type=int, required=True, metavar="N", help="game index, from 0")
    p.add_argument("--rules", metavar="RULES", help="rule set name or .toml path (without --run)")
    p.add_argument("--seats", metavar="A,B,...", help="strategies, e.g. greedy,solver:temperature=1 (without --run)")
    p.add_argument("--seed", type=int, metavar="N", help="root seed, 0..2**64-1 (without --run)")
    add_set_option(p)
    add_cache_dir_option(p)
    p.add_argument("--json", action="store_true", help="print the game record (docs/records.md) as one line of JSON")
    p.add_argument(
        "--review",
        metavar="FILE.html",
        help="also write the game's review page (as `yatzy-harness review` does) to FILE.html",
    )


def _from_run(args: argparse.Namespace) -> tuple[str, Any, list[str], int]:
    """Rules, settings, seat specs and seed of ``--run``'s lineup; refuses a game not in the run."""
    from harness.records.rundir import load_manifest

    given = [
        flag
        for flag, v in (
            ("--rules", args.rules),
            ("--seats", args.seats),
            ("--seed", args.seed),
            ("--set", args.settings),
        )
        if v
    ]
    if given:
        raise UserError(f"--run takes the rules, seats and seed from the run: leave out {', '.join(given)}")
    manifest = load_manifest(args.run)
    try:
        lineups = manifest["lineups"]
        games = int(manifest["games"])
        specs = {e["label"]: e["spec"] for e in manifest["entrants"]}
        # the config's settings are the overrides the run was made with; the manifest's rules
        # settings list every setting, some of which a custom rule set does not accept as overrides
        config = manifest.get("config") or {}
        rules_name = config.get("rules", manifest["rules"]["source"])
        settings = config.get("settings", manifest["rules"]["settings"])
        seed = manifest["seed"]
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{Path(args.run) / 'manifest.json'}: incomplete manifest ({exc})") from None
    if not 0 <= args.lineup < len(lineups):
        have = "lineup 0 only" if len(lineups) == 1 else f"lineups 0..{len(lineups) - 1}"
        raise UserError(f"--lineup {args.lineup} is not in run {args.run}: it has {have}")
    if not 0 <= args.game < games:
        raise UserError(f"--game {args.game} is not in run {args.run}: it plays games 0..{games - 1} of each lineup")
    return rules_name, settings, [specs[label] for label in lineups[args.lineup]], int(seed)


def run(args: argparse.Namespace) -> int:
    # the engine is imported here, not at the top: `replay --help` must not pay for numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.game.loop import StrategyError
    from harness.play.replay import format_trace, record_of_replay, replay
    from harness.play.runconfig import MAX_GAMES, MAX_SEED, seats_from_text

    select_cache_dir(args.cache_dir)
    if args.run:
        rules_name, settings, seats, seed = _from_run(args)
    else:
        if not (args.rules and args.seats and args.seed is not None):
            raise UserError("replay needs --run DIR, or --rules, --seats and --seed")
        if args.lineup:
            raise UserError(f"--lineup {args.lineup} needs --run (a lineup of that run)")
        if not 0 <= args.seed <= MAX_SEED:
            raise UserError(f"--seed must be 0..{MAX_SEED}, got {args.seed}")
        if not 0 <= args.game < MAX_GAMES:
            raise UserError(f"--game must be 0..{MAX_GAMES - 1}, got {args.game}")
        seats = seats_from_text(args.seats)
        rules_name, settings, seed = args.rules, args.settings, args.seed
    trace: list[dict[str, Any]] = []
    try:
        _, res = replay(rules_name, settings, seats, seed, args.game, trace)
    except StrategyError as exc:
        # the game up to the failure, then the bot's traceback and what failed where (once each)
        if not args.json:
            print(format_trace(trace, seats))
        cause = exc.cause
        sys.stdout.flush()
        print(
            "".join(traceback.format_exception(type(cause), cause, cause.__traceback__)).rstrip("\n"), file=sys.stderr
        )
        print(f"yatzy-harness: replay: {exc}", file=sys.stderr)
        return 1
    labels = list(res.labels)
    record = record_of_replay(trace, res, rules_name, seats, seed, args.game)
    page = None
    if args.review:
        from harness.reports.review import Reviewer, write_review

        page = write_review(
            Reviewer(res.rules).review(record, args.lineup if args.run else None, args.run or "replay"), args.review
        )
    if args.json:
        # the game record (docs/records.md), on one line: a line of a .jsonl file
        print(record.to_json())
        return 0
    print(f"game {args.game}, seed {seed}, rules {res.rules.name}: " + " vs ".join(labels))
    print(format_trace(trace, labels))
    for s, label in enumerate(labels):
        result = {2: "wins", 1: "shares the win", 0: "loses"}[int(res.outcome[0, s])]
        print(
            f"seat {s} {label}: total {int(res.total[0, s])} "
            f"(upper {int(res.upper[0, s])}, bonus {int(res.bonus[0, s])}) {result}"
        )
    if page is not None:
        print(f"wrote the review page {page}")
    return 0

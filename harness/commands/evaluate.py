"""``yatzy-harness evaluate``: exact figures of solitaire bots, their exact head-to-heads (:mod:`harness.exact.evaluate`)
and the exact depth of skill (:mod:`harness.studies.depth`)."""

from __future__ import annotations

import argparse

from harness.commands.options import (
    add_backend_options,
    add_cache_dir_option,
    add_depth_options,
    add_set_option,
    add_window_options,
    describe,
    new_out_dir,
    print_json,
    window_limits,
)
from harness.util.errors import UserError
from harness.util.specs import split_specs


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Evaluate solitaire bots exactly: the distribution of each bot's final score by a forward "
        "pass of its own choice probabilities (no sampling), and every head-to-head from the "
        "distributions (two solitaire bots never interact). Cached per rule set and bot. With "
        "--depth, also the exact depth of skill: the chain of levels from --weakest up the "
        "solver's dial to the optimal bot, each scoring p against the one below.",
        "yatzy-harness evaluate scandinavian --entrants random,timeout,greedy,bonus,solver",
        "yatzy-harness evaluate scandinavian --entrants solver,solver:temperature=2 --seats 4 --json",
        "yatzy-harness evaluate yahtzee --entrants greedy,solver --out results/exact",
        "yatzy-harness evaluate scandinavian --entrants greedy,solver --course",
        "yatzy-harness evaluate generala --depth --rates 0.6,0.75 --weakest random",
        "yatzy-harness evaluate generala --depth --backend dask --workers 3",
    )
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument(
        "--entrants", metavar="A,B,...", help="bots (name or name:key=value) to evaluate (required without --depth)"
    )
    add_set_option(p)
    add_cache_dir_option(p)
    add_window_options(p, "the evaluation is refused with the size it needs")
    p.add_argument(
        "--seats",
        type=int,
        default=2,
        metavar="K",
        help="also each bot's chance of being sole best / sharing the top against K-1 copies of each other",
    )
    p.add_argument(
        "--close-margin",
        type=int,
        default=None,
        metavar="POINTS",
        help="game quality: a close game is won by at most POINTS (default: report's --close-margin)",
    )
    p.add_argument(
        "--course",
        action="store_true",
        help="also the course of a game at two seats, exactly where it can be (comebacks; lead "
        "changes between exact bounds): one more pass of each bot (cached)",
    )
    p.add_argument(
        "--comeback-deficit",
        type=int,
        default=None,
        metavar="POINTS",
        help="--course: a comeback is a win from POINTS or more behind (default: report's)",
    )
    p.add_argument(
        "--depth", action="store_true", help="also the exact depth of skill (see --rates, --weakest, --dial)"
    )
    add_depth_options(p)
    add_backend_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", default=None, metavar="DIR", help="write evaluate.json, evaluate.md and plots there")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `evaluate --help` must not pay for numba
    from harness.util import render
    from harness.util.cache import select_cache_dir
    from harness.commands.options import depth_settings, evaluated_line, exact_tasks, shows_progress
    from harness.exact.evaluate import Limits, check_seats
    from harness.reports.exact_report import Execution, evaluate_exactly
    from harness.studies.depth import DepthRequest
    from harness.reports.quality import QualityOptions
    from harness.game.rules import load_rules

    cache_dir = select_cache_dir(args.cache_dir)
    rules = load_rules(args.rules, args.settings)
    bots = split_specs(args.entrants) if args.entrants else []  # one parser of every list of bots
    if not bots and not args.depth:
        raise UserError("give --entrants A,B,... (or --depth)")
    check_seats(args.seats)
    if args.course and len(bots) < 2:
        raise UserError("--course: give two --entrants or more (the course of a game at two seats)")
    base = QualityOptions()
    qopt = QualityOptions(
        base.close_margin if args.close_margin is None else args.close_margin,
        base.comeback_deficit if args.comeback_deficit is None else args.comeback_deficit,
    )
    out = new_out_dir(args.out, "evaluate") if args.out else None
    depth = DepthRequest(*depth_settings(args), args.candidates) if args.depth else None
    progress = shows_progress(args)
    # evaluations as tasks (harness.jobs.cluster) for the depth of skill or on Dask: forked workers, or a cluster's
    tasks = args.depth or args.backend == "dask"
    execution = Execution(
        cache_dir=cache_dir,
        progress=not args.json,
        limits=Limits(**window_limits(args)),
        open_tasks=(lambda: exact_tasks(args)) if tasks else None,
        task_progress=progress,
        on_evaluated=None if args.json or progress else evaluated_line,
    )
    res = evaluate_exactly(
        rules, bots, seats=args.seats, quality=qopt, course=args.course, depth=depth, execution=execution, out=out
    )
    if args.json:
        print_json(res.to_json())
    else:
        print(render.text(res.tables(), [f"exact evaluation: {rules.name} ({rules.summary()})"]))
    return 0

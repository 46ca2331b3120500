"""``yatzy-harness evaluate``: exact figures of solitaire bots, their exact head-to-heads (:mod:`harness.exact.evaluate`)
and the exact depth of skill (:mod:`harness.exact.depth`)."""

from __future__ import annotations

import argparse
import json

from harness.commands.options import (add_backend_options, add_cache_dir_option, add_depth_options, add_set_option,
                                      add_window_options, describe, new_out_dir, print_json, window_limits)
from harness.util.errors import UserError
from harness.util.specs import split_specs


def configure(p: argparse.ArgumentParser) -> None:
    describe(p, "Evaluate solitaire bots exactly: the distribution of each bot's final score by a forward "
                "pass of its own choice probabilities (no sampling), and every head-to-head from the "
                "distributions (two solitaire bots never interact). Cached per rule set and bot. With "
                "--depth, also the exact depth of skill: the chain of levels from --weakest up the "
                "solver's dial to the optimal bot, each scoring p against the one below.",
             "yatzy-harness evaluate scandinavian --entrants random,timeout,greedy,bonus,solver",
             "yatzy-harness evaluate scandinavian --entrants solver,solver:temperature=2 --seats 4 --json",
             "yatzy-harness evaluate yahtzee --entrants greedy,solver --out results/exact",
             "yatzy-harness evaluate scandinavian --entrants greedy,solver --course",
             "yatzy-harness evaluate generala --depth --rates 0.6,0.75 --weakest random",
             "yatzy-harness evaluate generala --depth --backend dask --workers 3")
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument("--entrants", metavar="A,B,...",
                   help="bots (name or name:key=value) to evaluate (required without --depth)")
    add_set_option(p)
    add_cache_dir_option(p)
    add_window_options(p, "the evaluation is refused with the size it needs")
    p.add_argument("--seats", type=int, default=2, metavar="K",
                   help="also each bot's chance of being sole best / sharing the top against K-1 copies of each other")
    p.add_argument("--close-margin", type=int, default=None, metavar="POINTS",
                   help="game quality: a close game is won by at most POINTS (default: report's --close-margin)")
    p.add_argument("--course", action="store_true",
                   help="also the course of a game at two seats, exactly where it can be (comebacks; lead "
                        "changes between exact bounds): one more pass of each bot (cached)")
    p.add_argument("--comeback-deficit", type=int, default=None, metavar="POINTS",
                   help="--course: a comeback is a win from POINTS or more behind (default: report's)")
    p.add_argument("--depth", action="store_true",
                   help="also the exact depth of skill (see --rates, --weakest, --dial)")
    add_depth_options(p)
    add_backend_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", default=None, metavar="DIR", help="write evaluate.json, evaluate.md and plots there")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `evaluate --help` must not pay for numba
    from harness.util import render
    from harness.util.cache import use_cache_dir
    from harness.commands.options import depth_settings, evaluated_line, exact_tasks, shows_progress
    from harness.exact.depth import Evaluator, depth_of_skill
    from harness.exact.evaluate import HeadToHead, Limits, check_seats, head_to_head
    from harness.util.jsonable import jsonable
    from harness.exact.course import course
    from harness.exact.course import refusal as course_refusal
    from harness.reports.quality import QualityOptions, exact_course, exact_course_table, exact_pair, exact_quality_table
    from harness.game.rules import load_rules

    cache_dir = use_cache_dir(args.cache_dir)
    rules = load_rules(args.rules, args.settings)
    bots = split_specs(args.entrants) if args.entrants else []  # one parser of every list of bots
    if not bots and not args.depth:
        raise UserError("give --entrants A,B,... (or --depth)")
    check_seats(args.seats)
    if args.course and len(bots) < 2:
        raise UserError("--course: give two --entrants or more (the course of a game at two seats)")
    base = QualityOptions()
    qopt = QualityOptions(base.close_margin if args.close_margin is None else args.close_margin,
                          base.comeback_deficit if args.comeback_deficit is None else args.comeback_deficit)
    out = new_out_dir(args.out, "evaluate") if args.out else None
    h2h = depth = None
    if args.depth or args.backend == "dask":
        # evaluations as tasks (harness.exact.cluster): forked workers, or a Dask cluster's
        rates, weakest, dial = depth_settings(args) if args.depth else ((), "", "")
        progress = shows_progress(args)
        with exact_tasks(args) as tasks:
            ev = Evaluator(tasks=tasks, on_done=None if args.json or progress else evaluated_line, progress=progress)
            try:
                if bots:
                    h2h = HeadToHead(rules.name, tuple(ev.many([(rules, b) for b in bots])), args.seats)
                if args.depth:
                    depth = depth_of_skill(rules, rates, weakest, dial, ev, args.candidates)
            finally:
                ev.close()
    elif bots:
        h2h = head_to_head(rules, bots, args.seats, cache_dir, progress=not args.json,
                           limits=Limits(**window_limits(args)))
    quality = [exact_pair(a, b, qopt) for i, a in enumerate(h2h.evaluations) for b in h2h.evaluations[i + 1:]] \
        if h2h else []
    courses, course_note = [], None
    if args.course and len(bots) >= 2:
        why = next((w for w in (course_refusal(rules, b) for b in bots) if w), None)
        if why:
            course_note = f"the course of a game is sampled (run, report): {why}"
        else:
            cs = [course(rules, b, cache_dir, progress=not args.json) for b in bots]
            courses = [exact_course(a, b, qopt) for i, a in enumerate(cs) for b in cs[i + 1:]]
            course_note = "the course of a game: below"
    tables = (h2h.tables() if h2h else []) + ([exact_quality_table(quality, course_note)] if quality else []) \
        + ([exact_course_table(courses)] if courses else []) + (depth.tables() if depth else [])
    data = {**(h2h.to_json() if h2h else {"rules": rules.name}),
            **({"quality": [q.to_json() for q in quality]} if quality else {}),
            **({"course": [c.to_json() for c in courses]} if courses else {}),
            **({"course_refused": course_note} if args.course and not courses and course_note else {}),
            **({"depth": depth.to_json()} if depth else {})}
    if out is not None:
        from harness.reports.plot import plot_depth, plot_exact_distributions

        (out / "evaluate.json").write_text(json.dumps(jsonable(data), indent=2))
        (out / "evaluate.md").write_text(render.markdown(tables, f"Exact evaluation, {rules.name}", [rules.summary()]))
        if h2h:
            plot_exact_distributions(h2h.evaluations).savefig(out / "distributions.png")
        if depth:
            plot_depth(depth).savefig(out / "depth.png")
    if args.json:
        print_json(data)
    else:
        print(render.text(tables, [f"exact evaluation: {rules.name} ({rules.summary()})"]))
    return 0

"""``yatzy-harness evaluate``: exact figures of solitaire bots and their exact head-to-heads (:mod:`harness.evaluate`)."""

from __future__ import annotations

import argparse
import json

from harness.commands.options import add_cache_dir_option, add_set_option, describe, new_out_dir, print_json


def configure(p: argparse.ArgumentParser) -> None:
    describe(p, "Evaluate solitaire bots exactly: the distribution of each bot's final score by a forward "
                "pass of its own choice probabilities (no sampling), and every head-to-head from the "
                "distributions (two solitaire bots never interact). Cached per rule set and bot.",
             "yatzy-harness evaluate scandinavian --entrants random,timeout,greedy,bonus,solver",
             "yatzy-harness evaluate scandinavian --entrants solver,solver:temperature=2 --seats 4 --json",
             "yatzy-harness evaluate yahtzee --entrants greedy,solver --out results/exact")
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument("--entrants", required=True, metavar="A,B,...", help="bots (name or name:key=value) to evaluate")
    add_set_option(p)
    add_cache_dir_option(p)
    p.add_argument("--seats", type=int, default=2, metavar="K",
                   help="also each bot's chance of being sole best / sharing the top against K-1 copies of each other")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", default=None, metavar="DIR", help="write evaluate.json, evaluate.md and a plot there")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `evaluate --help` must not pay for numba
    from harness import render
    from harness.cache import use_cache_dir
    from harness.evaluate import head_to_head
    from harness.rules import load_rules

    cache_dir = use_cache_dir(args.cache_dir)
    rules = load_rules(args.rules, args.settings)
    bots = [b for b in (x.strip() for x in args.entrants.split(",")) if b]
    h2h = head_to_head(rules, bots, args.seats, cache_dir, progress=not args.json)
    if args.out:
        from harness.plot import plot_exact_distributions

        out = new_out_dir(args.out, "evaluate")
        (out / "evaluate.json").write_text(json.dumps(h2h.to_json(), indent=2))
        (out / "evaluate.md").write_text(render.markdown(h2h.tables(), f"Exact evaluation, {rules.name}",
                                                         [rules.summary()]))
        plot_exact_distributions(h2h.evaluations).savefig(out / "distributions.png")
    if args.json:
        print_json(h2h.to_json())
    else:
        print(render.text(h2h.tables(), [f"exact evaluation: {rules.name} ({rules.summary()})"]))
    return 0

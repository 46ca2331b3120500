"""``yatzy-harness odds``: the chance of making each lower box within one turn (best keeps for that box)."""

from __future__ import annotations

import argparse

from harness.commands.options import add_set_option, describe, print_json


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "For every lower box, the probability of meeting its requirement within "
        "one turn when the keeps maximise that probability (empty sheet).",
        "yatzy-harness odds scandinavian",
        "yatzy-harness odds yahtzee --json",
        "yatzy-harness odds scandinavian --set include_pairs=false",
    )
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    add_set_option(p)
    p.add_argument("--json", action="store_true", help="print {box: probability} as JSON")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `odds --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.game.rules import load_rules
    from harness.exact.solver import one_turn_odds

    rules = load_rules(args.rules, args.settings)
    odds = one_turn_odds(rules)
    if args.json:
        print_json(odds)
        return 0
    width = max(map(len, odds))
    print(f"{rules.name}: probability of making each lower box within one turn (best keeps for that box)")
    for name, p in odds.items():
        print(f"  {name:<{width}} {100 * p:7.3f} %")
    return 0

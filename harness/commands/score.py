"""``yatzy-harness score``: the score of one roll in every box of a rule set (empty sheet)."""

from __future__ import annotations

import argparse

from harness.commands.options import add_set_option, describe, print_json
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Print the score of one roll in every box of a rule set (empty sheet).",
        "yatzy-harness score scandinavian 6 6 4 4 1",
        "yatzy-harness score generala 1 2 3 4 5 --first-roll --json",
        "yatzy-harness score scandinavian 6 6 6 6 6 --set yatzy_scoring=flat_plus_sum",
    )
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument("dice", metavar="DIE", nargs="+", help="a die face, 1..6 (as many as the rule set has dice)")
    p.add_argument("--first-roll", action="store_true", help="the dice were made on the turn's first roll (servida)")
    p.add_argument("--json", action="store_true", help="print {box: score} as JSON")
    add_set_option(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `score --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    import numpy as np

    from harness.game.rules import load_rules
    from harness.game.scoring import context, score_options

    rules = load_rules(args.rules, args.settings)
    if len(args.dice) != rules.n_dice:
        raise UserError(f"rule set {rules.name} plays {rules.n_dice} dice, got {len(args.dice)}: {' '.join(args.dice)}")
    try:
        faces = [int(x) for x in args.dice]
    except ValueError:
        raise UserError(f"dice must be whole numbers 1..6, got {' '.join(args.dice)}") from None
    if any(not 1 <= f <= 6 for f in faces):
        raise UserError(f"dice must be 1..6, got {' '.join(args.dice)}")
    roll = int(rules.dice.roll_index_of_faces(np.array(faces)))
    out = np.empty(rules.n_boxes, dtype=np.int16)
    # an empty sheet, not on the first roll: the plain score of each box (servida via --first-roll).
    # The scoring kernel's own source, run as Python (numba's py_func): one roll does not need the
    # compiled kernel, whose first call costs 0.5-0.9 s (benchmarks/BENCHMARKS.md, 'Start-up')
    score_options.py_func(context(rules), roll, args.first_roll, False, 0, out)
    scores = {name: int(v) for name, v in zip(rules.box_names, out)}
    if args.json:
        print_json(scores)
    else:
        width = max(map(len, scores))
        for name, v in scores.items():
            print(f"{name:<{width}} {v:>4}")
    return 0

"""The ``yatzy-harness`` command line: one subcommand per capability, errors as one line and exit 2.

Each capability module that has a subcommand exposes ``add_commands(subparsers)``; the modules
are listed in :data:`COMMAND_MODULES` and imported only when the parser is built.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Sequence

from harness.console import HelpFormatter, add_set_option, examples, print_json
from harness.errors import RunFailed, UserError

#: Modules contributing subcommands, in the order they appear in ``--help``.
COMMAND_MODULES: tuple[str, ...] = (
    "harness.cli",
    "harness.runner",
    "harness.replay",
    "harness.record",
    "harness.solve_cmd",
    "harness.positions",
    "harness.report",
    "harness.compare",
    "harness.calibrate",
    "harness.skill",
    "harness.fit",
)

EXIT_USAGE = 2
#: Games could not be played to the end (a bot failed); the run directory is resumable.
EXIT_RUN_FAILED = 1
#: What a shell reports for a process killed by SIGPIPE (128 + 13): ``... | head`` closed stdout.
EXIT_BROKEN_PIPE = 141


# ---------------------------------------------------------------------------------------------
# rules, score, strategies


def _cmd_rules(args: argparse.Namespace) -> int:
    from harness.rules import builtin_rule_sets, load_rules

    # "rules NAME" is "rules show NAME": argparse puts a lone NAME into the first positional
    name = args.name if args.action == "show" else args.action
    if args.action == "show" and not args.name:
        raise UserError("rules show needs a rule set NAME (a built-in name or a .toml path)")
    if args.action != "show" and args.name:
        raise UserError(f"rules takes one rule set, got {args.action!r} and {args.name!r} (usage: rules [show] NAME)")
    if name is None:
        if args.settings:
            raise UserError("--set needs a rule set: rules NAME --set KEY=VALUE")
        sets = [load_rules(n).describe() for n in builtin_rule_sets()]
        if args.json:
            print_json([{k: s[k] for k in ("name", "title", "description", "summary", "dice", "perfect_score")}
                        | {"boxes": len(s["boxes"])} for s in sets])
        else:
            for s in sets:
                print(f"{s['name']:<14} {s['summary']}\n{'':<14} {s['description']}")
        return 0
    desc = load_rules(name, args.settings).describe()
    if args.json:
        print_json(desc)
        return 0
    title = desc["name"] if desc["title"] == desc["name"] else f"{desc['title']} ({desc['name']})"
    print(f"{title}: {desc['description']}")
    print(f"{desc['summary']}; {desc['rolls_per_turn']} rolls a turn; perfect sheet {desc['perfect_score']}")
    print("settings: " + ", ".join(f"{k}={v}" for k, v in desc["settings"].items()))
    if desc["overrides"]:
        print("changed by --set: " + ", ".join(f"{k}={v}" for k, v in desc["overrides"].items()))
    for b in desc["boxes"]:
        print(f"  {b['section']:<5} {b['name']:<18} {b['kind']:<12} max {b['max']}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    import numpy as np

    from harness.rules import load_rules
    from harness.scoring import context, score_options

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
    # an empty sheet, not on the first roll: the plain score of each box (servida via --first-roll)
    score_options(context(rules), roll, args.first_roll, False, 0, out)
    scores = {name: int(v) for name, v in zip(rules.box_names, out)}
    if args.json:
        print_json(scores)
    else:
        width = max(map(len, scores))
        for name, v in scores.items():
            print(f"{name:<{width}} {v:>4}")
    return 0


def _cmd_strategies(args: argparse.Namespace) -> int:
    from harness.registry import describe
    from harness.strategy import range_text

    def bounds(lo: Any, hi: Any) -> str:  # an open end is left out, not printed as None
        text = range_text(lo, hi)
        return f" {text}" if text else ""

    items = describe()
    if args.json:
        print_json(items)
        return 0
    for s in items:
        print(f"{s['name']:<10} {s['description']}")
        for p in s["params"]:
            print(f"    {p['name']}={p['default']} ({p['type']}{bounds(p['min'], p['max'])}): {p['description']}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list rule sets, or show one sheet",
                       description="List the built-in rule sets, or show one with its boxes, their maxima and\n"
                                   "the effective settings ('rules NAME' is 'rules show NAME'). The rules\n"
                                   "themselves are described in configs/rules/README.md.",
                       epilog=examples("yatzy-harness rules",
                                       "yatzy-harness rules scandinavian --set upper_bonus_threshold=62",
                                       "yatzy-harness rules show ./my_house.toml --json"))
    p.add_argument("action", nargs="?", metavar="show", help="optional word; 'rules show NAME' = 'rules NAME'")
    p.add_argument("name", nargs="?", metavar="NAME", help="built-in rule set name or path to a .toml file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_set_option(p)
    p.set_defaults(func=_cmd_rules)

    p = sub.add_parser("score", help="score one roll in every box",
                       description="Print the score of one roll in every box of a rule set (empty sheet).",
                       epilog=examples("yatzy-harness score scandinavian 6 6 4 4 1",
                                       "yatzy-harness score generala 1 2 3 4 5 --first-roll --json",
                                       "yatzy-harness score scandinavian 6 6 6 6 6 --set yatzy_scoring=flat_plus_sum"))
    p.add_argument("rules", metavar="RULES", help="rule set name or .toml path")
    p.add_argument("dice", metavar="DIE", nargs="+", help="a die face, 1..6 (as many as the rule set has dice)")
    p.add_argument("--first-roll", action="store_true", help="the dice were made on the turn's first roll (servida)")
    p.add_argument("--json", action="store_true", help="print {box: score} as JSON")
    add_set_option(p)
    p.set_defaults(func=_cmd_score)

    p = sub.add_parser("strategies", help="list bots with their parameters",
                       description="List the registered bots (built-in and plugins) with their parameters. "
                                   "Name a bot (in --seats, --entrants or a run config) as NAME or NAME:KEY=VALUE,...",
                       epilog=examples("yatzy-harness strategies",
                                       "yatzy-harness strategies --json",
                                       "yatzy-harness replay --rules standard --seats solver:temperature=1,greedy "
                                       "--seed 1 --game 0"))
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_strategies)


# ---------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse's own usage errors: one line, exit 2
        raise UserError(message if self.prog == "yatzy-harness" else f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="yatzy-harness",
                     description="Yatzy-family bots playing each other by the million.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = sys.modules[__name__] if name == __name__ else importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a capability not built yet
        module.add_commands(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("yatzy-harness")
    except PackageNotFoundError:  # running from a checkout that was not installed
        return "(not installed)"


def _quiet_broken_pipe() -> int:
    """stdout's reader went away (``... | head``): stop quietly, as Unix tools do.

    Point stdout at /dev/null so that the interpreter's final flush does not raise again.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"yatzy-harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunFailed as exc:
        verbose = getattr(exc, "verbose", None)  # set by commands that have a --verbose flag
        if verbose and exc.details:
            print(exc.details.rstrip("\n"), file=sys.stderr)
        hint = "\n  (--verbose prints the traceback here)" if exc.details and verbose is False else ""
        print(f"yatzy-harness: {exc}{hint}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        print("yatzy-harness: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

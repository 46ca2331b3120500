"""``yatzy-harness rules``: list the built-in rule sets, or show one sheet with its settings."""

from __future__ import annotations

import argparse

from harness.commands.options import add_set_option, describe, print_json
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "List the built-in rule sets, or show one with its boxes, their maxima and\n"
        "the effective settings ('rules NAME' is 'rules show NAME'). The rules\n"
        "themselves are described in configs/rules/README.md.",
        "yatzy-harness rules",
        "yatzy-harness rules scandinavian --set upper_bonus_threshold=62",
        "yatzy-harness rules show ./my_house.toml --json",
    )
    p.add_argument("action", nargs="?", metavar="show", help="optional word; 'rules show NAME' = 'rules NAME'")
    p.add_argument("name", nargs="?", metavar="NAME", help="built-in rule set name or path to a .toml file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_set_option(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `rules --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.game.rules import builtin_rule_sets, load_rules

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
            print_json(
                [
                    {k: s[k] for k in ("name", "title", "description", "summary", "dice", "perfect_score")}
                    | {"boxes": len(s["boxes"])}
                    for s in sets
                ]
            )
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

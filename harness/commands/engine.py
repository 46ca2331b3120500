"""``yatzy-harness engine``: external engines: ``check`` one for conformance, ``play`` a harness bot over stdio."""

from __future__ import annotations

import argparse
import sys

from harness.commands.options import describe, number_arg, print_json
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "External engines (bots in other processes or languages, speaking the engine protocol\n"
        "of docs/engines.md over stdin/stdout or HTTP).\n\n"
        "  check TARGET   drive an engine through every decision kind of every rule set it\n"
        "                 claims and print a pass/fail table (exit 1 when a check fails).\n"
        "                 TARGET is a command line, a URL, an engine file (configs/engines/NAME\n"
        "                 or a .toml path) or an engine:... spec.\n"
        "  play           be an engine: speak the protocol on stdin/stdout with a harness bot\n"
        "                 (--bot SPEC, or --level NAME of a levels file), so the harness's own\n"
        "                 bots play in other harnesses.",
        'yatzy-harness engine check "node examples/engines/js/greedy.js"',
        "yatzy-harness engine check greedy-py --rules scandinavian,yahtzee",
        "yatzy-harness engine check http://127.0.0.1:8000/decide --json",
        "yatzy-harness engine play --bot greedy",
        "yatzy-harness engine play --level casual --levels configs/difficulty/default.toml",
    )
    p.add_argument("action", choices=("check", "play"), help="check an engine, or play as one")
    p.add_argument("target", nargs="?", metavar="TARGET", help="check: the engine (command, URL, engine file or spec)")
    p.add_argument("--rules", help="check: only these rule sets (comma-separated; default: every one it claims)")
    p.add_argument(
        "--games",
        type=number_arg(minimum=0, inclusive=True, integer=True),
        default=20,
        help="check: full games per rule set against itself (default 20; 0 skips them)",
    )
    p.add_argument(
        "--move-ms",
        type=number_arg(minimum=0.001),
        default=None,
        help="check: budget per decision in ms (default: the engine's, else 100)",
    )
    p.add_argument(
        "--seed",
        type=number_arg(minimum=0, inclusive=True, integer=True),
        default=2026,
        help="check: seed of the positions and games (default 2026)",
    )
    p.add_argument("--json", action="store_true", help="check: machine-readable output")
    p.add_argument("--bot", help="play: the bot to play as (a strategy spec, e.g. solver:temperature=1)")
    p.add_argument("--level", help="play: a difficulty level's name in --levels")
    p.add_argument("--levels", help="play: the levels file (default configs/difficulty/default.toml)")


def target_spec(target: str) -> str:
    """An engine spec from what a user names: a URL, an engine file, an ``engine:`` spec, or a command."""
    from pathlib import Path

    from harness.play.protocol.engine_file import engines_dir

    t = target.strip()
    if t.startswith("engine:"):
        return t
    if t.startswith(("http://", "https://")):
        return f"engine:url={t}"
    if t.endswith(".toml") or (" " not in t and (engines_dir() / f"{t}.toml").is_file()):
        return f"engine:file={t}"
    if Path(t).is_file() and t.endswith(".py"):
        return f'engine:cmd="{sys.executable} {t}"'
    return f"engine:cmd={t!r}" if '"' in t else f'engine:cmd="{t}"'


def run(args: argparse.Namespace) -> int:
    if args.action == "play":
        # the serving side loads bots and tables: imported only when an engine plays
        from harness.service.serve import play_stdio

        if args.target:
            raise UserError("engine play takes no TARGET: it plays on stdin/stdout (--bot SPEC or --level NAME)")
        return play_stdio(bot=args.bot, level=args.level, levels=args.levels)
    if not args.target:
        raise UserError('engine check needs a TARGET: a command ("node bot.js"), a URL, an engine file or spec')
    # the checker plays games: numpy and the engine are imported only when a check runs
    from harness.play.protocol.check import check_engine
    from harness.util.specs import split_specs

    spec = target_spec(args.target)
    if args.move_ms is not None:
        spec += f",move_ms={args.move_ms}"
    rules = split_specs(args.rules) if args.rules else []
    progress = None if args.json or not sys.stderr.isatty() else (lambda s: print(s, file=sys.stderr))
    report = check_engine(spec, rules=rules, games=int(args.games), seed=int(args.seed), progress=progress)
    if args.json:
        print_json(report.to_dict())
        return 0 if report.passed else 1
    hello = report.hello or {}
    name = hello.get("name", "?")
    print(f"engine {name} {hello.get('version', '')} by {hello.get('author', '?')}: {report.target}".replace("  ", " "))
    print(f"  protocol {hello.get('protocol', '?')}, rule sets: {', '.join(hello.get('rules', []) or ['?'])}")
    width = max([len(r.rules) for r in report.rows] + [5])
    cw = max([len(r.check) for r in report.rows] + [5])
    print(f"  {'rules':<{width}}  {'check':<{cw}}  result")
    for r in report.rows:
        mark = "pass" if r.passed else "FAIL"
        print(
            f"  {r.rules or '-':<{width}}  {r.check:<{cw}}  {mark}"
            + (f"  {r.detail}" if r.detail and not r.passed else "")
        )
    n_fail = len(report.failures)
    print(f"{len(report.rows) - n_fail} passed, {n_fail} failed" if report.rows else "no check ran")
    return 0 if report.passed else 1

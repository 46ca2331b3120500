"""MkDocs hook: the command-line reference, generated at build time from the CLI's own parser.

``docs/reference/cli.md`` holds the marker ``<!-- cli-reference -->``; this hook replaces it with
one section per command, walked from :func:`harness.cli.build_parser` and each command's
subparser (description, usage, a table of arguments, the examples of its epilog). Nothing is
copied by hand, so the reference cannot drift from ``yatzy-harness COMMAND --help``.

It also publishes the example pictures under ``benchmarks/example_*/`` (made by the harness and
committed beside the benchmarks) so that pages can show them without a second copy.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- cli-reference -->"
PICTURES = ("example_report", "example_review", "example_sweep", "example_export")


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        metavar = (
            action.metavar
            if isinstance(action.metavar, str)
            else ("{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper())
        )
        metavar = " " + metavar
    return ", ".join(f"`{o}{metavar}`" for o in action.option_strings)


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    formatter = parser._get_formatter()
    text = formatter._expand_help(action) if action.help else ""  # %(default)s and friends
    d = action.default
    if (
        "default" not in text
        and action.option_strings
        and action.nargs != 0
        and d not in (None, False, [], argparse.SUPPRESS)
    ):
        text += f" (default: {d})"
    return _cell(text)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _command(name: str, p: argparse.ArgumentParser, level: int) -> list[str]:
    out = [f"{'#' * level} `{p.prog}`", ""]
    if p.description:
        out += [p.description.strip(), ""]
    usage = p.format_usage().removeprefix("usage: ").strip()
    out += ["```text", usage, "```", ""]
    rows = [a for a in p._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if rows:
        out += ["| argument | what it does |", "|---|---|"]
        out += [f"| {_flags(a)} | {_help(a, p)} |" for a in rows]
        out.append("")
    if p.epilog:
        out += ["```text", p.epilog.strip("\n"), "```", ""]
    for sub_name, sub in _subparsers(p).items():  # nested commands (engine check, engine play)
        out += _command(sub_name, sub, level + 1)
    return out


def cli_reference() -> str:
    """The whole reference as Markdown: the program's own options, then every command."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from harness.cli import build_parser

    parser = build_parser()
    out = ["## `yatzy-harness`", "", "```text", parser.format_help().strip(), "```", ""]
    for name, p in _subparsers(parser).items():
        out += _command(name, p, 2)
    return "\n".join(out)


def on_files(files: Files, config) -> Files:
    for folder in PICTURES:
        for png in sorted((ROOT / "benchmarks" / folder).glob("*.png")):
            files.append(File.generated(config, f"benchmarks/{folder}/{png.name}", abs_src_path=str(png)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown

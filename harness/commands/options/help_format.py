"""How a command's help reads: the help formatter (epilogs as written, meaningful defaults shown)
and a command's description with its examples.
"""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps epilogs as written and shows an option's default when it has a meaningful one.

    A default of None, False or an empty list is not shown (it means "not given"); a help text
    that already says ``default`` is left alone.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        d = action.default
        if (
            "default" in text
            or d is None
            or d is False
            or d == []
            or d is argparse.SUPPRESS
            or not action.option_strings
            or isinstance(action, argparse._HelpAction)
        ):
            return text
        return f"{text} (default: %(default)s)"


def examples(*lines: str) -> str:
    """An ``epilog`` listing example command lines (kept as written by :class:`HelpFormatter`)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def describe(p: argparse.ArgumentParser, description: str, *example_lines: str) -> None:
    """Set a command's description and its examples (the registry gave it its one-line summary)."""
    p.description = description
    p.epilog = examples(*example_lines)

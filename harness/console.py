"""Console helpers shared by every subcommand: JSON output, common options, help formatting.

Command modules import from here, never from :mod:`harness.cli` (which imports them), so the
command line has no import loop.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence


def jsonable(o: Any) -> Any:
    """A JSON-safe copy: NaN/inf -> None, numpy scalars and arrays -> Python, tuples -> lists."""
    import numpy as np

    if isinstance(o, dict):
        return {str(k): jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return jsonable(o.tolist())
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, (float, np.floating)):
        f = float(o)
        return f if math.isfinite(f) else None
    return o


def print_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON on stdout (NaN and inf as null)."""
    json.dump(jsonable(obj), sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def add_set_option(p: argparse.ArgumentParser) -> None:
    """The repeatable ``--set KEY=VALUE`` rule-setting override."""
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="change a rule setting (repeatable), e.g. --set upper_bonus_threshold=62")


def confidence_arg(raw: str) -> float:
    """argparse type for a confidence level in (0, 1)."""
    try:
        v = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}")
    return v


def examples(*lines: str) -> str:
    """An ``epilog`` listing example command lines (kept as written by :class:`HelpFormatter`)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps epilogs as written and shows an option's default when it has a meaningful one.

    A default of None, False or an empty list is not shown (it means "not given"); a help text
    that already says ``default`` is left alone.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        d = action.default
        if ("default" in text or d is None or d is False or d == [] or d is argparse.SUPPRESS
                or not action.option_strings or isinstance(action, argparse._HelpAction)):
            return text
        return f"{text} (default: %(default)s)"


def positive_or_zero(name: str) -> Any:
    """argparse type: an integer >= 0, the error naming the option."""
    def parse(raw: str) -> int:
        try:
            v = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {raw!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be 0 or more, got {raw!r}")
        return v
    return parse

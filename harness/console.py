"""Console helpers shared by every subcommand: JSON output, common options, help formatting.

Command modules import from here, never from :mod:`harness.cli` (which imports them), so the
command line has no import loop.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any


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


def number_arg(*, minimum: float = 0.0, inclusive: bool = False, integer: bool = False,
               maximum: float | None = None) -> Any:
    """argparse type: a finite number above ``minimum`` (or at least it, when ``inclusive``) and at
    most ``maximum``; a whole number when ``integer``. argparse names the option in the error."""
    def parse(raw: str) -> float | int:
        kind = "a whole number" if integer else "a number"
        try:
            v: float | int = int(raw) if integer else float(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {raw!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {raw!r}")
        low_ok = v >= minimum if inclusive else v > minimum
        if not low_ok or (maximum is not None and v > maximum):
            low = f"{'at least' if inclusive else 'more than'} {minimum:g}"
            span = f"{low} and at most {maximum:g}" if maximum is not None else low
            raise argparse.ArgumentTypeError(f"must be {span}, got {raw}")
        return v
    return parse


# ---------------------------------------------------------------------------------------------
# the solver's cache directory, the same for every command

#: The environment variable that names the solver cache directory; ``--cache-dir`` sets it for
#: this process and every process it starts (forked workers, a local Dask cluster).
CACHE_ENV = "YATZY_HARNESS_CACHE"


def add_cache_dir_option(p: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR``: where solved value tables and keep policies are found and written.

    The command then calls :func:`use_cache_dir` with ``args.cache_dir`` before it makes any bot.
    """
    p.add_argument("--cache-dir", metavar="DIR",
                   help=f"solver cache directory: value tables and keep policies are read and written here "
                        f"(default: ${CACHE_ENV}, else $XDG_CACHE_HOME/yatzy-harness or ~/.cache/yatzy-harness)")


def use_cache_dir(path: str | os.PathLike[str] | None, where: str = "--cache-dir") -> Path | None:
    """Make ``path`` the solver cache directory of this process and of the processes it starts.

    ``None`` leaves ``$YATZY_HARNESS_CACHE`` (or the default) in force. Returns the absolute
    directory set, or None. ``where`` names the option or config key in the error message.
    """
    if path is None:
        return None
    from harness.errors import UserError

    text = os.fspath(path)
    if not text.strip():
        raise UserError(f"{where} must be a directory path, got {text!r}")
    p = Path(text).expanduser().resolve()
    if p.exists() and not p.is_dir():
        raise UserError(f"{where} {text}: not a directory")
    # the environment, not a module variable: forked workers and a LocalCluster's spawned workers
    # read the same value through solver.default_cache_dir()
    os.environ[CACHE_ENV] = str(p)
    return p


# ---------------------------------------------------------------------------------------------
# logging on the console

#: ``extra=`` of a log record that belongs in the run's log only: the command prints its own
#: summary of the same event on stderr (a failing bot's traceback, a run that stopped).
RUN_LOG_ONLY: dict[str, Any] = {"run_log_only": True}


class _NotRunLogOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "run_log_only", False)


def console_logging(level: int = logging.WARNING) -> None:
    """Warnings and errors on stderr, one line each, without the records marked :data:`RUN_LOG_ONLY`."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for h in logging.getLogger().handlers:
        if type(h) is logging.StreamHandler and not any(isinstance(f, _NotRunLogOnly) for f in h.filters):
            if h.level == logging.NOTSET:
                h.setLevel(level)
            h.addFilter(_NotRunLogOnly())

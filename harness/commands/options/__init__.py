"""What every command shares, by topic: the help formatter and examples
(:mod:`~harness.commands.options.help_format`), argparse types (:mod:`~harness.commands.options.argtypes`),
the options many commands take (:mod:`~harness.commands.options.common`), those of exact
evaluations (:mod:`~harness.commands.options.exact`) and of game records
(:mod:`~harness.commands.options.records`), what a command prints (:mod:`~harness.commands.options.output`,
and :func:`first_time` here) and console logging (:mod:`~harness.commands.options.console`).
Every name is given here: ``from harness.commands.options import X``.

Only the commands wing and :mod:`harness.cli` import this package (the library takes typed
arguments and never reads argparse namespaces).
"""

from __future__ import annotations

from harness.commands.options.argtypes import confidence_arg, number_arg
from harness.commands.options.common import (
    add_cache_dir_option,
    add_quality_options,
    add_set_option,
    new_out_dir,
    quality_options,
)
from harness.commands.options.console import console_logging, end_bars
from harness.commands.options.exact import (
    DEPTH_DIAL,
    DEPTH_DIALS,
    DEPTH_RATES,
    DEPTH_WEAKEST,
    add_backend_options,
    add_depth_mode_options,
    add_depth_options,
    add_window_options,
    depth_settings,
    evaluated_line,
    exact_tasks,
    shows_progress,
    window_limits,
)
from harness.commands.options.help_format import HelpFormatter, describe, examples
from harness.commands.options.output import print_json, say
from harness.commands.options.records import (
    MAX_LINE_BYTES,
    add_quiet_option,
    add_records_options,
    listed,
    quiet,
    record_of,
    same_game,
    show_bad,
    stream_games,
)
from harness.util.errors import RUN_LOG_ONLY

#: The notes said in this process (:func:`first_time`); kept here, where a test resets it.
_SAID: set[str] = set()


def first_time(note: str) -> bool:
    """Whether ``note`` has not been said yet in this process (and from now on it has): a note that
    every report and compare would repeat (the depth of skill not cached) is said once; the files a
    report writes keep it whole."""
    new = note not in _SAID
    _SAID.add(note)
    return new


__all__ = [
    "DEPTH_DIAL",
    "DEPTH_DIALS",
    "DEPTH_RATES",
    "DEPTH_WEAKEST",
    "MAX_LINE_BYTES",
    "RUN_LOG_ONLY",
    "HelpFormatter",
    "add_backend_options",
    "add_cache_dir_option",
    "add_depth_mode_options",
    "add_depth_options",
    "add_quality_options",
    "add_quiet_option",
    "add_records_options",
    "add_set_option",
    "add_window_options",
    "confidence_arg",
    "console_logging",
    "depth_settings",
    "describe",
    "end_bars",
    "evaluated_line",
    "exact_tasks",
    "examples",
    "first_time",
    "listed",
    "new_out_dir",
    "number_arg",
    "print_json",
    "quality_options",
    "quiet",
    "record_of",
    "same_game",
    "say",
    "show_bad",
    "shows_progress",
    "stream_games",
    "window_limits",
]

"""Console logging: warnings and errors on stderr, one line each, written above a progress bar
rather than on its line, without the records meant for a run's log only.
"""

from __future__ import annotations

import logging
import sys
from typing import Any


class _NotRunLogOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "run_log_only", False)


def _live_bars() -> list[Any]:
    """The progress bars drawn now (:mod:`harness.util.progress`, the runner's): none unless tqdm is loaded."""
    tq = sys.modules.get("tqdm")
    return list(getattr(getattr(tq, "tqdm", None), "_instances", ()))


class _ConsoleHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr, one line a record. While a progress bar is drawn its line has no end yet: a record
    written plainly would be glued to it (the runner's "interrupted" warning after a Ctrl-C, issue
    37), so it goes through tqdm, which clears the bar's line, writes the record and draws the bar
    again below it."""

    def emit(self, record: logging.LogRecord) -> None:
        if not _live_bars():
            super().emit(record)
            return
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=self.stream)
        except Exception:
            self.handleError(record)


def end_bars() -> None:
    """Close every progress bar still drawn (one that a step stopped by Ctrl-C left behind), so that
    what is printed next starts a line of its own instead of ending the bar's."""
    for b in _live_bars():
        b.close()


def console_logging(level: int = logging.WARNING) -> None:
    """Warnings and errors on stderr, one line each (above a progress bar, not on its line), without
    the records marked :data:`harness.util.errors.RUN_LOG_ONLY`."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", handlers=[_ConsoleHandler()])
    for h in logging.getLogger().handlers:
        if type(h) in (logging.StreamHandler, _ConsoleHandler) and not any(
            isinstance(f, _NotRunLogOnly) for f in h.filters
        ):
            if h.level == logging.NOTSET:
                h.setLevel(level)
            h.addFilter(_NotRunLogOnly())

"""Progress bars on stderr: how the library shows how far a long step has come.

Off unless the caller asks (``quiet=False``); the commands ask when stderr is a terminal and no
``--quiet`` was given (:func:`harness.commands.options.quiet`). One look for every bar: it
redraws at most 10 times a second, fits the terminal's width and is erased when done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm


def bar(total: float | None, desc: str, unit: str, *, quiet: bool = True, **kw: Any) -> tqdm:
    """A progress bar of ``total`` ``unit`` (None: a count without an end); ``quiet``: none."""
    # imported here: the modules that may draw a bar (the solver, the records' reader) are loaded by
    # commands that draw none, and tqdm takes ~0.015 s to import (a review's start-up)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=quiet, dynamic_ncols=True, leave=False, **kw)


__all__ = ["bar"]

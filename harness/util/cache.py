"""The solver's cache directory: where value tables, keep policies and target tables are found and written."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from harness.util.errors import UserError

#: The environment variable a user sets to name the solver cache directory (read, never written by
#: the library); the jobs layer sets it in the Dask workers it starts (:mod:`harness.jobs.cluster`).
CACHE_ENV = "YATZY_HARNESS_CACHE"

#: The cache directory of the job running in this process (:func:`using_cache_dir`), or None. A
#: module variable, not the environment: it is the job's, restored when the job ends, and forked
#: workers inherit it with the rest of the job's memory.
_JOB_DIR: Path | None = None


def default_cache_dir() -> Path:
    """The running job's directory (:func:`using_cache_dir`), else ``$YATZY_HARNESS_CACHE``, else
    ``$XDG_CACHE_HOME/yatzy-harness``, else ``~/.cache/yatzy-harness``. Read at every call."""
    if _JOB_DIR is not None:
        return _JOB_DIR
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "yatzy-harness"


def check_cache_dir(path: str | os.PathLike[str] | None, where: str = "--cache-dir") -> Path | None:
    """``path`` as an absolute directory (None stays None); a UserError naming ``where`` (the option
    or config key) when it is blank or a file."""
    if path is None:
        return None
    text = os.fspath(path)
    if not text.strip():
        raise UserError(f"{where} must be a directory path, got {text!r}")
    p = Path(text).expanduser().resolve()
    if p.exists() and not p.is_dir():
        raise UserError(f"{where} {text}: not a directory")
    return p


@contextlib.contextmanager
def using_cache_dir(path: str | os.PathLike[str] | None, where: str = "--cache-dir") -> Iterator[Path | None]:
    """For the length of the block, ``path`` is this process's cache directory and that of the
    workers it forks (``None``: the one in force stays). The one before is back when the block is
    left, so two jobs one after the other in one process each use their own. Yields the absolute
    directory set, or None."""
    global _JOB_DIR
    p = check_cache_dir(path, where)
    before = _JOB_DIR
    if p is not None:
        _JOB_DIR = p
    try:
        yield p
    finally:
        _JOB_DIR = before


def select_cache_dir(path: str | os.PathLike[str] | None, where: str = "--cache-dir") -> Path | None:
    """For the command line's wing: ``path`` is the cache directory until the command ends
    (:func:`harness.cli.main` restores the one before, :func:`command_scope`). None: unchanged."""
    global _JOB_DIR
    p = check_cache_dir(path, where)
    if p is not None:
        _JOB_DIR = p
    return p


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """One command's length: the cache directory a command selects is forgotten when it ends."""
    global _JOB_DIR
    before = _JOB_DIR
    try:
        yield
    finally:
        _JOB_DIR = before

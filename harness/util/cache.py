"""The solver's cache directory: where value tables, keep policies and target tables are found and written."""

from __future__ import annotations

import os
from pathlib import Path

from harness.util.errors import UserError

#: The environment variable that names the solver cache directory; :func:`use_cache_dir` sets it for
#: this process and every process it starts (forked workers, a local Dask cluster).
CACHE_ENV = "YATZY_HARNESS_CACHE"


def default_cache_dir() -> Path:
    """``$YATZY_HARNESS_CACHE``, else ``$XDG_CACHE_HOME/yatzy-harness``, else ``~/.cache/yatzy-harness``.

    Read at every call: the ``--cache-dir`` option of every command and a run config's
    ``cache_dir`` key set ``$YATZY_HARNESS_CACHE`` (:func:`use_cache_dir`), so the bots of a run
    and its workers find the tables ``solve --cache-dir`` wrote.
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "yatzy-harness"


def use_cache_dir(path: str | os.PathLike[str] | None, where: str = "--cache-dir") -> Path | None:
    """Make ``path`` the solver cache directory of this process and of the processes it starts.

    ``None`` leaves ``$YATZY_HARNESS_CACHE`` (or the default) in force. Returns the absolute
    directory set, or None. ``where`` names the option or config key in the error message.
    """
    if path is None:
        return None
    text = os.fspath(path)
    if not text.strip():
        raise UserError(f"{where} must be a directory path, got {text!r}")
    p = Path(text).expanduser().resolve()
    if p.exists() and not p.is_dir():
        raise UserError(f"{where} {text}: not a directory")
    # the environment, not a module variable: forked workers and a LocalCluster's spawned workers
    # read the same value through default_cache_dir()
    os.environ[CACHE_ENV] = str(p)
    return p

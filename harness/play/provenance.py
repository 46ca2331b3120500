"""Where a run was played, as its manifest records it: the time, the packages' versions, the harness's git revision."""

from __future__ import annotations

import datetime as _dt
import platform
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def now() -> str:
    """The time in UTC, to the second (ISO 8601)."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def versions(backend: str) -> dict[str, str]:
    """The versions of Python and the packages a run's bytes depend on (Dask's too on that backend)."""
    out = {"python": platform.python_version()}
    names = ["yatzy-harness", "numpy", "numba", "pandas", "pyarrow"]
    if backend == "dask":
        names += ["dask", "distributed"]
    for n in names:
        try:
            out[n] = version(n)
        except PackageNotFoundError:
            out[n] = "not installed"
    return out


_GIT: list[str | None] = []


def git_rev() -> str | None:
    """The harness checkout's revision (with ``-dirty`` when it has uncommitted changes), or None."""
    if not _GIT:
        here = Path(__file__).resolve().parent
        rev = None
        if shutil.which("git"):
            try:
                rev = (
                    subprocess.run(
                        ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
                    ).stdout.strip()
                    or None
                )
                if rev:
                    dirty = subprocess.run(
                        ["git", "status", "--porcelain", "--untracked-files=no"],
                        cwd=here,
                        capture_output=True,
                        text=True,
                        timeout=10,
                    ).stdout.strip()
                    rev += "-dirty" if dirty else ""
            except (OSError, subprocess.SubprocessError):
                rev = None
        _GIT.append(rev)
    return _GIT[0]

"""What every process of one exact job must share: the code's version, checked in each task.

Two processes with the same :func:`code_version` compute the same bits on the same kind of CPU, so a
task (an evaluation, a table solve, a block of target play's forward pass) refuses to run on a
worker whose code is not the client's (:func:`check_version`), and one cache is never written by two
versions of the code.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import harness
import strategies

_VERSION: str | None = None


def code_version() -> str:
    """A digest of the harness's and the bots' sources and of numpy's and numba's versions: two
    processes with the same one compute the same bits on the same kind of CPU."""
    global _VERSION
    if _VERSION is None:
        import numba
        import numpy

        h = hashlib.sha256(f"numpy {numpy.__version__} numba {numba.__version__}\n".encode())
        for pkg in (harness, strategies):
            root = Path(pkg.__file__).parent
            for f in sorted(root.rglob("*.py")):
                h.update(str(f.relative_to(root.parent)).encode() + b"\0" + f.read_bytes())
        _VERSION = h.hexdigest()[:16]
    return _VERSION


def check_version(version: str | None) -> None:
    """Refuse a task sent by a client whose code is not this process's (None: not checked)."""
    if version is not None and version != code_version():
        raise RuntimeError(f"worker {os.getpid()}: harness code {code_version()}, the client's is {version}")

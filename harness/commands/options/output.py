"""What a command prints on stdout: JSON, and its running commentary."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON on stdout (NaN and inf as null)."""
    from harness.util.jsonable import jsonable

    json.dump(jsonable(obj), sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def say(message: str) -> None:
    """A progress line on stdout, flushed at once (a command's running commentary)."""
    print(message, flush=True)

"""argparse types of the options: a confidence level, a number within bounds (argparse names the
option in the error).
"""

from __future__ import annotations

import argparse
import math
from typing import Callable


def confidence_arg(raw: str) -> float:
    """argparse type for a confidence level in (0, 1)."""
    try:
        v = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}")
    return v


def number_arg(
    *, minimum: float = 0.0, inclusive: bool = False, integer: bool = False, maximum: float | None = None
) -> Callable[[str], float | int]:
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

"""JSON-safe copies of results: NaN/inf as null, numpy scalars and arrays as Python values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def jsonable(o: Any) -> Any:
    """A JSON-safe copy: NaN/inf -> None, numpy scalars and arrays -> Python, tuples -> lists."""
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

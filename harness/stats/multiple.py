"""Multiple testing: Holm's step-down adjustment of a family of p-values.

Holm (1979), "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.*
6:65-70.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979, *Scand. J. Statist.* 6:65-70): reject the
    hypotheses whose adjusted p-value is below alpha and the family-wise error rate is at most
    alpha, whatever the dependence between the tests. NaN p-values are kept as NaN and do not count
    as tests."""
    p = [float(x) for x in p_values]
    live = sorted((x, i) for i, x in enumerate(p) if not math.isnan(x))
    m = len(live)
    out = [math.nan] * len(p)
    running = 0.0
    for k, (x, i) in enumerate(live):
        running = max(running, min(1.0, (m - k) * x))
        out[i] = running
    return out

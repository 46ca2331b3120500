"""Holm's adjusted p-values (harness.stats.multiple)."""

from __future__ import annotations

import math

import pytest

from harness.stats import holm


def test_holm_adjusted_p_values():
    # Holm (1979): sorted p times (m, m-1, ...), made monotone; NaN is no test
    assert holm([0.01, 0.04, 0.03, math.nan, 0.005]) == pytest.approx([0.03, 0.06, 0.06, math.nan, 0.02], nan_ok=True)
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []

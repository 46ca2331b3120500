"""Shared helpers: the one (lazy) import of scipy.stats, the confidence check, critical values.

The critical values are the normal and Student t quantiles ``ppf(0.5 + confidence / 2)`` of
scipy.stats; every module that needs scipy gets it from :func:`scipy_stats` here, so the import
stays lazy in one place.
"""

from __future__ import annotations

from typing import Any


def scipy_stats() -> Any:
    """scipy.stats, imported on first use (it costs about a second, which every CLI command would pay)."""
    # Lazy on purpose, and the only import of scipy in harness.stats: importing scipy.stats takes
    # about a second, and the CLI imports harness.stats at start-up (building its parser imports
    # report, compare, calibrate, ...) whether or not the command computes an interval. Keep
    # scipy out of module level, here and in every module of the package.
    from scipy import stats

    return stats


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float, checked to lie in (0, 1) (else ``ValueError``)."""
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def z_crit(confidence: float) -> float:
    """Two-sided standard normal critical value."""
    return float(scipy_stats().norm.ppf(0.5 + 0.5 * check_confidence(confidence)))


def t_crit(confidence: float, df: int) -> float:
    """Two-sided Student t critical value."""
    return float(scipy_stats().t.ppf(0.5 + 0.5 * check_confidence(confidence), df))

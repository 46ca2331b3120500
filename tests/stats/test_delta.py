"""delta_estimate (harness.stats.delta): the t interval of one mean, a ratio of means."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats import CoMoments, delta_estimate, mean_ci


def test_delta_estimate_of_one_mean_is_the_t_interval_and_of_a_ratio_matches_the_textbook():
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 2.0, size=(400, 2))
    c = CoMoments.of(x)
    e = delta_estimate(c, float(x[:, 0].mean()), [1.0, 0.0])
    m = mean_ci(x[:, 0])
    assert (e.value, e.lo, e.hi) == pytest.approx((m.mean, m.lo, m.hi), rel=1e-12)
    # ratio of means: se^2 = var(a - R b) / (n mean(b)^2)
    a, b = x[:, 0], x[:, 1] + 10
    c = CoMoments.of(np.column_stack([a, b]))
    r = a.mean() / b.mean()
    e = delta_estimate(c, r, [1 / b.mean(), -r / b.mean()])
    assert e.se == pytest.approx(np.std(a - r * b, ddof=1) / np.sqrt(400) / b.mean(), rel=1e-10)
    assert delta_estimate(c, 0.5, [0.0, 0.0], bounds=(0.0, 1.0)).hi == 0.5  # no variance: zero width
    assert delta_estimate(c, 0.99, [1.0, 0.0], bounds=(0.0, 1.0)).hi == 1.0  # clipped to the bounds

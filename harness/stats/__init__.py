"""Statistics for comparing Yatzy bots and rule variants over millions of games.

Everything here is a pure function or a dataclass: no I/O, no printing, no global state. Large
runs (10,000,000+ games) never need to be held in memory: score summaries are built chunk by
chunk with the streaming accumulators :class:`Moments` (mean/variance) and :class:`IntHistogram`
(exact integer score distribution), which can be merged across chunks, processes and machines in
any order. Win/draw/loss style results are just integer counts and are summed by the caller.

The package is split by topic, like fishtest's ``stats/``; each module names its sources. Import
from ``harness.stats`` itself: the names below are its public API, re-exported from

* :mod:`~harness.stats.moments`: :class:`Moments`, :class:`VecMoments`, :class:`CoMoments`
  (streaming accumulators), :func:`pentanomial_moments`, :func:`mean_ci`.
* :mod:`~harness.stats.proportions`: :func:`wilson`, :func:`rate`.
* :mod:`~harness.stats.paired`: :func:`paired_difference`, :func:`paired_difference_from_moments`.
* :mod:`~harness.stats.control_variates`: :func:`control_variate_mean` (the regression estimator
  of a mean, with a control of known mean).
* :mod:`~harness.stats.clustered`: :func:`clustered_mean` (a mean over clustered observations, a
  cluster-robust interval, optionally a control variate).
* :mod:`~harness.stats.delta`: :func:`delta_estimate` (delta-method interval of a smooth function
  of streamed means).
* :mod:`~harness.stats.multiple`: :func:`holm` (multiple testing).
* :mod:`~harness.stats.histogram`: :class:`IntHistogram`.
* :mod:`~harness.stats.distributions`: :func:`ks_2samp_counts`, :func:`anderson_ksamp_counts`.
* :mod:`~harness.stats.sprt`: :func:`sprt_bounds`, :func:`sprt_mean`, :func:`sprt_trinomial`,
  :func:`sprt_pentanomial`.
* :mod:`~harness.stats.elo`: :func:`elo_from_score`, :func:`score_from_elo`,
  :func:`elo_ci_from_pentanomial`.
* :mod:`~harness.stats.ratings`: :func:`bradley_terry`.

:mod:`~harness.stats.common` holds what the modules share (the lazy scipy import, critical
values). The modules import each other in one direction only (and :mod:`harness.util.sums`, the
dot products whose bits do not depend on the processor): each imports only modules before it in
the order common, moments, proportions, paired, control_variates, clustered, delta, multiple,
histogram, distributions, elo, sprt, ratings. Importing the package does not import scipy (it
costs about a second); the first computation that needs scipy imports it.
"""

from __future__ import annotations

from harness.stats.clustered import ClusteredMean, clustered_mean
from harness.stats.control_variates import ControlVariateMean, control_variate_mean
from harness.stats.delta import Estimate, delta_estimate
from harness.stats.distributions import DistTest, anderson_ksamp_counts, ks_2samp_counts
from harness.stats.elo import ELO_PER_NAT, elo_ci_from_pentanomial, elo_from_score, score_from_elo
from harness.stats.histogram import IntHistogram
from harness.stats.moments import (
    CoMoments,
    MeanCI,
    Moments,
    VecMoments,
    mean_ci,
    pentanomial_moments,
)
from harness.stats.multiple import holm
from harness.stats.paired import PairedDiff, paired_difference, paired_difference_from_moments
from harness.stats.proportions import Rate, rate, wilson
from harness.stats.ratings import Ratings, bradley_terry
from harness.stats.sprt import (
    SPRT_PSEUDO_COUNT,
    SPRT_VAR_FLOOR_REL,
    SPRTResult,
    sprt_bounds,
    sprt_mean,
    sprt_pentanomial,
    sprt_trinomial,
)

# Public constants of the single module that were not in its __all__: still harness.stats.X.
from harness.stats.control_variates import CV_MIN_VAR  # noqa: F401
from harness.stats.histogram import HIST_MAX_VALUE, PERCENTILES  # noqa: F401

# The same list, in the same order, as when harness.stats was one module, then the names added since.
__all__ = [
    "Moments",
    "VecMoments",
    "pentanomial_moments",
    "MeanCI",
    "mean_ci",
    "wilson",
    "Rate",
    "rate",
    "PairedDiff",
    "paired_difference",
    "paired_difference_from_moments",
    "CoMoments",
    "ControlVariateMean",
    "control_variate_mean",
    "Estimate",
    "delta_estimate",
    "holm",
    "IntHistogram",
    "DistTest",
    "ks_2samp_counts",
    "anderson_ksamp_counts",
    "sprt_bounds",
    "SPRTResult",
    "sprt_mean",
    "sprt_trinomial",
    "sprt_pentanomial",
    "SPRT_PSEUDO_COUNT",
    "SPRT_VAR_FLOOR_REL",
    "Ratings",
    "bradley_terry",
    "elo_from_score",
    "score_from_elo",
    "elo_ci_from_pentanomial",
    "ELO_PER_NAT",
    "ClusteredMean",
    "clustered_mean",
]

"""Sums in a fixed order: the same bits on every processor, where a BLAS product's are not.

``a @ b`` and ``np.dot`` on float arrays call the BLAS library, which picks its kernel for the
processor at run time (AVX-512, AVX2, ...) and adds the products in that kernel's order, so the
last bits of a dot product move from one kind of CPU to another (issue 53: exact figures and a
fit's sums differed in their 16th digit between two processors). Here the products are
element-wise (one IEEE multiply each, the same bits everywhere) and numpy's sum adds them in an
order fixed by the array's shape alone: pairwise in blocks along a contiguous axis, one row after
another down axis 0. ``np.convolve`` is a BLAS dot per output too; :func:`convolve` adds each
output's products in the order of the first array. Nothing is dispatched on the processor's features.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["convolve", "dot", "vecmat"]


def dot(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """sum(a * b) of two (n,) arrays, as a float64, in a fixed order."""
    return float(np.sum(np.multiply(a, b, dtype=np.float64)))


def vecmat(p: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``p @ m`` for p (n,) and m (n, k): (k,) float64, the rows of ``p[:, None] * m`` added one
    after another."""
    return np.sum(np.multiply(p[:, None], m, dtype=np.float64), axis=0)


def convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.convolve(a, b)`` (the full convolution, (len(a) + len(b) - 1,) float64) in a fixed order:
    out[k] = the sum over i of a[i] * b[k - i], i ascending (a weighted bincount adds its weights
    in turn)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if not a.size or not b.size:
        raise ValueError("convolve: an empty array")
    at = np.add.outer(np.arange(a.size), np.arange(b.size)).ravel()
    return np.bincount(at, weights=np.multiply.outer(a, b).ravel(), minlength=a.size + b.size - 1)

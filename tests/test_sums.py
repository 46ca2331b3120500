"""harness.util.sums: products summed in an order fixed by the shapes alone (issue 53), equal to numpy's
BLAS products up to rounding."""

from __future__ import annotations

import numpy as np

from harness.util.sums import convolve, dot, vecmat


def test_vecmat_adds_the_rows_one_after_another():
    rng = np.random.default_rng(3)
    p, m = rng.random(1000), rng.random((1000, 7))
    acc = np.zeros(7)
    for i in range(len(p)):  # the order promised: row 0, then row 1, ...; each product rounded alone
        acc = acc + p[i] * m[i]
    assert np.array_equal(vecmat(p, m), acc)
    assert np.allclose(vecmat(p, m), p @ m, rtol=1e-13, atol=0)


def test_dot_is_numpys_sum_of_the_products():
    rng = np.random.default_rng(4)
    a, b = rng.random(5001), rng.random(5001)
    assert dot(a, b) == float(np.sum(a * b)) and isinstance(dot(a, b), float)
    assert abs(dot(a, b) - float(a @ b)) <= 1e-13 * abs(float(a @ b))
    assert dot(np.array([1, 2]), np.array([3, 4])) == 11.0  # integers in, a float out


def test_convolve_is_the_full_convolution_summed_from_the_first_array():
    rng = np.random.default_rng(5)
    for n, k in [(1, 1), (3, 8), (400, 300)]:
        a, b = rng.random(n), rng.random(k)
        out = convolve(a, b)
        assert out.shape == (n + k - 1,) and np.allclose(out, np.convolve(a, b), rtol=1e-13, atol=0)
    a, b = rng.random(6), rng.random(4)
    want = np.zeros(9)
    for i in range(6):  # output k gets a[i] * b[k - i] for i ascending
        for j in range(4):
            want[i + j] += a[i] * b[j]
    assert np.array_equal(convolve(a, b), want)

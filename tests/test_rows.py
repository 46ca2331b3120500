"""The whole-row vector operations of harness.exact.kernels.rows equal the lane loops they replace,
to the bit (a NaN as any NaN), on every kind of double (signed zeros, subnormals, infinities, NaN) and around the
thresholds of the softmax's fallback."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.exact.kernels import rows as RW
from harness.util.jit import nb

L = RW.LANES
TINY, HUGE = 1e-250, 1e250
doubles = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=64)
special = st.sampled_from([0.0, -0.0, 5e-324, TINY, TINY * 1.0000001, HUGE, HUGE * 0.9999999, np.inf, -np.inf,
                           np.nan, 1.0, 1.0 / 3.0])
values = st.one_of(doubles, special)


def rows_of(n: int):
    return hnp.arrays(np.float64, (n, L), elements=values)


@nb.njit
def _loops(A, B, X, S, U, s):
    for i in range(L):
        A[1, i] += A[0, i]        # row_add, one array
        A[2, i] += B[3, i]        # row_add, two arrays
        A[3, i] += B[1, i] * s    # row_add_scaled
        B[0, i] = A[2, i]         # row_copy
        B[2, i] = s               # row_fill
        X[1, i] = X[1, i] * S[1, i] + U[1, i]  # row_mul_add: one row index in all four


@nb.njit
def _rows(A, B, X, S, U, s):
    RW.row_add(A, 1, A, 0)
    RW.row_add(A, 2, B, 3)
    RW.row_add_scaled(A, 3, B, 1, s)
    RW.row_copy(B, 0, A, 2)
    RW.row_fill(B, 2, s)
    RW.row_mul_add(X, X, S, U, 1)


@nb.njit
def _roll_loop(mass, z, x, u_out, s_out, fin, ub, keep):
    bad = 0
    for i in range(L):
        m = mass[0, i]
        tot = z[0, i]
        u_out[0, i] = m * ub
        if TINY < tot < HUGE:
            q = keep / tot
            s_out[0, i] = m * q
            fin[0, i] += m * (x[0, i] * q) + u_out[0, i]
        else:
            bad |= 1 << i
    return bad


@nb.njit
def _roll_row(mass, z, x, u_out, s_out, fin, ub, keep):
    return RW.soft_roll(mass, 0, z, x, 0, u_out, s_out, fin, 0, ub, keep, TINY, HUGE)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the bit, a NaN equal to any NaN (IEEE arithmetic fixes no NaN's sign or payload, and
    scalar and vector instructions give different ones)."""
    na, nb_ = np.isnan(a), np.isnan(b)
    return bool(np.array_equal(na, nb_) and np.array_equal(a.view(np.int64)[~na], b.view(np.int64)[~nb_]))


@settings(max_examples=200, deadline=None)
@given(rows_of(4), rows_of(4), rows_of(2), rows_of(2), rows_of(2), values)
def test_row_operations_equal_the_lane_loops(A, B, X, S, U, s):
    got = [a.copy() for a in (A, B, X, S, U)]
    want = [a.copy() for a in (A, B, X, S, U)]
    _rows(*got, s)
    _loops(*want, s)
    for g, w in zip(got, want):
        assert same(g, w)


@settings(max_examples=300, deadline=None)
@given(rows_of(1), rows_of(1), rows_of(1), rows_of(1), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_rolls_softmax_step_equals_the_lane_loop(mass, z, x, fin, ub, keep):
    s_got, s_want = np.zeros((1, L)), np.zeros((1, L))
    u_got, u_want = np.empty((1, L)), np.empty((1, L))
    f_got, f_want = fin.copy(), fin.copy()
    bad = _roll_row(mass, z, x, u_got, s_got, f_got, ub, keep)
    assert bad == _roll_loop(mass, z, x, u_want, s_want, f_want, ub, keep)
    assert same(u_got, u_want) and same(s_got, s_want) and same(f_got, f_want)

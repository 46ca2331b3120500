"""The whole-row vector operations of harness.exact.kernels.rows equal the lane loops they replace,
to the bit (a NaN as any NaN), on every kind of double (signed zeros, subnormals, infinities, NaN) and around the
thresholds of the softmax's fallback; the row exponential is the scalar one lane by lane, within one unit in the
last place of the C library's."""

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
special = st.sampled_from(
    [0.0, -0.0, 5e-324, TINY, TINY * 1.0000001, HUGE, HUGE * 0.9999999, np.inf, -np.inf, np.nan, 1.0, 1.0 / 3.0]
)
values = st.one_of(doubles, special)


def rows_of(n: int):
    return hnp.arrays(np.float64, (n, L), elements=values)


@nb.njit
def _loops(A, B, X, S, U, s):
    for i in range(L):
        A[1, i] += A[0, i]  # row_add, one array
        A[2, i] += B[3, i]  # row_add, two arrays
        A[3, i] += B[1, i] * s  # row_add_scaled
        B[0, i] = A[2, i]  # row_copy
        B[2, i] = s  # row_fill
        X[1, i] = X[1, i] * S[1, i] + U[1, i]  # row_mul_add: one row index in all four
        U[0, i] = X[0, i] * S[0, i]  # row_mul


@nb.njit
def _rows(A, B, X, S, U, s):
    RW.row_add(A, 1, A, 0)
    RW.row_add(A, 2, B, 3)
    RW.row_add_scaled(A, 3, B, 1, s)
    RW.row_copy(B, 0, A, 2)
    RW.row_fill(B, 2, s)
    RW.row_mul_add(X, X, S, U, 1)
    RW.row_mul(U, X, S, 0)


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


@nb.njit
def _exp_rows(A, c0, t):
    for k in range(A.shape[0]):
        RW.row_exp_div(A, k, c0, t)


@nb.njit
def _exp_loop(A, t):
    out = np.empty_like(A)
    for k in range(A.shape[0]):
        for i in range(A.shape[1]):
            out[k, i] = RW.exp_ieee(A[k, i] / t)
    return out


@nb.njit
def _libm_exp(A):
    out = np.empty_like(A)
    for k in range(A.shape[0]):
        for i in range(A.shape[1]):
            out[k, i] = np.exp(A[k, i])
    return out


exp_args = st.one_of(
    values,
    st.floats(-750.0, 710.0),
    st.floats(-40.0, 0.0),
    st.floats(-1e-8, 1e-8),
    st.sampled_from([709.78, 709.79, 709.1, -708.3, -708.4, -745.13, -745.14, 0.34657359, -0.34657359, 1e300, -1e300]),
)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(np.float64, (3, 2 * L), elements=exp_args), st.sampled_from([1.0, 0.5, 3.0, 0.02, 1000.0]))
def test_the_row_exponential_is_the_scalar_one_lane_by_lane(A, t):
    """row_exp_div(a, k, c0, t) is exp_ieee(a / t) in every lane, from any column c0."""
    want = _exp_loop(A, t)
    got = A.copy()
    _exp_rows(got, 0, t)
    _exp_rows(got, L, t)
    assert same(got, want)


def test_the_exponential_is_within_one_unit_in_the_last_place_of_the_c_librarys():
    """exp_ieee (fdlibm's exp) against the C library's over the whole range: at most one unit in the
    last place apart, subnormal results included; exact at 0; inf, 0 and NaN where exp gives them."""
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.uniform(-746.0, 710.0, 400_000),
            rng.uniform(-40.0, 0.0, 200_000),
            rng.uniform(-1.0, 1.0, 200_000),
            np.linspace(709.0, 709.78, 8_000),
            np.linspace(-745.13, -700.0, 8_000),
        ]
    ).reshape(-1, L)
    got = _exp_loop(x, 1.0)
    want = _libm_exp(x)
    assert np.abs(got.view(np.int64) - want.view(np.int64)).max() <= 1
    specials = np.array([[0.0, -0.0, np.inf, -np.inf, np.nan, 709.79, -745.14, -1e300] * 2])
    got = _exp_loop(specials, 1.0)[0, :8]
    assert got[0] == 1.0 and got[1] == 1.0 and got[2] == np.inf and got[3] == 0.0 and np.isnan(got[4])
    assert got[5] == np.inf and got[6] == 0.0 and got[7] == 0.0

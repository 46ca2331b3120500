"""Whole-row arithmetic on (n, LANES) float64 arrays for the kernels that work states side by side.

The exact evaluation's softmax keeps (:func:`harness.exact.kernels.policy._soft_stops`) keep
:data:`LANES` states side by side, one keep (or roll) a row, and run the keep lattice's sums as
thousands of row operations a state: ``Z[k] += Z[q]`` and the like. Written as loops over the
lanes, numba's compiler cannot tell that row k and row q do not overlap, so every such loop pays
a run-time overlap check and a loop set-up around two vector instructions; these intrinsics
emit the row as one LLVM vector of LANES doubles: load, operate, store. Each lane's arithmetic is
the loop's (IEEE add and multiply, in the same order, never fused), so the results are equal to
the bit; only the instructions differ.

The arrays must be C-contiguous with rows of at least LANES doubles (the callers allocate them
(n, LANES)); rows are not bounds-checked, as numba's indexing is not.

The softmax's exponentials are :func:`row_exp_div` (LANES at once) and :func:`exp_ieee` (one at a
time), the same function: fdlibm's exp (Sun's, the one most C libraries descend from; error below
one unit in the last place), step for step in IEEE add, multiply and divide, none fused. The C
library's exp is faster than neither one lane of it nor, at 16 lanes, a quarter of it, and its bits
depend on the library's version and the processor's instructions (glibc takes another path where
the processor fuses multiply-adds); these give the same bits on every machine, within one unit in
the last place of the C library's (tests/test_rows.py).
"""

from __future__ import annotations

import math

from harness.util.jit import nb  # numba started the harness's way (its BLAS check without scipy.linalg)
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = [
    "LANES",
    "exp_ieee",
    "row_add",
    "row_add_scaled",
    "row_copy",
    "row_exp_div",
    "row_fill",
    "row_mul",
    "row_mul_add",
    "soft_roll",
]

#: States side by side: the rows' length.
LANES = 16

_VEC = ir.VectorType(ir.DoubleType(), LANES)


def _row(context, builder, arrty, arr, k, c0=None):
    """Pointer to row k of a 2-D array (from its column c0) as a vector of LANES doubles."""
    a = context.make_array(arrty)(context, builder, arr)
    stride = builder.extract_value(a.strides, 0)
    base = builder.ptrtoint(a.data, ir.IntType(64))
    at = builder.add(base, builder.mul(k, stride))
    if c0 is not None:
        at = builder.add(at, builder.mul(c0, ir.Constant(ir.IntType(64), 8)))
    return builder.inttoptr(at, _VEC.as_pointer())


def _splat(builder, x):
    v = ir.Constant(_VEC, ir.Undefined)
    for i in range(LANES):
        v = builder.insert_element(v, x, ir.Constant(ir.IntType(32), i))
    return v


def _load(builder, p):
    return builder.load(p, align=8)


def _store(builder, v, p):
    builder.store(v, p, align=8)


@intrinsic
def row_add(typingctx, a, k, b, q):
    """a[k] += b[q] (a and b may be one array)."""

    def codegen(context, builder, sig, args):
        pk = _row(context, builder, sig.args[0], args[0], args[1])
        pq = _row(context, builder, sig.args[2], args[2], args[3])
        _store(builder, builder.fadd(_load(builder, pk), _load(builder, pq)), pk)
        return context.get_dummy_value()

    return types.void(a, types.int64, b, types.int64), codegen


@intrinsic
def row_add_scaled(typingctx, a, k, b, q, s):
    """a[k] += b[q] * s (the product rounded, then the sum: not fused)."""

    def codegen(context, builder, sig, args):
        pk = _row(context, builder, sig.args[0], args[0], args[1])
        pq = _row(context, builder, sig.args[2], args[2], args[3])
        prod = builder.fmul(_load(builder, pq), _splat(builder, args[4]))
        _store(builder, builder.fadd(_load(builder, pk), prod), pk)
        return context.get_dummy_value()

    return types.void(a, types.int64, b, types.int64, types.float64), codegen


@intrinsic
def row_copy(typingctx, a, k, b, q):
    """a[k] = b[q]."""

    def codegen(context, builder, sig, args):
        pk = _row(context, builder, sig.args[0], args[0], args[1])
        pq = _row(context, builder, sig.args[2], args[2], args[3])
        _store(builder, _load(builder, pq), pk)
        return context.get_dummy_value()

    return types.void(a, types.int64, b, types.int64), codegen


@intrinsic
def row_fill(typingctx, a, k, x):
    """a[k] = x in every lane."""

    def codegen(context, builder, sig, args):
        pk = _row(context, builder, sig.args[0], args[0], args[1])
        _store(builder, _splat(builder, args[2]), pk)
        return context.get_dummy_value()

    return types.void(a, types.int64, types.float64), codegen


@intrinsic
def row_mul_add(typingctx, a, x, s, u, k):
    """a[k] = x[k] * s[k] + u[k] (the product rounded, then the sum: not fused)."""

    def codegen(context, builder, sig, args):
        pa = _row(context, builder, sig.args[0], args[0], args[4])
        px = _row(context, builder, sig.args[1], args[1], args[4])
        ps = _row(context, builder, sig.args[2], args[2], args[4])
        pu = _row(context, builder, sig.args[3], args[3], args[4])
        prod = builder.fmul(_load(builder, px), _load(builder, ps))
        _store(builder, builder.fadd(prod, _load(builder, pu)), pa)
        return context.get_dummy_value()

    return types.void(a, x, s, u, types.int64), codegen


@intrinsic
def row_mul(typingctx, a, x, s, k):
    """a[k] = x[k] * s[k]."""

    def codegen(context, builder, sig, args):
        pa = _row(context, builder, sig.args[0], args[0], args[3])
        px = _row(context, builder, sig.args[1], args[1], args[3])
        ps = _row(context, builder, sig.args[2], args[2], args[3])
        _store(builder, builder.fmul(_load(builder, px), _load(builder, ps)), pa)
        return context.get_dummy_value()

    return types.void(a, x, s, types.int64), codegen


@intrinsic
def soft_roll(typingctx, mass, r, z, x, kr, u_out, s_out, fin, fr, ub, keep, tiny, huge):
    """One roll's step of the softmax keeps for every lane (:func:`harness.exact.kernels.policy._soft_stops`):
    with m = mass[r], tot = z[kr], q = keep / tot and ok = tiny < tot < huge,
    u_out[kr] = m * ub; s_out[kr] = m * q where ok, else 0; fin[fr] += m * (x[kr] * q) + m * ub where ok.
    Returns the lanes that are not ok as bits (lane i: bit i)."""

    def codegen(context, builder, sig, args):
        a = sig.args
        m = _load(builder, _row(context, builder, a[0], args[0], args[1]))
        tot = _load(builder, _row(context, builder, a[2], args[2], args[4]))
        xv = _load(builder, _row(context, builder, a[3], args[3], args[4]))
        u = builder.fmul(m, _splat(builder, args[9]))
        _store(builder, u, _row(context, builder, a[5], args[5], args[4]))
        q = builder.fdiv(_splat(builder, args[10]), tot)
        ok = builder.and_(
            builder.fcmp_ordered(">", tot, _splat(builder, args[11])),
            builder.fcmp_ordered("<", tot, _splat(builder, args[12])),
        )
        zero = ir.Constant(_VEC, [0.0] * LANES)
        _store(builder, builder.select(ok, builder.fmul(m, q), zero), _row(context, builder, a[6], args[6], args[4]))
        pf = _row(context, builder, a[7], args[7], args[8])
        f = _load(builder, pf)
        add = builder.fadd(builder.fmul(m, builder.fmul(xv, q)), u)
        _store(builder, builder.select(ok, builder.fadd(f, add), f), pf)
        bad = builder.bitcast(builder.not_(ok), ir.IntType(LANES))
        return builder.zext(bad, ir.IntType(64))

    return (
        types.int64(
            mass,
            types.int64,
            z,
            x,
            types.int64,
            u_out,
            s_out,
            fin,
            types.int64,
            types.float64,
            types.float64,
            types.float64,
            types.float64,
        ),
        codegen,
    )


# ---------------------------------------------------------------------------------------------
# the exponential (fdlibm's e_exp.c: its thresholds, the split of ln 2 and the polynomial)

_O_THRESHOLD = 7.09782712893383973096e02  # above: overflow
_U_THRESHOLD = -7.45133219101941108420e02  # below: underflow to 0
_LN2_HI = 6.93147180369123816490e-01  # ln 2's leading 32 bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
_TWO_M1000 = 2.0**-1000


@nb.njit(cache=True, nogil=True)
def _pow2(k):
    """2.0 ** k for -1022 <= k <= 1023, from its bits."""
    return np.int64((k + 1023) << 52).view(np.float64)


@nb.njit(cache=True, nogil=True)
def exp_ieee(x):
    """exp(x): fdlibm's algorithm, one lane of :func:`row_exp_div` (the same operations, the same bits).
    x = k ln 2 + r with |r| <= ln 2 / 2; exp(r) = 1 + r + r c / (2 - c) from a degree-5 polynomial
    c in r^2; then times 2^k, in two steps where 2^k leaves the normal range."""
    if x != x:
        return x
    if x > _O_THRESHOLD:
        return math.inf
    if x < _U_THRESHOLD:
        return 0.0
    h = 0.5 if x >= 0.0 else -0.5
    k = np.int64(_INV_LN2 * x + h)  # truncated: rounded half away from zero
    kd = float(k)
    hi = x - kd * _LN2_HI
    lo = kd * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    if k < -1021:
        return y * _pow2(k + 1000) * _TWO_M1000
    if k > 1023:
        return y * _pow2(k - 1) * 2.0
    return y * _pow2(k)


def _vec_exp(f, x):
    """:func:`exp_ieee` of each lane of the vector x (IR builder f): every branch taken, the lanes picked by selects."""
    ivec = ir.VectorType(ir.IntType(64), LANES)

    def c(v):
        return ir.Constant(_VEC, [float(v)] * LANES)

    def ic(v):
        return ir.Constant(ivec, [v] * LANES)

    ordered = f.fcmp_ordered("==", x, x)
    over = f.fcmp_ordered(">", x, c(_O_THRESHOLD))
    under = f.fcmp_ordered("<", x, c(_U_THRESHOLD))
    # lanes the conversion to integers must not see (NaN, out of range) work on 0 and are replaced at the end
    xs = f.select(f.or_(f.not_(ordered), f.or_(over, under)), c(0.0), x)
    h = f.select(f.fcmp_ordered(">=", xs, c(0.0)), c(0.5), c(-0.5))
    k = f.fptosi(f.fadd(f.fmul(c(_INV_LN2), xs), h), ivec)
    kd = f.sitofp(k, _VEC)
    hi = f.fsub(xs, f.fmul(kd, c(_LN2_HI)))
    lo = f.fmul(kd, c(_LN2_LO))
    r = f.fsub(hi, lo)
    t = f.fmul(r, r)
    p = f.fadd(c(_P4), f.fmul(t, c(_P5)))
    p = f.fadd(c(_P3), f.fmul(t, p))
    p = f.fadd(c(_P2), f.fmul(t, p))
    p = f.fadd(c(_P1), f.fmul(t, p))
    cc = f.fsub(r, f.fmul(t, p))
    y = f.fsub(c(1.0), f.fsub(f.fsub(lo, f.fdiv(f.fmul(r, cc), f.fsub(c(2.0), cc))), hi))
    low = f.icmp_signed("<", k, ic(-1021))
    high = f.icmp_signed(">", k, ic(1023))
    kk = f.select(low, f.add(k, ic(1000)), f.select(high, f.sub(k, ic(1)), k))
    res = f.fmul(y, f.bitcast(f.shl(f.add(kk, ic(1023)), ic(52)), _VEC))
    res = f.select(low, f.fmul(res, c(_TWO_M1000)), f.select(high, f.fmul(res, c(2.0)), res))
    res = f.select(over, c(math.inf), f.select(under, c(0.0), res))
    return f.select(ordered, res, x)


@intrinsic
def row_exp_div(typingctx, a, k, c0, t):
    """a[k, c0:c0 + LANES] = exp(a[k, c0:c0 + LANES] / t): each lane :func:`exp_ieee` of the quotient."""

    def codegen(context, builder, sig, args):
        pk = _row(context, builder, sig.args[0], args[0], args[1], args[2])
        x = builder.fdiv(_load(builder, pk), _splat(builder, args[3]))
        _store(builder, _vec_exp(builder, x), pk)
        return context.get_dummy_value()

    return types.void(a, types.int64, types.int64, types.float64), codegen

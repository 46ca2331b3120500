"""Whole-row arithmetic on (n, LANES) float64 arrays for the kernels that work states side by side.

The exact evaluation's softmax keeps (:func:`harness.exact.kernels.evaluate._soft_stops`) keep
:data:`LANES` states side by side, one keep (or roll) a row, and run the keep lattice's sums as
thousands of row operations a state: ``Z[k] += Z[q]`` and the like. Written as loops over the
lanes, numba's compiler cannot tell that row k and row q do not overlap, so every such loop pays
a run-time overlap check and a loop set-up around two vector instructions; these intrinsics
emit the row as one LLVM vector of LANES doubles: load, operate, store. Each lane's arithmetic is
the loop's (IEEE add and multiply, in the same order, never fused), so the results are equal to
the bit; only the instructions differ.

The arrays must be C-contiguous with rows of at least LANES doubles (the callers allocate them
(n, LANES)); rows are not bounds-checked, as numba's indexing is not.
"""

from __future__ import annotations

import harness.util.jit  # noqa: F401 - numba started the harness's way (its BLAS check without scipy.linalg)
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["LANES", "row_add", "row_add_scaled", "row_copy", "row_fill", "row_mul_add", "soft_roll"]

#: States side by side: the rows' length.
LANES = 16

_VEC = ir.VectorType(ir.DoubleType(), LANES)


def _row(context, builder, arrty, arr, k):
    """Pointer to row k of a 2-D array as a vector of LANES doubles."""
    a = context.make_array(arrty)(context, builder, arr)
    stride = builder.extract_value(a.strides, 0)
    base = builder.ptrtoint(a.data, ir.IntType(64))
    return builder.inttoptr(builder.add(base, builder.mul(k, stride)), _VEC.as_pointer())


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
def soft_roll(typingctx, mass, r, z, x, kr, u_out, s_out, fin, fr, ub, keep, tiny, huge):
    """One roll's step of the softmax keeps for every lane (:func:`harness.exact.kernels.evaluate._soft_stops`):
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
        ok = builder.and_(builder.fcmp_ordered(">", tot, _splat(builder, args[11])),
                          builder.fcmp_ordered("<", tot, _splat(builder, args[12])))
        zero = ir.Constant(_VEC, [0.0] * LANES)
        _store(builder, builder.select(ok, builder.fmul(m, q), zero), _row(context, builder, a[6], args[6], args[4]))
        pf = _row(context, builder, a[7], args[7], args[8])
        f = _load(builder, pf)
        add = builder.fadd(builder.fmul(m, builder.fmul(xv, q)), u)
        _store(builder, builder.select(ok, builder.fadd(f, add), f), pf)
        bad = builder.bitcast(builder.not_(ok), ir.IntType(LANES))
        return builder.zext(bad, ir.IntType(64))
    return (types.int64(mass, types.int64, z, x, types.int64, u_out, s_out, fin, types.int64, types.float64,
                        types.float64, types.float64, types.float64), codegen)

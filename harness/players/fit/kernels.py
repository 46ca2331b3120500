"""numba kernels of the player-model likelihood (:mod:`harness.players.fit`): per-decision choice
probabilities, and the store that merges identical decisions.

Decisions are stored flat: decision d's legal options are ``r[ptr[d]:ptr[d + 1]]``, each option's
regret (best value - its value, >= 0, exactly 0 for the best and for options tied with it), in
ascending order. A kernel walks the decisions ``rows`` (indices into ``ptr``: a player's, or one
kind of them, without copying their options); out[i] is decision rows[i]'s.

Options whose regret is above :data:`CUT` x temperature are left out of the softmax's sum: each
adds less than exp(-CUT) = 4e-18 to a sum that is at least 1 (the best option's exp(0)), which
float64 cannot hold (half an ulp of 1 is 1.1e-16), so the sums are the same to the last bit or
two, and at low temperatures most options cost a comparison instead of an exp. The options being
in ascending order, the walk of a decision stops at its first option past the cut.
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

#: Options with regret above CUT x temperature are left out of the softmax's sum (see above).
CUT = 40.0


@nb.njit(cache=True, nogil=True)
def chosen_probs(ptr, r, rows, rc, temperature, out):
    """out[i] = the probability of the chosen option (regret rc[i]) under the softmax of -regret /
    temperature over decision rows[i]'s options (ascending); temperature 0 is its limit: 1/k for a
    choice among the k options of regret 0, else 0."""
    cut = CUT * temperature
    inv = 1.0 / temperature if temperature > 0.0 else 0.0  # a product per option, not a division
    for i in range(rows.shape[0]):
        d = rows[i]
        lo, hi = ptr[d], ptr[d + 1]
        if temperature > 0.0:
            tot = 0.0
            for a in range(lo, hi):
                x = np.float64(r[a])
                if x > cut:
                    break
                tot += np.exp(-x * inv)
            out[i] = np.exp(-np.float64(rc[i]) * inv) / tot
        else:
            k = 0
            for a in range(lo, hi):
                if r[a] != 0.0:
                    break
                k += 1
            out[i] = 1.0 / k if rc[i] == 0.0 else 0.0


@nb.njit(cache=True, nogil=True)
def _to_bin(bins, i, edges, x, p):
    """bins[i, j] += p for the regret bin j of x (j = the number of ``edges`` below x)."""
    j = 0
    while j < edges.shape[0] and edges[j] < x:
        j += 1
    bins[i, j] += p


@nb.njit(cache=True, nogil=True)
def option_bins(ptr, r, rows, temperature, blunder, edges, bins, mean_regret):
    """Under the model (temperature, blunder), for each decision rows[i]: bins[i, j] = the
    probability that the option played falls in regret bin j (j = number of ``edges`` below its
    regret), and mean_regret[i] = the expected regret."""
    nb_ = bins.shape[1]
    cut = CUT * temperature
    for i in range(rows.shape[0]):
        d = rows[i]
        lo, hi = ptr[d], ptr[d + 1]
        n = hi - lo
        for j in range(nb_):
            bins[i, j] = 0.0
        tot = 0.0
        k = 0
        for a in range(lo, hi):
            x = np.float64(r[a])
            if temperature > 0.0:
                if x > cut:
                    break
                tot += np.exp(-x / temperature)
            elif x == 0.0:
                k += 1
            else:
                break
        er = 0.0
        for a in range(lo, hi):
            x = np.float64(r[a])
            if temperature > 0.0:
                s = np.exp(-x / temperature) / tot if x <= cut else 0.0
            else:
                s = 1.0 / k if x == 0.0 else 0.0
            p = blunder / n + (1.0 - blunder) * s
            _to_bin(bins, i, edges, x, p)
            er += p * x
        mean_regret[i] = er


_OFFSET = np.uint64(14695981039346656037)  # FNV-1a
_PRIME = np.uint64(1099511628211)


@nb.njit(cache=True, nogil=True)
def _slot(table, h):
    return np.int64(h & np.uint64(table.shape[0] - 1))


@nb.njit(cache=True, nogil=True)
def merge(
    bptr,
    bbits,
    brc,
    bkind,
    bwho,
    table,
    hashes,
    ptr,
    bits,
    rc,
    kind,
    who,
    w,
    rows,
    opts,
    bgbits,
    bgc,
    gbits,
    gc,
    bhbits,
    bhc,
    hbits,
    hc,
):
    """Add a batch of decisions to the store, each decision to the row of an identical one (same
    player ``who``, ``kind``, chosen option's regret ``rc`` and options, compared as bit patterns)
    or to a new row. The batch: ``bptr`` (B + 1,), ``bbits`` its options' bits, ``brc``, ``bkind``,
    ``bwho`` (B,). The store: ``rows`` rows and ``opts`` options filled of ``ptr``, ``bits``, ``rc``,
    ``kind``, ``who``, ``w`` (the count of decisions of each row) and ``hashes``; ``table`` (a power
    of two, more than twice the rows) maps a hash to its row (-1: empty), linear probing. The
    caller makes room for the whole batch. Returns (rows, opts) after it.

    With ``bgbits`` not empty each option also has a myopic regret (``bgbits`` in the batch, as
    ``bbits``; ``gbits`` in the store) and each decision its chosen option's (``bgc``, ``gc``):
    part of what makes two decisions identical. ``bhbits``, ``bhc``, ``hbits``, ``hc`` likewise
    with each option's paced regret."""
    mine = bgbits.shape[0] > 0
    paced = bhbits.shape[0] > 0
    for i in range(bkind.shape[0]):
        lo, hi = bptr[i], bptr[i + 1]
        h = _OFFSET
        h = (h ^ np.uint64(bwho[i])) * _PRIME
        h = (h ^ np.uint64(bkind[i])) * _PRIME
        h = (h ^ np.uint64(brc[i])) * _PRIME
        h = (h ^ np.uint64(hi - lo)) * _PRIME
        for a in range(lo, hi):
            h = (h ^ np.uint64(bbits[a])) * _PRIME
        if mine:
            h = (h ^ np.uint64(bgc[i])) * _PRIME
            for a in range(lo, hi):
                h = (h ^ np.uint64(bgbits[a])) * _PRIME
        if paced:
            h = (h ^ np.uint64(bhc[i])) * _PRIME
            for a in range(lo, hi):
                h = (h ^ np.uint64(bhbits[a])) * _PRIME
        s = _slot(table, h)
        while True:
            j = table[s]
            if j < 0:
                table[s] = rows
                hashes[rows] = h
                for a in range(lo, hi):
                    bits[opts + a - lo] = bbits[a]
                if mine:
                    for a in range(lo, hi):
                        gbits[opts + a - lo] = bgbits[a]
                    gc[rows] = bgc[i]
                if paced:
                    for a in range(lo, hi):
                        hbits[opts + a - lo] = bhbits[a]
                    hc[rows] = bhc[i]
                opts += hi - lo
                ptr[rows + 1] = opts
                rc[rows] = brc[i]
                kind[rows] = bkind[i]
                who[rows] = bwho[i]
                w[rows] = 1
                rows += 1
                break
            if (
                hashes[j] == h
                and who[j] == bwho[i]
                and kind[j] == bkind[i]
                and rc[j] == brc[i]
                and ptr[j + 1] - ptr[j] == hi - lo
                and (not mine or gc[j] == bgc[i])
                and (not paced or hc[j] == bhc[i])
            ):
                same = True
                base = ptr[j]
                for a in range(lo, hi):
                    if (
                        bits[base + a - lo] != bbits[a]
                        or (mine and gbits[base + a - lo] != bgbits[a])
                        or (paced and hbits[base + a - lo] != bhbits[a])
                    ):
                        same = False
                        break
                if same:
                    w[j] += 1
                    break
            s = (s + 1) & (table.shape[0] - 1)
    return rows, opts


@nb.njit(cache=True, nogil=True)
def rehash(table, hashes, rows):
    """Fill ``table`` (all -1) with the first ``rows`` rows' ``hashes`` (after it grew)."""
    for j in range(rows):
        s = _slot(table, hashes[j])
        while table[s] >= 0:
            s = (s + 1) & (table.shape[0] - 1)
        table[s] = j


@nb.njit(cache=True, nogil=True)
def loglik(q, u, w, blunder):
    """sum_i w[i] log(blunder u[i] + (1 - blunder) q[i]): the log-likelihood at one temperature
    (q: the chosen options' softmax probabilities, u: 1 / n) and blunder rate, in one pass."""
    tot = 0.0
    for i in range(q.shape[0]):
        tot += w[i] * np.log(q[i] + blunder * (u[i] - q[i]))
    return tot


@nb.njit(cache=True, nogil=True, error_model="numpy")
def blunder_slope(q, u, w, blunder):
    """d/d blunder of :func:`loglik`: sum_i w[i] a[i] / (q[i] + blunder a[i]), a = u - q."""
    tot = 0.0
    for i in range(q.shape[0]):
        a = u[i] - q[i]
        tot += w[i] * a / (q[i] + blunder * a)
    return tot


# ---------------------------------------------------------------------------------------------
# the extended family: utility (1 - weight) x value + weight x myopic value, a temperature per kind
# (the ``paced`` model passes its paced regrets as g)


@nb.njit(cache=True, nogil=True)
def _least(r, g, lo, hi, weight):
    """The least utility regret (1 - weight) r + weight g of the options lo..hi-1."""
    xmin = np.inf
    for a in range(lo, hi):
        x = (1.0 - weight) * np.float64(r[a]) + weight * np.float64(g[a])
        if x < xmin:
            xmin = x
    return xmin


@nb.njit(cache=True, nogil=True)
def family_loglik(ptr, r, g, rows, rc, gc, kind, u, w, weight, tk, tb, blunder, grad):
    """sum_i w[i] log P_i(chosen) under the extended family, and its gradient into grad (4,):
    d/d (weight, keep temperature, box temperature, blunder). Decision rows[i] of kind kind[i]
    (0 keep: temperature tk, 1 box: tb, both > 0) has options of exact regrets r and myopic regrets
    g (r's order) and the chosen option's rc[i], gc[i]; with x = (1 - weight) r + weight g,
    P(a) = blunder u[i] + (1 - blunder) exp(-x_a / T) / sum_b exp(-x_b / T). Options whose x is
    above the smallest by more than CUT x T add nothing to the sums (as in :func:`chosen_probs`)."""
    tot = 0.0
    g0 = 0.0
    g1 = 0.0
    g2 = 0.0
    g3 = 0.0
    for i in range(rows.shape[0]):
        d = rows[i]
        lo, hi = ptr[d], ptr[d + 1]
        t = tk if kind[i] == 0 else tb
        inv = 1.0 / t
        xmin = _least(r, g, lo, hi, weight)
        cut = xmin + CUT * t
        s = 0.0
        sw = 0.0  # sum of exp x d z / d weight (x T): sum e (r - g)
        st = 0.0  # sum of exp x (x - xmin)
        for a in range(lo, hi):
            ra = np.float64(r[a])
            ga = np.float64(g[a])
            x = (1.0 - weight) * ra + weight * ga
            if x > cut:
                continue
            e = np.exp((xmin - x) * inv)
            s += e
            sw += e * (ra - ga)
            st += e * (x - xmin)
        xc = (1.0 - weight) * np.float64(rc[i]) + weight * np.float64(gc[i])
        zc = (xmin - xc) * inv
        # d log q / d weight and / d T
        dw = ((np.float64(rc[i]) - np.float64(gc[i])) - sw / s) * inv
        dt = ((xc - xmin) - st / s) * inv * inv
        if blunder == 0.0:  # log q without its underflow
            tot += w[i] * (zc - np.log(s))
            share = 1.0
            dp = (u[i] - np.exp(zc) / s) / max(np.exp(zc) / s, 1e-300)
        else:
            q = np.exp(zc) / s
            den = blunder * u[i] + (1.0 - blunder) * q
            tot += w[i] * np.log(den)
            share = (1.0 - blunder) * q / den
            dp = (u[i] - q) / den
        g0 += w[i] * share * dw
        if kind[i] == 0:
            g1 += w[i] * share * dt
        else:
            g2 += w[i] * share * dt
        g3 += w[i] * dp
    grad[0] = g0
    grad[1] = g1
    grad[2] = g2
    grad[3] = g3
    return tot


@nb.njit(cache=True, nogil=True)
def family_bins(ptr, r, g, rows, kind, weight, tk, tb, blunder, edges, bins, mean_regret):
    """:func:`option_bins` under the extended family (see :func:`family_loglik`): bins[i, j] the
    probability that decision rows[i]'s option played falls in exact-regret bin j, mean_regret[i]
    the expected exact regret."""
    nb_ = bins.shape[1]
    for i in range(rows.shape[0]):
        d = rows[i]
        lo, hi = ptr[d], ptr[d + 1]
        n = hi - lo
        t = tk if kind[i] == 0 else tb
        for j in range(nb_):
            bins[i, j] = 0.0
        xmin = _least(r, g, lo, hi, weight)
        cut = xmin + CUT * t
        s = 0.0
        for a in range(lo, hi):
            x = (1.0 - weight) * np.float64(r[a]) + weight * np.float64(g[a])
            if x <= cut:
                s += np.exp((xmin - x) / t)
        er = 0.0
        for a in range(lo, hi):
            ra = np.float64(r[a])
            x = (1.0 - weight) * ra + weight * np.float64(g[a])
            soft = np.exp((xmin - x) / t) / s if x <= cut else 0.0
            p = blunder / n + (1.0 - blunder) * soft
            _to_bin(bins, i, edges, ra, p)
            er += p * ra
        mean_regret[i] = er


@nb.njit(cache=True, nogil=True)
def top_share(ptr, r, g, rows, rc, gc, weight, out):
    """out[i] = 1 / k when decision rows[i]'s option played is one of the k options of least
    (1 - weight) r + weight g (the model's most likely options, whatever its temperature and a
    blunder rate below 1), else 0: the top-1 agreement of the decision, ties shared."""
    for i in range(rows.shape[0]):
        d = rows[i]
        xmin = np.inf
        k = 0
        for a in range(ptr[d], ptr[d + 1]):
            x = (1.0 - weight) * np.float64(r[a]) + weight * np.float64(g[a])
            if x < xmin:
                xmin = x
                k = 1
            elif x == xmin:
                k += 1
        xc = (1.0 - weight) * np.float64(rc[i]) + weight * np.float64(gc[i])
        out[i] = 1.0 / k if xc == xmin else 0.0

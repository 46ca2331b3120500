"""numba kernels of the player-model likelihood (:mod:`harness.fit`): per-decision choice probabilities.

Decisions are stored flat: decision d's legal options are ``r[ptr[d]:ptr[d + 1]]``, each option's
regret (best value - its value, >= 0, exactly 0 for the best and for options tied with it). A
kernel walks the decisions ``rows`` (indices into ``ptr``: a player's, or one kind of them, without
copying their options); out[i] is decision rows[i]'s.

Options whose regret is above :data:`CUT` x temperature are left out of the softmax's sum: each
adds less than exp(-CUT) = 4e-18 to a sum that is at least 1 (the best option's exp(0)), which
float64 cannot hold (half an ulp of 1 is 1.1e-16), so the sums are the same to the last bit or
two, and at low temperatures most options cost a comparison instead of an exp.
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: Options with regret above CUT x temperature are left out of the softmax's sum (see above).
CUT = 40.0


@nb.njit(cache=True, nogil=True)
def chosen_probs(ptr, r, rows, rc, temperature, out):
    """out[i] = the probability of the chosen option (regret rc[i]) under the softmax of -regret /
    temperature over decision rows[i]'s options; temperature 0 is its limit: 1/k for a choice among
    the k options of regret 0, else 0."""
    cut = CUT * temperature
    for i in range(rows.shape[0]):
        d = rows[i]
        lo, hi = ptr[d], ptr[d + 1]
        if temperature > 0.0:
            tot = 0.0
            for a in range(lo, hi):
                if r[a] <= cut:
                    tot += np.exp(-r[a] / temperature)
            out[i] = np.exp(-rc[i] / temperature) / tot
        else:
            k = 0
            for a in range(lo, hi):
                if r[a] == 0.0:
                    k += 1
            out[i] = 1.0 / k if rc[i] == 0.0 else 0.0


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
            if temperature > 0.0:
                if r[a] <= cut:
                    tot += np.exp(-r[a] / temperature)
            elif r[a] == 0.0:
                k += 1
        er = 0.0
        for a in range(lo, hi):
            if temperature > 0.0:
                s = np.exp(-r[a] / temperature) / tot if r[a] <= cut else 0.0
            else:
                s = 1.0 / k if r[a] == 0.0 else 0.0
            p = blunder / n + (1.0 - blunder) * s
            j = 0
            while j < edges.shape[0] and edges[j] < r[a]:
                j += 1
            bins[i, j] += p
            er += p * r[a]
        mean_regret[i] = er

"""numba kernels of the player-model likelihood (:mod:`harness.fit`): per-decision choice probabilities.

Decisions are stored flat: decision d's legal options are ``r[ptr[d]:ptr[d + 1]]``, each option's
regret (best value - its value, >= 0, exactly 0 for the best and for options tied with it).
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def chosen_probs(ptr, r, rc, temperature, out):
    """out[d] = the probability of the chosen option (regret rc[d]) under the softmax of -regret /
    temperature over decision d's options; temperature 0 is its limit: 1/k for a choice among the
    k options of regret 0, else 0."""
    for d in range(rc.shape[0]):
        lo, hi = ptr[d], ptr[d + 1]
        if temperature > 0.0:
            tot = 0.0
            for a in range(lo, hi):
                tot += np.exp(-r[a] / temperature)
            out[d] = np.exp(-rc[d] / temperature) / tot
        else:
            k = 0
            for a in range(lo, hi):
                if r[a] == 0.0:
                    k += 1
            out[d] = 1.0 / k if rc[d] == 0.0 else 0.0


@nb.njit(cache=True, nogil=True)
def option_bins(ptr, r, temperature, blunder, edges, bins, mean_regret):
    """Under the model (temperature, blunder), for each decision d: bins[d, j] = the probability
    that the option played falls in regret bin j (j = number of ``edges`` below its regret), and
    mean_regret[d] = the expected regret."""
    nb_ = bins.shape[1]
    for d in range(ptr.shape[0] - 1):
        lo, hi = ptr[d], ptr[d + 1]
        n = hi - lo
        for j in range(nb_):
            bins[d, j] = 0.0
        tot = 0.0
        k = 0
        for a in range(lo, hi):
            if temperature > 0.0:
                tot += np.exp(-r[a] / temperature)
            elif r[a] == 0.0:
                k += 1
        er = 0.0
        for a in range(lo, hi):
            if temperature > 0.0:
                s = np.exp(-r[a] / temperature) / tot
            else:
                s = 1.0 / k if r[a] == 0.0 else 0.0
            p = blunder / n + (1.0 - blunder) * s
            j = 0
            while j < edges.shape[0] and edges[j] < r[a]:
                j += 1
            bins[d, j] += p
            er += p * r[a]
        mean_regret[d] = er

"""One turn's keep lattice over many columns (``harness.exact.kernels.solver.turn_args``, then
``turn_values``): its cost per column at each width, and, on the same columns, one call against
calls of at most ``WIDE - 1`` columns (the face-by-face loops) — the measurement behind ``WIDE``
and target play's ``TARGET_COLUMNS``.

    nice python benchmarks/bench_turns.py --rules scandinavian

Stop values are drawn at random on four levels (ties everywhere, as in play); every call is
repeated and the fastest repetition counted (thread CPU time), both ways alternating. The two
ways give the same values and keeps to the last bit, which the script checks.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.exact import solver as S
from harness.exact.kernels import solver as K
from harness.game.rules import load_rules


def _turns(dk: K.DiceK, stop: np.ndarray, step: int, keeps: bool) -> tuple[np.ndarray, np.ndarray]:
    """turn_args (keeps) or turn_values over the columns of stop in slices of ``step``: (E, args) of
    all of them (args empty for turn_values)."""
    n_rolls, nu = stop.shape
    n_keeps, ns = dk.add.shape[0], dk.n_small
    E = np.empty((n_keeps, nu))
    args = np.empty((dk.rerolls, n_rolls, nu if keeps else 0), np.int32)
    none = np.zeros((0, 0, 0))
    for a in range(0, nu, step):
        b = min(nu, a + step)
        e = np.empty((n_keeps, b - a))
        s = np.ascontiguousarray(stop[:, a:b])
        if keeps:
            g = np.empty((dk.rerolls, n_rolls, b - a), np.int32)
            K.turn_args(dk, b - a, s, s, e, np.empty((ns, b - a)), np.empty((ns, b - a), np.int32), g)
            args[:, :, a:b] = g
        else:
            K.turn_values(dk, b - a, s, s, e, np.empty((ns, b - a)), none, none)
        E[:, a:b] = e
    return E, args


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--widths", default="16,64,95,96,128,184,256,375")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    dk = S.build_plan(load_rules(a.rules)).dice
    rng = np.random.default_rng(1)
    print(f"WIDE = {K.WIDE}")
    for keeps in (True, False):
        print(f"\n{'turn_args' if keeps else 'turn_values'}:\n")
        print("| columns | one call (us/column) | slices of at most WIDE - 1 (us/column) | ratio |")
        print("|---:|---:|---:|---:|")
        for nu in (int(w) for w in a.widths.split(",")):
            stop = rng.integers(0, 4, (len(dk.roll_prob), nu)) / 4.0
            narrow = min(nu, K.WIDE - 1)
            one, sliced = _turns(dk, stop, nu, keeps), _turns(dk, stop, narrow, keeps)  # also compiles
            if not (np.array_equal(one[0], sliced[0]) and np.array_equal(one[1], sliced[1])):
                raise SystemExit(f"{nu} columns: one call and slices differ")
            best = [np.inf, np.inf]
            reps = max(1, 2000 // nu)
            for _ in range(a.reps):
                for k, step in enumerate((nu, narrow)):
                    t0 = time.thread_time()
                    for _ in range(reps):
                        _turns(dk, stop, step, keeps)
                    best[k] = min(best[k], (time.thread_time() - t0) / reps / nu * 1e6)
            print(f"| {nu} | {best[0]:.2f} | {best[1]:.2f} | {best[1] / best[0]:.2f} |")


if __name__ == "__main__":
    main()

"""The forward pass of a policy over the solver's states: the codes of a turn's outcomes
(:func:`outcome_codes`), the score windows of each layer (:func:`layer_windows`, in memory or in
memory-mapped scratch files: :func:`scratch_zeros`, :func:`window_storage`), the pass itself
(:func:`forward_pass`; :func:`optimal_fill` the optimal policy's turns) and the exact
:class:`Figures` it yields (:func:`harness.exact.solver.exact_distribution` runs it on a value table
and caches them).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from harness.exact.kernels import solver as K
from harness.exact.plan import Plan, Solution, build_plan
from harness.exact.threads import run_blocks, split_range
from harness.util.progress import bar
from harness.game.rules import RuleSet
from harness.game.scoring import context


@dataclass(frozen=True)
class Figures:
    """Exact figures of one column under optimal (T=0, tie-ruled) play.

    distribution: (cap+1,) float64 P(final score = s), or None when only moments were computed;
    the last cell holds P(score >= cap) when ``cap`` is below the highest possible score.
    storage: where the score windows were kept ("memory", "disk"), or "skipped: why".
    """

    rules: str
    digest: str
    expected_score: float
    forward_mean: float
    std: float
    p_bonus: float
    percentiles: dict[str, int] | None
    states: int
    seconds: float
    solve_seconds: float
    cached: bool
    distribution: np.ndarray | None = field(default=None, repr=False)
    storage: str = "memory"

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "digest": self.digest,
            "expected_score": self.expected_score,
            "std": self.std,
            "p_bonus": self.p_bonus,
            "percentiles": self.percentiles,
            "states": self.states,
            "seconds": self.seconds,
            "solve_seconds": self.solve_seconds,
            "cached": self.cached,
            "forward_mean": self.forward_mean,
            "distribution_storage": self.storage,
        }


def outcome_codes(rules: RuleSet, lay: K.Layout) -> K.Outcomes:
    """The codes of one turn's outcomes (box, points, extra bonus) of a layout (:class:`K.Outcomes`)."""
    nbx = rules.n_boxes
    off = (np.cumsum(lay.box_nvals) - lay.box_nvals).astype(np.int32)
    half = int(lay.box_nvals.sum())
    o_box = np.repeat(np.arange(nbx, dtype=np.int64), lay.box_nvals)
    o_pts = np.concatenate([lay.box_vals[b, : lay.box_nvals[b]] for b in range(nbx)])
    extras = [0, int(rules.extra_yatzy_bonus)] if rules.extra_yatzy_bonus else [0]
    return K.Outcomes(
        off,
        lay.box_vidx,
        half,
        np.tile(o_box, len(extras)),
        np.tile(o_pts, len(extras)),
        np.repeat(np.array(extras, dtype=np.int64), half),
    )


def percentiles_of(dist: np.ndarray) -> dict[str, int]:
    """Inverted-CDF percentiles (smallest score whose CDF reaches q; 1e-12 absorbs rounding)."""
    # imported here: the statistics package (~0.03 s) is not needed by whoever only loads a table (review)
    from harness.stats import PERCENTILES

    cdf = np.cumsum(dist)
    return {str(q): int(np.searchsorted(cdf, q / 100 - 1e-12, side="left")) for q in PERCENTILES}


def layer_windows(plan: Plan, k: int, cap: int, extra: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
    start, stop = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
    wlo = np.zeros(stop - start, dtype=np.int64)
    wlen = np.zeros(stop - start, dtype=np.int64)
    K.layer_windows(plan.layout, plan.item_mask, plan.item_flag, lo, hi, start, cap, extra, plan.bonus0, wlo, wlen)
    woff = np.zeros(stop - start + 1, dtype=np.int64)
    np.cumsum(wlen, out=woff[1:])
    return wlo, woff


def scratch_zeros(n: int, scratch: Path | None, dtype: Any = np.float64) -> np.ndarray:
    """n zeros (float64 by default): in memory, or (``scratch`` a directory) in a memory-mapped file there.

    The file is unlinked as it is mapped, so it disappears with the array, also when the
    process dies; the kernel pages it in and out as the pass walks the layers.
    """
    dtype = np.dtype(dtype)
    if scratch is None:
        return np.zeros(n, dtype=dtype)
    fd, name = tempfile.mkstemp(prefix="forward-", suffix=".f64", dir=scratch)
    try:
        size = max(n, 1) * dtype.itemsize
        try:
            # reserve the blocks now (they read as zeros): a disk that fills up later must not
            # turn a write into the mapping into SIGBUS; ENOSPC here is an ordinary OSError
            os.posix_fallocate(fd, 0, size)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                raise
            os.ftruncate(fd, size)  # a file system without fallocate: a sparse file
        mm = np.memmap(name, dtype=dtype, mode="r+", shape=(max(n, 1),))
    finally:
        os.close(fd)
        os.unlink(name)
    return mm.view(np.ndarray)[:n]  # a plain ndarray over the mapping (the kernels compile for ndarray)


#: fill(a, b, row_of, live, outp, P, start): the outcome distribution of the turn of every live
#: slot of items a..b-1 into outp (see :func:`forward_pass`)
OutcomeFill = Callable[[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], None]


def optimal_fill(sol: Solution, threads: int) -> OutcomeFill:
    """The :data:`OutcomeFill` of the T=0 optimal policy (:func:`harness.exact.kernels.solver.forward_items`)."""
    rules, plan = sol.rules, sol.plan
    ctx, oc = context(rules), outcome_codes(rules, plan.layout)

    def fill(a: int, b: int, row_of: np.ndarray, live: np.ndarray, outp: np.ndarray, P: np.ndarray, start: int) -> None:
        def fwd(c: int, d: int) -> None:
            K.forward_items(
                ctx,
                plan.layout,
                plan.dice,
                oc,
                sol.values,
                plan.item_mask,
                plan.item_flag,
                c,
                d,
                row_of[c - a :],
                live[c - a :],
                outp,
                P,
                start,
            )

        run_blocks(fwd, split_range(a, b, 4 * threads if b - a > 16 else 1), threads)

    return fill


def layer_chunks(
    plan: Plan, k: int, P: np.ndarray, n_out: int, rows_per_chunk: int
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """The chunks of layer ``k``'s items with a live slot (``P``: the layer's state probabilities):
    (a, b, row_of, live, outp) of items a..b-1 whose outcome rows fit in ``rows_per_chunk``, as
    :func:`forward_pass` walks them (``outp`` zeros, one row per live slot, see there)."""
    lay = plan.layout
    start = int(plan.layer_states[k])
    lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
    offs = lay.base[plan.item_mask[lo:hi] * lay.n_flags + plan.item_flag[lo:hi]] - start
    n_live = np.add.reduceat((P > 0).astype(np.int64), offs) if hi > lo else np.zeros(0, dtype=np.int64)
    alive = n_live > 0
    cum = np.cumsum(n_live)
    a = lo
    while a < hi:
        done = int(cum[a - lo - 1]) if a > lo else 0
        b = min(hi, max(a + 1, lo + int(np.searchsorted(cum, done + rows_per_chunk, side="right"))))
        live = alive[a - lo : b - lo]
        rows = n_live[a - lo : b - lo]
        if live.any():
            yield a, b, np.cumsum(rows) - rows, live, np.zeros((max(int(rows.sum()), 1), n_out))
        a = b


@dataclass(frozen=True)
class Chunk:
    """A chunk of layer ``k`` after its fill, as an observer sees it: items a..b-1, their outcome rows
    (``row_of``, ``live``, ``outp``: see :func:`forward_pass`), and the layer's state probabilities ``P``
    (from state ``start``) and score windows (``D``, ``wlo``, ``woff``)."""

    k: int
    a: int
    b: int
    row_of: np.ndarray
    live: np.ndarray
    outp: np.ndarray
    P: np.ndarray
    start: int
    D: np.ndarray
    wlo: np.ndarray
    woff: np.ndarray


#: observe(chunk): sees every chunk of a pass after its fill (see :func:`forward_pass`)
ChunkObserver = Callable[[Chunk], None]


@dataclass(frozen=True)
class PassSetup:
    """How a forward pass runs, beside what it computes: ``rows_per_chunk`` outcome rows a chunk;
    with ``scratch`` the score windows live in memory-mapped files in that directory (see
    :func:`scratch_zeros`) instead of memory; ``progress`` shows a bar of the layers on stderr;
    ``observe`` (a :data:`ChunkObserver`) sees every chunk's outcome rows and the layer's score
    windows before they are pushed (:mod:`harness.exact.course` reads the course of a game there);
    in memory, a layer's windows are zeroed and reused two layers on, so an observer that keeps
    them copies them."""

    rows_per_chunk: int = 8192
    scratch: Path | None = None
    progress: bool = False
    observe: ChunkObserver | None = None


def forward_pass(
    rules: RuleSet,
    plan: Plan,
    fill: OutcomeFill,
    cap: int,
    want_dist: bool,
    threads: int,
    setup: PassSetup = PassSetup(),
) -> tuple[float, float, float, np.ndarray | None]:
    """One forward pass of a policy over the states of ``plan``: (mean, E[S^2], p_bonus, distribution or None).

    ``fill`` gives the policy: for a chunk of items a..b-1 of one layer it writes, for the j-th live
    slot (P[state - start] > 0, in slot order) of item t, the probability of each turn outcome code
    (:class:`harness.exact.kernels.solver.Outcomes`) into outp[row_of[t - a] + j]; items not ``live[t - a]``
    have no rows. The pass then moves probability, moments and score windows to the next layer.
    ``setup`` (:class:`PassSetup`): chunk size, scratch directory, progress bar and chunk observer.
    """
    rows_per_chunk, scratch, progress, observe = setup.rows_per_chunk, setup.scratch, setup.progress, setup.observe
    lay = plan.layout
    oc = outcome_codes(rules, lay)
    extra = int(rules.extra_yatzy_bonus)
    nthreads = threads
    nbx = rules.n_boxes
    size = lambda k: int(plan.layer_states[k + 1] - plan.layer_states[k])  # noqa: E731
    P, S1, S2 = np.zeros(1), np.full(1, float(plan.bonus0)), np.full(1, float(plan.bonus0) ** 2)
    P[0] = 1.0
    if want_dist:
        wlo, woff = layer_windows(plan, 0, cap, extra)
        D = scratch_zeros(int(woff[-1]), scratch)
        D[0] = 1.0
    else:
        wlo = woff = np.zeros(2, dtype=np.int64)
        D = np.zeros(1)
    pbonus = 0.0
    spare: np.ndarray | None = None  # the windows of the layer before last, in memory: reused when large enough
    shown = bar(nbx, f"forward pass {rules.name}", "layer", quiet=not progress)
    for k in range(nbx):
        n2 = size(k + 1)
        P2, S12, S22, B2 = np.zeros(n2), np.zeros(n2), np.zeros(n2), np.zeros(n2)
        if want_dist:
            wlo2, woff2 = layer_windows(plan, k + 1, cap, extra)
            cells = int(woff2[-1])
            # the spare zeroed in place: its pages are mapped (a fresh array's first touch costs a page fault
            # and the kernel's zeroing of every page, a tenth of a scandinavian evaluation's time); else it
            # goes before the new one is made: never three layers of windows at once
            D2 = spare[:cells] if spare is not None and len(spare) >= cells else None
            spare = None
            if D2 is None:
                D2 = scratch_zeros(cells, scratch)
            else:
                D2.fill(0.0)
        else:
            wlo2 = woff2 = np.zeros(2, dtype=np.int64)
            D2 = np.zeros(1)
        start, start2 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        for a, b, row_of, live, outp in layer_chunks(plan, k, P, len(oc.o_box), rows_per_chunk):

            def push(t: int, _: int) -> None:
                K.push_part(
                    t,
                    nthreads,
                    lay,
                    oc,
                    plan.item_mask,
                    plan.item_flag,
                    a,
                    b,
                    row_of,
                    live,
                    outp,
                    start,
                    P,
                    S1,
                    S2,
                    wlo,
                    woff,
                    D,
                    start2,
                    P2,
                    S12,
                    S22,
                    wlo2,
                    woff2,
                    D2,
                    want_dist,
                    B2,
                )

            fill(a, b, row_of, live, outp, P, start)
            if observe is not None:
                observe(Chunk(k, a, b, row_of, live, outp, P, start, D, wlo, woff))
            run_blocks(push, [(t, t + 1) for t in range(nthreads)], nthreads)
        if want_dist and scratch is None:
            spare = D.base if D.base is not None else D  # the whole buffer this layer's windows were cut from
        P, S1, S2, wlo, woff, D = P2, S12, S22, wlo2, woff2, D2
        pbonus += float(B2.sum())
        shown.update()
    shown.close()
    total_p = float(P.sum())
    if abs(total_p - 1.0) > 1e-9:
        raise AssertionError(f"forward pass lost probability: {total_p}")
    mean, m2 = float(S1.sum()), float(S2.sum())
    p_bonus = pbonus + (1.0 if plan.bonus0 > 0 else 0.0)
    dist = None
    if want_dist:
        dist = np.zeros(cap + 1)
        for i in range(len(P)):
            w = D[woff[i] : woff[i + 1]]
            dist[wlo[i] : wlo[i] + len(w)] += w
    return mean, m2, p_bonus, dist


def distribution_bytes(rules: RuleSet, cap: int | None = None) -> int:
    """Peak bytes of the score windows of two adjacent layers in the forward pass."""
    plan = build_plan(rules)
    cap = cap if cap is not None else score_cap(rules, 2)
    cells = [int(layer_windows(plan, k, cap, int(rules.extra_yatzy_bonus))[1][-1]) for k in range(rules.n_boxes + 1)]
    return 8 * max(a + b for a, b in zip(cells, cells[1:]))


def score_cap(rules: RuleSet, extras: int) -> int:
    """The perfect sheet plus ``extras`` extra yatzy bonuses: where the score windows stop."""
    return int(rules.perfect_score()) + extras * int(rules.extra_yatzy_bonus)


def window_storage(
    rules: RuleSet, cap: int, max_bytes: int, max_disk_bytes: int, scratch_dir: Path
) -> tuple[str, Path | None]:
    """Where the score windows of a forward pass go: ("memory", None), ("disk", directory) or
    ("skipped: why", None) when neither limit (nor the free disk space) allows them."""
    need = distribution_bytes(rules, cap)
    if need <= max_bytes:
        return "memory", None
    gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
    if need > max_disk_bytes:
        return (
            f"skipped: the score windows need {gib(need)}, more than --max-memory "
            f"({gib(max_bytes)}) and --max-disk ({gib(max_disk_bytes)})"
        ), None
    try:
        scratch_dir.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(scratch_dir).free
    except OSError as exc:
        return f"skipped: scratch directory {scratch_dir} unusable ({exc})", None
    if free < need + (2 << 30):
        return (
            f"skipped: the score windows need {gib(need)} of disk in {scratch_dir} "
            f"(plus 2 GiB to spare), {gib(free)} free"
        ), None
    return "disk", scratch_dir

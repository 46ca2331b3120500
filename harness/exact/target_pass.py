"""Target play's forward pass over (state, score so far), cut into blocks that can run anywhere.

Target play (``solver:target=T``) decides from the points it still needs, so its chain is over
(state, running total): every live (state, points still needed) asks its own turn
(:func:`harness.exact.kernels.target.target_outcomes`), t folded into [-1, the state's vector
length] where the choices no longer change. Scores are kept exact (no lumped top cell: the targets
need them).

A layer's live states are cut into **blocks** of about :data:`BLOCK_ROWS` (state, target) rows, the
cut made from the layer's cells alone, never from the threads or workers. A block (:func:`run_block`)
works out its rows' turns and pushes their probability into its own partial copy of the next layer
(only the score windows of the states its outcomes lead to), and returns the cells it reached; the
partials are added into the next layer in block order (:func:`target_column`). So the bits are the
same whether the blocks run here one after another, on this process's threads, or as tasks on a Dask
cluster of any size, completing in any order::

    parts = target_column(rules, tp)                                  # here
    parts = target_column(rules, tp, spec="solver:target=250", tasks=dask_tasks)   # on the workers

Only a block's live cells travel to a worker and only its partial comes back (about 1.2 GiB in
all for scandinavian's ``solver:target=250``, against the 24.5 GiB its rows' outcomes would be);
a worker reads the target table from the shared cache (:func:`worker_pass`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.exact import solver as S
from harness.exact.kernels import target as TK
from harness.exact.target import table_path
from harness.game.registry import make
from harness.game.rules import RuleSet
from harness.game.scoring import context
from harness.game.strategy import TargetPlay
from harness.util.errors import UserError
from harness.util.progress import bar
from harness.util.sums import dot

#: (state, target) rows of one block: a layer's live states are cut into blocks of about this many
#: rows (a block's turns take about 0.5 s of CPU on scandinavian), whatever the threads or workers.
#: Part of what the bits depend on (the partials' sums): a change needs a new evaluation FORMAT.
BLOCK_ROWS = 1 << 17
#: (state, target) outcome rows of a block in memory at once (121 outcomes of 8 bytes each).
TARGET_ROWS = 8192


def target_cap(rules: RuleSet) -> int:
    """Where target play's score windows stop: its scores are exact (the targets need them), so no
    top cell lumps the rest: the perfect sheet plus an extra bonus at every box but the first."""
    return S.score_cap(rules, max(rules.n_boxes - 1, 0))


@dataclass
class Pass:
    """What every block of one target-play evaluation reads, built once a process."""

    rules: RuleSet
    tp: TargetPlay
    plan: Any
    ctx: Any
    oc: Any
    cap: int
    states: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # (mask, flag, slot, upper) of every state
    windows: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def layer(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(wlo, woff): layer k's score windows (:func:`harness.exact.solver.layer_windows`)."""
        if k not in self.windows:
            self.windows[k] = S.layer_windows(self.plan, k, self.cap, int(self.rules.extra_yatzy_bonus))
        return self.windows[k]


def make_pass(rules: RuleSet, tp: TargetPlay) -> Pass:
    """The :class:`Pass` of target play ``tp`` on ``rules`` (the solver's plan, the outcome codes)."""
    plan = S.build_plan(rules)
    return Pass(rules, tp, plan, context(rules), S.outcome_codes(rules, plan.layout), target_cap(rules), plan.states())


_PASS: dict[tuple[str, str, int], Pass] = {}


def worker_pass(rules: RuleSet, spec: str, tmax: int) -> Pass:
    """The :class:`Pass` of ``spec`` on a worker: its target table read from the shared cache (the
    client's, whose ``tmax`` it must have; a UserError if the worker's cache lacks it), kept for the
    evaluation's next blocks."""
    key = (rules.digest, spec, tmax)
    if key not in _PASS:
        path = table_path(rules, "target", tmax)
        if not path.exists():  # (else this worker would solve a table of its own for minutes)
            raise UserError(
                f"{spec}: the target table the client made is not in this worker's cache ({path}): "
                "every worker must see the client's cache directory (--cache-dir on a shared file system)"
            )
        tp = make(spec, rules).target_play()  # (the client checked that the bot is solitaire)
        if tp is None or tp.table.tmax != tmax:
            raise RuntimeError(
                f"{spec}: this worker's target table is not the client's (tmax "
                f"{None if tp is None else tp.table.tmax}, the client's {tmax})"
            )
        _PASS.clear()  # one evaluation's table at a time
        _PASS[key] = make_pass(rules, tp)
    return _PASS[key]


@dataclass(frozen=True)
class Block:
    """Block ``index`` of layer ``k``: its live states (indices in the layer), each one's first
    (folded) target row and number of rows, the running total of its first live cell, and its live
    cells one state after another (``n_cells`` each)."""

    k: int
    index: int
    live: np.ndarray
    c_lo: np.ndarray
    c_n: np.ndarray
    s0: np.ndarray
    n_cells: np.ndarray
    cells: np.ndarray


@dataclass(frozen=True)
class Partial:
    """What a block adds to the next layer: probability ``mass`` at its score-window ``cells``,
    ``p`` at its ``states``; and its outcomes' tallies (``vec``, ``pbonus``). ``seconds``: the
    thread CPU the block took (its threads' summed)."""

    cells: np.ndarray
    mass: np.ndarray
    states: np.ndarray
    p: np.ndarray
    vec: np.ndarray
    pbonus: float
    seconds: float
    setup: float = 0.0  # on a worker: the seconds its first block spent reading the table and plan


_WARM = False  # a process's first chunk runs on one thread: numba compiles (or loads) each kernel once


def run_block(ps: Pass, blk: Block) -> Partial:
    """One block's turns and pushes, on this process's threads, into a partial copy of the next
    layer holding only the windows of the states its outcomes lead to."""
    global _WARM
    t0 = time.thread_time()
    me = threading.get_ident()
    pool: list[float] = []  # the CPU of the kernels run on the pool's threads (this thread's is in t0's count)
    plan, tp, oc = ps.plan, ps.tp, ps.oc
    lay, dk = plan.layout, plan.dice
    off, values = tp.table.off, tp.table.values
    threads = S.n_threads()
    k = blk.k
    start, start2, end2 = (int(plan.layer_states[i]) for i in (k, k + 1, k + 2))
    wlo2, woff2 = ps.layer(k + 1)
    live = blk.live
    g = live + start
    st_mask, st_flag, st_slot, st_upper = (x[g] for x in ps.states)
    # the partial: the windows of the states this block's outcomes reach, in the next layer's order
    marks = np.zeros(end2 - start2, np.bool_)
    TK.successor_marks(lay, oc, st_mask, st_flag, st_upper, st_slot, start2, marks)
    widths = np.diff(woff2)
    woff2c = np.zeros(len(widths) + 1, np.int64)
    np.cumsum(np.where(marks, widths, 0), out=woff2c[1:])
    D2 = np.zeros(int(woff2c[-1]))
    P2 = np.zeros(len(widths))
    # this layer's windows, as the block's kernels read them: its live cells only
    n_states = start2 - start
    wlo = np.zeros(n_states, np.int64)
    woff = np.zeros(n_states, np.int64)
    wlo[live] = blk.s0
    woff[live] = np.cumsum(blk.n_cells) - blk.n_cells
    D = blk.cells
    jlo = np.zeros(len(live), np.int64)
    jhi = blk.n_cells - 1
    n_out = len(oc.o_box)
    vec = np.zeros(n_out)
    pbonus = np.zeros(1)
    run_shift = plan.bonus0 if k == 0 else 0  # the sheet shows a bonus earned before play from its first box
    c_lo, c_n = blk.c_lo, blk.c_n
    cum = np.cumsum(c_n)
    a = 0
    while a < len(live):
        done = int(cum[a - 1]) if a else 0
        b = min(len(live), max(a + 1, int(np.searchsorted(cum, done + TARGET_ROWS, side="right"))))
        row0 = cum[a:b] - c_n[a:b] - done
        n_rows = int(cum[b - 1]) - done
        outp = np.zeros((n_rows, n_out))
        args = (st_mask[a:b], st_flag[a:b], st_upper[a:b], st_slot[a:b], c_lo[a:b], c_n[a:b], row0)
        # only the rows with probability are worked out: runs of them (the others stay 0)
        m = np.empty(n_rows)
        TK.row_mass(off, tp.target, run_shift, live[a:b], jlo[a:b], jhi[a:b], start, c_lo[a:b], row0, wlo, woff, D, m)
        run = np.empty((4, n_rows), np.int64)
        n_runs = TK.mass_runs(m, c_lo[a:b], c_n[a:b], row0, *run)
        rq, r_lo, r_n, r_row = run[:, :n_runs]
        runs = (*(x[rq] for x in args[:4]), r_lo, r_n, r_row)

        def outcomes(lo: int, hi: int, runs=runs, outp=outp) -> None:
            c0 = time.thread_time()
            TK.target_outcomes(
                ps.ctx, lay, dk, oc, (values, off), (tp.values, tp.lam, tp.temperature, tp.blunder), runs, lo, hi, outp
            )
            if threading.get_ident() != me:
                pool.append(time.thread_time() - c0)

        def push(t: int, _: int, a=a, b=b, args=args, outp=outp) -> None:
            c0 = time.thread_time()
            TK.target_push(
                t,
                threads,
                lay,
                oc,
                off,
                tp.target,
                run_shift,
                live[a:b],
                jlo[a:b],
                jhi[a:b],
                *args[:4],
                start,
                args[4],
                args[6],
                outp,
                wlo,
                woff,
                D,
                start2,
                P2,
                wlo2,
                woff2c,
                D2,
            )
            if threading.get_ident() != me:
                pool.append(time.thread_time() - c0)

        # the threads split the chunk's (state, target) rows evenly, and the successors
        split = threads if n_runs >= 8 and _WARM else 1
        r_cum = np.cumsum(r_n)
        cuts = np.searchsorted(r_cum, np.linspace(0, r_cum[-1], split + 1)[1:-1])
        edges = [0, *sorted({int(c) for c in cuts if 0 < c < n_runs}), n_runs]
        S.run_blocks(outcomes, list(zip(edges, edges[1:])), split)
        S.run_blocks(push, [(t, t + 1) for t in range(threads)], threads if _WARM else 1)
        TK.target_mass(lay, oc, args[2], c_n[a:b], row0, outp, m, vec, pbonus)
        _WARM = True
        a = b
    nz = np.flatnonzero(D2)
    succ = np.flatnonzero(marks)
    shift = np.repeat(woff2[succ] - woff2c[succ], widths[succ])  # partial cell -> the next layer's cell
    states = np.flatnonzero(P2)
    return Partial(
        nz + shift[nz], D2[nz], states, P2[states], vec, float(pbonus[0]), time.thread_time() - t0 + sum(pool)
    )


def cut(c_n: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """A layer's live states cut into runs [a, b) of about ``rows`` (state, target) rows each
    (at least one state each)."""
    cum = np.cumsum(c_n)
    edges = [0]
    while edges[-1] < len(c_n):
        a = edges[-1]
        done = int(cum[a - 1]) if a else 0
        edges.append(min(len(c_n), max(a + 1, int(np.searchsorted(cum, done + rows, side="right")))))
    return list(zip(edges, edges[1:]))


def target_block_task(rules: RuleSet, spec: str, tmax: int, blk: Block) -> Partial:
    """One task: block ``blk`` of ``spec``'s target play on ``rules`` (:func:`run_block`), with the
    worker's set-up seconds (reading the plan and the target table)."""
    t0 = time.perf_counter()
    ps = worker_pass(rules, spec, tmax)
    setup = time.perf_counter() - t0
    return replace(run_block(ps, blk), setup=setup)


@dataclass
class Timing:
    """Where a split evaluation's time went, layer by layer: each block's CPU seconds (summed over
    the threads of the process that ran it) and its worker's set-up seconds (reading the plan and
    the target table: a worker's first block), the client's seconds cutting and packing the
    layer's blocks and summing each partial, and the layer's wall seconds (from its first block
    cut to its last partial summed)."""

    blocks: list[list[float]] = field(default_factory=list)
    setup: list[list[float]] = field(default_factory=list)
    pack: list[float] = field(default_factory=list)
    sums: list[list[float]] = field(default_factory=list)
    layer_wall: list[float] = field(default_factory=list)
    partial_cells: int = 0
    sent_cells: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in ("blocks", "setup", "pack", "sums", "layer_wall", "partial_cells", "sent_cells")
        }


def target_column(
    rules: RuleSet,
    tp: TargetPlay,
    progress: bool = False,
    scratch: Path | None = None,
    *,
    spec: str | None = None,
    tasks: Any = None,
    timing: Timing | None = None,
) -> tuple[float, float, float, np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """One column's forward pass of target play over (state, score so far):
    :func:`harness.exact.evaluate._column`'s figures (the score windows in files in ``scratch`` if
    given). With ``tasks`` (:class:`harness.jobs.cluster.DaskTasks`) and the bot's ``spec``, each
    layer's blocks run as tasks (every worker reading the target table from the shared cache) and
    their partials are summed here in block order: the same bits as here. ``timing`` is filled
    with where the time went."""
    ps = make_pass(rules, tp)
    plan, oc = ps.plan, ps.oc
    nbx = rules.n_boxes
    cap = ps.cap
    off = tp.table.off
    n_out = len(oc.o_box)
    vec = np.zeros(n_out)
    pbonus = 0.0
    P = np.ones(1)
    wlo, woff = ps.layer(0)
    D = S.scratch_zeros(int(woff[-1]), scratch)
    D[0] = 1.0
    remote = tasks is not None and spec is not None
    layers = bar(nbx, f"forward pass {rules.name} (target {tp.target})", "layer", quiet=not progress)
    for k in range(nbx):
        t_layer = time.perf_counter()
        start, start2 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        wlo2, woff2 = ps.layer(k + 1)
        D2 = S.scratch_zeros(int(woff2[-1]), scratch)
        P2 = np.zeros(int(plan.layer_states[k + 2]) - start2)
        live = np.flatnonzero(P > 0)
        jlo = np.empty(len(live), np.int64)
        jhi = np.empty(len(live), np.int64)
        TK.live_cells(D, woff, live, jlo, jhi)
        g = live + start
        n_vec = off[g + 1] - off[g]
        run_shift = plan.bonus0 if k == 0 else 0  # the sheet shows a bonus earned before play from its first box
        c_lo = np.clip(tp.target - (wlo[live] + jhi - run_shift), -1, n_vec)
        c_n = np.clip(tp.target - (wlo[live] + jlo - run_shift), -1, n_vec) - c_lo + 1
        n_cells = jhi - jlo + 1

        def block(i: int, a: int, b: int) -> Block:
            n = n_cells[a:b]
            first = np.repeat(woff[live[a:b]] + jlo[a:b] - (np.cumsum(n) - n), n)
            return Block(
                k,
                i,
                live[a:b],
                c_lo[a:b],
                c_n[a:b],
                wlo[live[a:b]] + jlo[a:b],
                n,
                np.asarray(D[first + np.arange(int(n.sum()))]),
            )

        blocks = cut(c_n, BLOCK_ROWS)
        parts: list[Any]
        if remote:
            tmax = tp.table.tmax
            parts = [
                tasks.submit(
                    target_block_task,
                    rules,
                    spec,
                    tmax,
                    block(i, a, b),
                    key=f"target-{rules.digest[:12]}-{k}-{i}-{time.time_ns()}",
                    priority=-i,
                    name=f"{spec} layer {k} block {i}",
                )
                for i, (a, b) in enumerate(blocks)
            ]
        else:
            parts = [(i, a, b) for i, (a, b) in enumerate(blocks)]
        pack = time.perf_counter() - t_layer
        seconds, setup, sums = [], [], []
        try:
            for i, item in enumerate(parts):
                part = item.result() if remote else run_block(ps, block(*item))
                parts[i] = None  # (its partial is summed, then dropped)
                t0 = time.perf_counter()
                D2[part.cells] += part.mass  # (a block's cells are distinct: no index twice)
                P2[part.states] += part.p
                vec += part.vec
                pbonus += part.pbonus
                seconds.append(part.seconds)
                setup.append(part.setup)
                layers.set_postfix_str(f"layer {k + 1}: {i + 1}/{len(parts)} blocks", refresh=False)
                sums.append(time.perf_counter() - t0)
                if timing is not None:
                    timing.partial_cells += len(part.cells)
        except BaseException:
            if remote:
                tasks.cancel([f for f in parts if f is not None and not f.done()])
            raise
        if timing is not None:
            timing.blocks.append(seconds)
            timing.setup.append(setup)
            timing.pack.append(pack)
            timing.sums.append(sums)
            timing.layer_wall.append(time.perf_counter() - t_layer)
            timing.sent_cells += int(n_cells.sum())
        P, D, wlo, woff = P2, D2, wlo2, woff2
        layers.update()
    layers.close()
    if abs(float(P.sum()) - 1.0) > 1e-9:
        raise AssertionError(f"forward pass lost probability: {float(P.sum())}")
    dist = np.zeros(cap + 1)
    for i in range(len(P)):
        w = D[woff[i] : woff[i + 1]]
        dist[wlo[i] : wlo[i] + len(w)] += w
    s = np.arange(cap + 1)
    box_pts = np.bincount(oc.o_box, weights=vec * oc.o_pts, minlength=nbx)
    box_pos = np.bincount(oc.o_box, weights=vec * (oc.o_pts > 0), minlength=nbx)
    p_bonus = pbonus + (1.0 if plan.bonus0 > 0 else 0.0)
    return dot(dist, s), dot(dist, s**2), p_bonus, dist, box_pts, box_pos, dot(vec, oc.o_extra), False


__all__ = [
    "BLOCK_ROWS",
    "Block",
    "Partial",
    "Pass",
    "TARGET_ROWS",
    "Timing",
    "cut",
    "make_pass",
    "run_block",
    "target_block_task",
    "target_cap",
    "target_column",
    "worker_pass",
]

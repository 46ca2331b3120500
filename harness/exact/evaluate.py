"""Exact evaluation of solitaire bots: the final-score distribution of a bot's own play, and head-to-heads.

A bot is *solitaire* when its choices depend only on its own sheet and dice (every built-in bot but
``winprob``); it then gives its choice probabilities at every position through
:meth:`harness.game.strategy.Strategy.policy`, which makes its play a Markov chain over the solver's
states. Its score distribution is the solver's forward pass (:func:`harness.exact.forward.forward_pass`)
with the bot's choices in place of the argmax. Target play (``solver:target=T``) also looks at
its own points so far (:meth:`harness.game.strategy.Strategy.target_play`): its chain is over (state,
score), walked by :func:`harness.exact.target_pass.target_column` with one turn per live (state,
points still needed), in blocks that may run on a Dask cluster::

    from harness.exact.evaluate import evaluate, versus, seats
    ev = evaluate(rules, "greedy")            # -> Evaluation (cached per rules, bot and FORMAT)
    ev.mean, ev.std, ev.percentiles, ev.p_bonus, ev.box_mean, ev.box_scored, ev.distribution
    versus(ev_a, ev_b)                        # -> (P(A > B), P(A = B), P(A < B)), exact
    seats([ev_a, ev_b, ev_b])                 # -> per seat (P(sole best), P(shares the top))

Two solitaire bots never interact, so their finals are independent and every head-to-head figure
follows from the two distributions. With ``columns`` > 1 each column is a fresh game: the total is
the sum of independent columns, the ranking score the total or (``add_columns = false``) the best
column. ``saved_rolls`` carry rolls between turns, outside the solver's state: refused.

Cache: one file per (rule-set digest, bot label with its parameters, :data:`FORMAT`) in the solver
cache directory, checked like the value table (:func:`harness.exact.solver.load_table`: header, digest,
shape, crc32); a damaged file is recomputed.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from harness.exact.kernels import policy as EK
from harness.util import render as R
from harness.exact import solver as S
from harness.exact.target_pass import target_cap, target_column
from harness.util import jit
from harness.util.jit import nb
from harness.util import progress as P
from harness.util.errors import UserError
from harness.game.registry import make
from harness.game.rules import RuleSet, load_rules
from harness.game.scoring import context
from harness.stats import PERCENTILES
from harness.game.strategy import Policy, Sheets, Strategy
from harness.util.sums import convolve, dot, vecmat

log = logging.getLogger(__name__)

#: Version of the evaluation's cache files; bump when what they hold or how it is computed changes.
FORMAT = 3
#: With extra bonuses (scores without a fixed top), the largest pair of layers of exact score
#: windows; beyond it the top score cell lumps every score from the cap up (:func:`column_cap`).
MAX_BYTES = 1 << 30
#: Live sheet states of one chunk of the forward pass (outcome rows in memory at once).
ROWS_PER_CHUNK = 4096
#: Sheet states whose policy is asked for at once (a chunk's states are cut into such parts).
PART_STATES = 128
#: Why a rule set with saved rolls is refused.
SAVED_ROLLS = (
    "saved rolls carry between turns, outside the solver's state, so a bot's play there is not "
    "evaluated exactly (sample it with `run`)"
)


@dataclass(frozen=True)
class Evaluation:
    """Exact figures of one solitaire bot's play on one rule set.

    distribution: (cap + 1,) P(final score = s), the total over the columns; ``ranking`` the same
    for the ranking score (the total, or the best column); ``column`` for one column.
    box_mean / box_scored: per box, mean score and P(score > 0) in one column. p_bonus: P(upper
    bonus) in one column. ``lumped``: the last cell of ``column`` holds P(score >= cap) (only when
    the exact score range would not fit :data:`MAX_BYTES`).
    """

    rules: str
    digest: str
    bot: str
    mean: float
    std: float
    p_bonus: float
    percentiles: dict[str, int]
    box_names: tuple[str, ...]
    box_mean: np.ndarray
    box_scored: np.ndarray
    extra_mean: float
    columns: int
    column: np.ndarray = field(repr=False)
    distribution: np.ndarray = field(repr=False)
    ranking: np.ndarray = field(repr=False)
    lumped: bool = False
    seconds: float = 0.0
    cached: bool = False

    # what one row of a run holds (a seat-game, every column summed): the ``bonus`` and box columns
    # are sums over the columns, each column a fresh game

    @property
    def p_bonus_row(self) -> float:
        """P(the upper bonus in at least one column): what a run's ``bonus > 0`` counts."""
        return _any_column(self.p_bonus, self.columns)

    def box_mean_row(self, b: int) -> float:
        """Mean of a run's box column (the box's points summed over the columns)."""
        return self.columns * float(self.box_mean[b])

    def box_scored_row(self, b: int) -> float:
        """P(the box scores in at least one column): a run's ``box > 0``."""
        return _any_column(float(self.box_scored[b]), self.columns)

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "digest": self.digest,
            "bot": self.bot,
            "mean": self.mean,
            "std": self.std,
            "p_bonus": self.p_bonus,
            "percentiles": self.percentiles,
            "columns": self.columns,
            "boxes": {
                n: {"mean": float(m), "p_scored": float(p)}
                for n, m, p in zip(self.box_names, self.box_mean, self.box_scored)
            },
            "extra_mean": self.extra_mean,
            "lumped": self.lumped,
            "seconds": self.seconds,
            "cached": self.cached,
            "distribution": {int(s): float(p) for s, p in enumerate(self.distribution) if p > 0},
        }


def _any_column(p: float, columns: int) -> float:
    """P(at least one of ``columns`` independent columns), each ``p``; ``p`` itself for one column."""
    return p if columns == 1 else 1.0 - (1.0 - p) ** columns


def cache_path(rules: RuleSet, label: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache file of a bot's evaluation on a rule set."""
    d = Path(cache_dir) if cache_dir is not None else S.default_cache_dir()
    tag = hashlib.sha256(label.encode()).hexdigest()[:16]
    return d / f"evaluate-{rules.digest[:40]}-{tag}-v{FORMAT}.bin"


def solitaire_bot(rules: RuleSet, bot: str | Strategy) -> Strategy:
    """The bot (a spec or an instance) ready to be evaluated on ``rules``, or a :class:`UserError`
    saying why its play there cannot be evaluated exactly."""
    if rules.saved_rolls:
        raise UserError(f"rule set {rules.name!r}: {SAVED_ROLLS}")
    strat = make(bot, rules) if isinstance(bot, str) else bot
    refusal = strat.solitaire_refusal()
    if refusal:
        raise UserError(refusal)
    return strat


def refusal(rules: RuleSet, bots: Sequence[str | Strategy]) -> str | None:
    """None when every bot can be evaluated exactly on ``rules``; else the one-line reason of the
    first that cannot (saved rolls, a bot that is not solitaire, an unknown spec)."""
    try:
        for b in bots:
            solitaire_bot(rules, b)
    except UserError as exc:
        return str(exc)
    return None


def plays_for_target(rules: RuleSet, bot: str | Strategy) -> bool:
    """Whether ``bot``'s evaluation walks (state, score so far) (target play): a pass that can be
    split into blocks over a cluster's workers (:mod:`harness.exact.target_pass`)."""
    return bool(getattr(solitaire_bot(rules, bot), "target", None))


def is_cached(rules: RuleSet, bot: str | Strategy, cache_dir: str | os.PathLike | None = None) -> bool:
    """Whether the bot's evaluation on ``rules`` has a cache file (not checked: :func:`evaluate`
    checks it, and recomputes a damaged one)."""
    label = (make(bot, rules) if isinstance(bot, str) else bot).label
    return cache_path(rules, label, cache_dir).exists()


def _rows(row: np.ndarray | None, n_rows: int, b: int, what: str) -> np.ndarray:
    """Each state's row of a policy array with ``n_rows`` rows (see :class:`Policy`)."""
    if row is None:
        if n_rows not in (1, b):
            raise RuntimeError(f"policy {what} have {n_rows} rows for {b} states and no {what[:-1]}_row")
        return np.zeros(b, np.int64) if n_rows == 1 else np.arange(b, dtype=np.int64)
    row = np.asarray(row).reshape(-1)
    if row.shape != (b,) or row.dtype.kind not in "iu" or (b and (row.min() < 0 or row.max() >= n_rows)):
        raise RuntimeError(f"policy {what[:-1]}_row must be {b} row numbers below {n_rows}")
    return row.astype(np.int64)


def _as_policy(
    pol: Policy, b: int, rr: int, n_rolls: int, n_sub: int, n_keeps: int, nbx: int, max_score: int
) -> tuple[Any, ...]:
    """The arguments of :func:`harness.exact.kernels.policy.policy_outcomes` from keep_kind to blunder,
    shapes checked (see :class:`Policy`)."""
    keep, box = np.asarray(pol.keep), np.asarray(pol.box)
    soft = pol.temperature > 0
    if not (math.isfinite(pol.temperature) and pol.temperature >= 0 and 0 <= pol.blunder <= 1):
        raise RuntimeError(f"policy temperature {pol.temperature} / blunder {pol.blunder} out of range")
    kk = EK.DET if keep.dtype.kind in "iu" else EK.VALUES if soft else EK.PROB
    bk = EK.DET if box.dtype.kind in "iu" else EK.VALUES if soft else EK.PROB
    want = {EK.DET: (rr, n_rolls), EK.PROB: (rr, n_sub), EK.VALUES: (rr, n_keeps)}[kk]
    if keep.ndim != 3 or keep.shape[1:] != want:
        raise RuntimeError(f"policy keeps of shape {keep.shape}, expected (rows, {want[0]}, {want[1]})")
    if bk == EK.VALUES:
        if box.ndim != 3 or box.shape[1] != nbx or box.shape[2] <= max_score:
            raise RuntimeError(f"policy box values of shape {box.shape}, expected (rows, {nbx}, > {max_score})")
    elif (
        box.ndim != (3 if bk == EK.DET else 4)
        or box.shape[1] not in (1, 2)
        or box.shape[2:] != ((n_rolls,) if bk == EK.DET else (n_rolls, nbx))
    ):
        raise RuntimeError(
            f"policy boxes of shape {box.shape}, expected (rows, 2 or 1, {n_rolls}{'' if bk == EK.DET else f', {nbx}'})"
        )
    none_i, none_f = np.zeros((1, 1, 1), np.int64), np.zeros((1, 1, 1))
    return (
        kk,
        np.ascontiguousarray(keep, np.int64) if kk == EK.DET else none_i,
        none_f if kk == EK.DET else np.ascontiguousarray(keep, np.float64),
        _rows(pol.keep_row, len(keep), b, "keeps"),
        bk,
        np.ascontiguousarray(box, np.int64) if bk == EK.DET else none_i,
        np.ascontiguousarray(box, np.float64) if bk == EK.PROB else np.zeros((1, 1, 1, 1)),
        np.ascontiguousarray(box, np.float64) if bk == EK.VALUES else none_f,
        _rows(pol.box_row, len(box), b, "boxes"),
        float(pol.temperature) or 1.0,
        float(pol.blunder),
    )  # (a temperature of 0 is never divided by)


def policy_fill(
    rules: RuleSet, strat: Strategy, plan: S.Plan, threads: int
) -> tuple[S.OutcomeFill, np.ndarray, np.ndarray, list[float]]:
    """The :data:`harness.exact.forward.OutcomeFill` of a (prepared) bot's policy, and what it tallies as
    it goes: (fill, box points, box scored, [extra bonus]), each turn's outcomes weighted by the
    probability of its state."""
    lay, dk = plan.layout, plan.dice
    ctx = context(rules)
    oc = S.outcome_codes(rules, lay)
    d = rules.dice
    rr = max(rules.rolls_per_turn - 1, 1)
    nbx = rules.n_boxes
    nflag = lay.n_flags
    st_mask, st_flag, _, st_upper = plan.states()
    st_flag = st_flag.astype(bool)
    first_state = lay.base[plan.item_mask * nflag + plan.item_flag]
    box_pts = np.zeros(nbx)
    box_pos = np.zeros(nbx)
    extra_sum = [0.0]
    pos_pts = (oc.o_pts > 0).astype(np.float64)
    warm: list[bool] = []

    def fill(a: int, b: int, row_of: np.ndarray, live: np.ndarray, outp: np.ndarray, P: np.ndarray, start: int) -> None:
        s0 = int(first_state[a]) - start
        s1 = int(first_state[b]) - start if b < len(first_state) else len(P)
        idx = np.flatnonzero(P[s0:s1] > 0) + s0  # the live slots, in row order
        # parts of at most PART_STATES states (a policy's arrays stay in the processor's cache between
        # the bot and the kernel), as many whatever the threads: the sums below are then the same on
        # any number of threads (a forked worker evaluates on one), to the last bit
        parts = S.split_range(0, len(idx), max(1, -(-len(idx) // PART_STATES)))
        sums = [None] * len(parts)

        def part(k: int, _: int, first: bool = False) -> None:
            lo, hi = parts[k]
            g = idx[lo:hi] + start
            masks, flags, uppers = st_mask[g], st_flag[g], st_upper[g]
            # the states of one sheet are consecutive (slots of one item): one score row each
            new = np.ones(len(g), dtype=bool)
            new[1:] = (masks[1:] != masks[:-1]) | (flags[1:] != flags[:-1])
            heads = np.flatnonzero(new)
            n = len(heads)
            options = np.empty((n, 2, d.n_rolls, nbx), dtype=np.int16)
            allowed = np.empty((n, 2, d.n_rolls), dtype=np.int64)
            extras = np.empty((n, 2, d.n_rolls), dtype=np.int16)
            EK.sheet_scores(ctx, masks[heads], flags[heads], rules.has_servida, options, allowed, extras)
            sheet = np.cumsum(new) - 1
            pol = strat.policy(Sheets(rules, masks, flags, uppers, sheet, options, allowed, extras))
            args = _as_policy(pol, len(g), rr, d.n_rolls, len(d.sub_keep), d.n_keeps, nbx, int(options.max(initial=0)))
            if first:
                jit.await_helper()  # compiling policy_outcomes meanwhile (kernel_helper): load it instead
            EK.policy_outcomes(
                dk,
                oc,
                options,
                allowed,
                extras,
                not rules.has_servida,
                sheet,
                *args,
                np.arange(lo, hi, dtype=np.int64),
                outp,
            )
            sums[k] = vecmat(P[idx[lo:hi]], outp[lo:hi])

        # the bots' kernels release the GIL; each part writes its own rows. The pass's first part
        # runs alone: numba compiles (or loads from its cache) each kernel on one thread
        k0 = 0
        if not warm:
            part(0, 1, first=True)
            warm.append(True)
            k0 = 1
        S.run_blocks(part, [(k, k + 1) for k in range(k0, len(parts))], threads)
        vec = np.sum(sums, axis=0)
        box_pts[:] += np.bincount(oc.o_box, weights=vec * oc.o_pts, minlength=nbx)
        box_pos[:] += np.bincount(oc.o_box, weights=vec * pos_pts, minlength=nbx)
        extra_sum[0] += dot(vec, oc.o_extra)

    return fill, box_pts, box_pos, extra_sum


#: About how long the evaluation's kernel helper compiles on an idle development machine
#: (``policy_outcomes`` and the forward pass's, benchmarks/BENCHMARKS.md "First run"), seconds.
HELPER_SECONDS = 12.0


def kernel_helper() -> None:
    """Where the evaluation's own kernels (the turns' outcomes, the forward pass) are not in
    numba's cache yet: a forked process that compiles them into it, by evaluating the random bot
    on Forced Yatzy (150 states; the kernels' argument types do not depend on the rule set or the
    bot), while this one compiles the bot's policy kernels; :func:`policy_fill` waits for it
    before its first ``policy_outcomes`` (:func:`harness.util.jit.await_helper`). A first exact
    ``calibrate`` waited about twice as long for the two one after the other."""
    if not jit.has_helper() and not jit.in_cache(EK.policy_outcomes):
        jit.fork_helper(_warm_kernels, HELPER_SECONDS, "the evaluation's kernels")


def _warm_kernels() -> None:
    P.enable(False)  # the parent speaks for both
    rules = load_rules("forced")
    plan = S.build_plan(rules)
    # the turns' outcomes first, by their types (_as_policy gives every bot's policy the same
    # dtypes): meanwhile the parent compiles the forward pass's first kernels, loaded here after
    i1, i3, f3 = np.zeros(1, np.int64), np.zeros((1, 1, 1), np.int64), np.zeros((1, 1, 1))
    args = (
        plan.dice,
        S.outcome_codes(rules, plan.layout),
        np.zeros((1, 2, 1, 1), np.int16),
        np.zeros((1, 2, 1), np.int64),
        np.zeros((1, 2, 1), np.int16),
        True,
        i1,
        EK.DET,
        i3,
        f3,
        i1,
        EK.DET,
        i3,
        np.zeros((1, 1, 1, 1)),
        f3,
        i1,
        1.0,
        0.0,
        i1,
        np.zeros((1, 1)),
    )
    EK.policy_outcomes.compile(tuple(nb.typeof(a) for a in args))
    cap, lumped = column_cap(rules)
    _column(rules, make("random", rules), False, cap, lumped)


def column_cap(rules: RuleSet) -> tuple[int, bool]:
    """(cap, lumped): where a bot's score windows stop; lumped when the exact range would not fit
    :data:`MAX_BYTES` (the top cell then holds every score from the cap up)."""
    cap = S.score_cap(rules, max(rules.n_boxes - 1, 0))
    if rules.extra_yatzy_bonus and S.distribution_bytes(rules, cap) > MAX_BYTES:
        return S.score_cap(rules, 2), True
    return cap, False


@dataclass(frozen=True)
class Limits:
    """Where an evaluation's score windows (two layers of every state's running totals) may go: in
    memory up to ``max_bytes``, beyond it in memory-mapped files in ``scratch_dir`` (default: the
    cache directory) up to ``max_disk_bytes`` and the free space (:func:`harness.exact.forward.window_storage`,
    the rule of ``solve``'s exact distribution); beyond both the evaluation is refused with its size.
    Maxi's windows are 32.5 GiB: on disk by default."""

    max_bytes: int = 3 << 30
    max_disk_bytes: int = 64 << 30
    scratch_dir: str | os.PathLike | None = None

    def place(self, rules: RuleSet, label: str, cap: int, cache_dir: str | os.PathLike | None) -> Path | None:
        """The scratch directory of ``label``'s windows (None: in memory), or a UserError saying why
        neither place can hold them."""
        scratch = Path(self.scratch_dir) if self.scratch_dir is not None else cache_path(rules, label, cache_dir).parent
        storage, where = S.window_storage(rules, cap, self.max_bytes, self.max_disk_bytes, scratch)
        if storage.startswith("skipped"):
            raise UserError(
                f"rule set {rules.name!r}: {label}'s exact distribution is not computed: "
                f"{storage[len('skipped: ') :]} (sample it with `run`)"
            )
        if where is not None:
            log.warning(
                "%s: %s's score windows need %.1f GiB, more than --max-memory: they go to "
                'memory-mapped files in %s (benchmarks/BENCHMARKS.md, "Exact evaluation", states '
                "the cost)",
                rules.name,
                label,
                S.distribution_bytes(rules, cap) / 2**30,
                where,
            )
        return where


def _column(
    rules: RuleSet, strat: Strategy, progress: bool, cap: int, lumped: bool, scratch: Path | None = None
) -> tuple[float, float, float, np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """One column's forward pass under the bot: (mean, E[S^2], p_bonus, distribution, box means,
    P(box > 0), mean extra bonus, lumped), the score windows stopping at ``cap`` (:func:`column_cap`)
    and in files in ``scratch`` if given."""
    strat.prepare_policy()
    threads = S.n_threads()
    plan = S.build_plan(rules)
    fill, box_pts, box_pos, extra_sum = policy_fill(rules, strat, plan, threads)
    mean, m2, p_bonus, dist = S.forward_pass(
        rules, plan, fill, cap, True, threads, S.PassSetup(ROWS_PER_CHUNK, scratch, progress)
    )
    assert dist is not None
    return mean, m2, p_bonus, dist, box_pts, box_pos, extra_sum[0], lumped


def _columns(rules: RuleSet, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(total, ranking score) distributions of ``rules.columns`` independent columns."""
    total = col.copy()
    for _ in range(rules.columns - 1):
        total = convolve(total, col)
    if rules.columns == 1 or rules.add_columns:
        return total, total
    cdf = np.cumsum(col) ** rules.columns  # the best of the columns
    return total, np.diff(cdf, prepend=0.0)


def _figures(rules: RuleSet, label: str, parts: tuple[Any, ...], seconds: float, cached: bool) -> Evaluation:
    mean_c, m2_c, p_bonus, col, box_pts, box_pos, extra_mean, lumped = parts
    total, ranking = _columns(rules, col)
    var_c = max(m2_c - mean_c * mean_c, 0.0)
    c = rules.columns
    return Evaluation(
        rules.name,
        rules.digest,
        label,
        c * mean_c,
        math.sqrt(c * var_c),
        p_bonus,
        S.percentiles_of(total),
        tuple(rules.box_names),
        box_pts,
        box_pos,
        extra_mean,
        c,
        col,
        total,
        ranking,
        lumped,
        seconds,
        cached,
    )


def evaluate(
    rules: RuleSet,
    bot: str | Strategy,
    cache_dir: str | os.PathLike | None = None,
    *,
    use_cache: bool = True,
    progress: bool = False,
    limits: Limits = Limits(),
    tasks: Any = None,
    timing: Any = None,
) -> Evaluation:
    """Exact figures of a solitaire bot (a spec ``name:key=value`` or an instance) on ``rules``:
    from the cache, or by a forward pass of its policy (then cached), its score windows where
    ``limits`` allow (a UserError with their size where they allow neither memory nor disk).
    Target play's pass runs its blocks on ``tasks`` if given (:func:`harness.exact.target_pass.target_column`,
    the same bits; ``timing`` a :class:`harness.exact.target_pass.Timing` to fill)."""
    t0 = time.perf_counter()
    strat = solitaire_bot(rules, bot)
    label = strat.label
    path = cache_path(rules, label, cache_dir)
    nbx = rules.n_boxes
    if use_cache and path.exists():
        try:
            n_cells = int(S.load_table_header(path).get("cells", -1))
        except (OSError, ValueError):
            n_cells = -1
        loaded = S.load_table(path, rules, n_cells + 2 * nbx) if n_cells > 0 else None
        if loaded is not None:
            arr, head = loaded
            if head.get("evaluate_format") == FORMAT and head.get("bot") == label:
                parts = (
                    head["mean"],
                    head["m2"],
                    head["p_bonus"],
                    arr[:n_cells].copy(),
                    arr[n_cells : n_cells + nbx].copy(),
                    arr[n_cells + nbx :].copy(),
                    head["extra_mean"],
                    bool(head["lumped"]),
                )
                return _figures(rules, label, parts, time.perf_counter() - t0, True)
    tp = strat.target_play()
    if tp is not None:
        parts = target_column(
            rules,
            tp,
            progress,
            limits.place(rules, label, target_cap(rules), cache_dir),
            spec=label,
            tasks=tasks,
            timing=timing,
        )
    else:
        cap, lumped = column_cap(rules)
        kernel_helper()
        parts = _column(rules, strat, progress, cap, lumped, limits.place(rules, label, cap, cache_dir))
    mean, m2, p_bonus, col, box_pts, box_pos, extra_mean, lumped = parts
    if abs(float(col @ np.arange(len(col))) - mean) > 1e-6 and not lumped:
        raise AssertionError(f"evaluation of {label}: distribution mean {col @ np.arange(len(col))} != {mean}")
    seconds = time.perf_counter() - t0
    if use_cache:
        try:
            S.save_table(
                path,
                rules,
                np.concatenate([col, box_pts, box_pos]),
                {
                    "evaluate_format": FORMAT,
                    "bot": label,
                    "rules": rules.name,
                    "cells": len(col),
                    "mean": mean,
                    "m2": m2,
                    "p_bonus": p_bonus,
                    "extra_mean": extra_mean,
                    "lumped": lumped,
                    "seconds": round(seconds, 3),
                },
            )
        except OSError as exc:
            log.warning("cannot write evaluation cache %s: %s", path, exc)
    return _figures(rules, label, parts, seconds, False)


# ---------------------------------------------------------------------------------------------
# head-to-heads of independent finals


def _pad(*dists: np.ndarray) -> list[np.ndarray]:
    n = max(len(x) for x in dists)
    return [np.pad(np.asarray(x, dtype=np.float64), (0, n - len(x))) for x in dists]


def versus(a: Evaluation | np.ndarray, b: Evaluation | np.ndarray) -> tuple[float, float, float]:
    """(P(A > B), P(A = B), P(A < B)) of independent ranking scores (Evaluations or distributions)."""
    pa, pb = _pad(*(x.ranking if isinstance(x, Evaluation) else x for x in (a, b)))
    cb = np.cumsum(pb)
    below = np.concatenate([[0.0], cb[:-1]])  # P(B < s)
    win = dot(pa, below)
    draw = dot(pa, pb)
    return win, draw, max(0.0, 1.0 - win - draw)


def seats(entrants: list[Evaluation | np.ndarray]) -> list[tuple[float, float]]:
    """Per seat of a table of independent players: (P(sole best), P(shares the top with another))."""
    ps = _pad(*(x.ranking if isinstance(x, Evaluation) else x for x in entrants))
    cdf = [np.cumsum(p) for p in ps]
    below = [np.concatenate([[0.0], c[:-1]]) for c in cdf]
    out = []
    for i, p in enumerate(ps):
        le = np.ones(len(p))
        lt = np.ones(len(p))
        for j in range(len(ps)):
            if j != i:
                le *= cdf[j]
                lt *= below[j]
        sole = dot(p, lt)
        out.append((sole, dot(p, le - lt)))
    return out


def score_rate(sole: float, shared: float) -> float:
    """P(win) + 1/2 P(draw)."""
    return sole + 0.5 * shared


# ---------------------------------------------------------------------------------------------
# a head-to-head of several bots: JSON and tables


@dataclass(frozen=True)
class HeadToHead:
    """Exact figures of several solitaire bots on one rule set, every pair at two seats and, with
    ``k`` seats, each bot against k - 1 copies of each other bot."""

    rules: str
    evaluations: tuple[Evaluation, ...]
    k: int = 2

    def pairs(self) -> list[tuple[str, str, float, float, float]]:
        ev = self.evaluations
        return [(a.bot, b.bot, *versus(a, b)) for i, a in enumerate(ev) for b in ev[i + 1 :]]

    def tables_k(self) -> list[tuple[str, str, float, float]]:
        """(bot, other, P(sole best), P(shares the top)) against k - 1 copies of the other."""
        ev = self.evaluations
        return [(a.bot, b.bot, *seats([a] + [b] * (self.k - 1))[0]) for a in ev for b in ev if b is not a]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rules": self.rules,
            "bots": [e.to_json() for e in self.evaluations],
            "pairs": [
                {"a": a, "b": b, "p_a_wins": w, "p_draw": d, "p_b_wins": lo, "a_score_rate": w + 0.5 * d}
                for a, b, w, d, lo in self.pairs()
            ],
        }
        if self.k > 2:
            out["seats"] = self.k
            out["against_copies"] = [
                {
                    "bot": a,
                    "others": f"{self.k - 1} x {b}",
                    "p_sole_best": s,
                    "p_shares_top": t,
                    "score_rate": score_rate(s, t),
                }
                for a, b, s, t in self.tables_k()
            ]
        return out

    def tables(self) -> list[Any]:

        ev = self.evaluations
        qs = [str(q) for q in PERCENTILES]
        figs = R.Table(
            "Exact figures (one seat, solitaire play)",
            ["bot", "mean", "std", *[f"p{q}" for q in qs], "P(bonus)", "P(yatzy)", "time"],
            [
                [
                    e.bot,
                    f"{e.mean:.6f}",
                    R.num(e.std),
                    *[str(e.percentiles[q]) for q in qs],
                    R.pct(e.p_bonus, 2),
                    R.pct(_p_key(e), 2),
                    "cached" if e.cached else f"{e.seconds:.1f} s",
                ]
                for e in ev
            ],
            ["exact forward pass of each bot's own choice probabilities; percentiles inverted-CDF"],
        )
        boxes = R.Table(
            "Box means (one column; P(score > 0) in brackets)",
            ["box", *[e.bot for e in ev]],
            [
                [n, *[f"{e.box_mean[b]:.3f} ({R.pct(e.box_scored[b], 1)})" for e in ev]]
                for b, n in enumerate(ev[0].box_names)
            ],
        )
        pairs = R.Table(
            "Head-to-head at two seats (exact, independent finals)",
            ["A", "B", "P(A wins)", "P(draw)", "P(B wins)", "A's score rate"],
            [[a, b, R.pct(w, 3), R.pct(d, 3), R.pct(lo, 3), R.pct(w + 0.5 * d, 3)] for a, b, w, d, lo in self.pairs()],
        )
        out = [figs, boxes] + ([pairs] if len(ev) > 1 else [])  # one bot: no pair
        if self.k > 2:
            out.append(
                R.Table(
                    f"{self.k} seats: each bot against {self.k - 1} copies of another",
                    ["bot", "others", "P(sole best)", "P(shares top)", "score rate"],
                    [
                        [a, f"{self.k - 1} x {b}", R.pct(s, 3), R.pct(t, 3), R.pct(score_rate(s, t), 3)]
                        for a, b, s, t in self.tables_k()
                    ],
                )
            )
        return out


def _p_key(e: Evaluation) -> float:
    """P(the yatzy / generala box scores), or NaN without one."""
    for b, n in enumerate(e.box_names):
        if n in ("yatzy", "yahtzee", "generala", "maxi_yatzy"):
            return float(e.box_scored[b])
    return float("nan")


def check_seats(k: int) -> None:
    """A table of ``k`` seats has at least two."""
    if k < 2:
        raise UserError(f"--seats must be at least 2, got {k}")


def head_to_head(
    rules: RuleSet,
    bots: list[str],
    k: int = 2,
    cache_dir: str | os.PathLike | None = None,
    *,
    progress: bool = False,
    limits: Limits = Limits(),
) -> HeadToHead:
    """Evaluate every bot (cached) and pit them against each other exactly."""
    check_seats(k)
    return HeadToHead(
        rules.name, tuple(evaluate(rules, b, cache_dir, progress=progress, limits=limits) for b in bots), k
    )

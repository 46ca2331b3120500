"""Playing to win: exact target tables (the best chance of scoring at least t more from every state).

Public API::

    from harness.exact.target import target_table, target_report, Player
    tab = target_table(rules)                 # -> TargetTable, kind "target": max P(points >= t)
    tab.prob(filled, upper, flag, t)          # from the start of a turn in a solver state
    tab.vector(filled, upper, flag)           # (len,) float32, targets 0..len-1 (1 below, 0 beyond)
    tie = target_table(rules, kind="tie")     # max P(points > t) + 1/2 P(points = t): a last mover's
                                              # exact win-or-share-a-tie chance, t = the deficit
    ev = target_table(rules, kind="ev")       # P(points >= t) under the solver's EV-optimal policy
    target_report(rules, T)                   # what ``solve RULES --target T`` prints
    Player(tab, T).keeps(..., Aims(...))      # the bots' decisions for a batch (a target, or a
                                              # distribution of scores to beat), at temperature T

A table holds, for every state of the solver's layout (filled boxes, upper subtotal capped at the
threshold, key-box flag; :mod:`harness.exact.solver`) and every target t = 0..len(state)-1, the value of
the rest of the game with t points still needed: "points" are everything the column still adds
(boxes, the bonus when crossed, extra bonuses), as the solver's values. A state's vector stops at
min(the most it can still score, ``tmax``) + 1: past the most it can score the value is 0, and
since a turn only ever lowers the target, cutting every vector at tmax leaves the table exact for
every target up to tmax (default: the perfect sheet plus two extra bonuses, the solver's own cap).

Policy: backward induction as the solver's, target by target. Within a turn each keep's value is
the average over the reroll and the best sub-keep is taken for each target separately, so the
policy attaining the table is: with t points needed, take the keep (or the box) maximising the
entry for t, a box that adds x points (score + bonus crossed + the roll's extra bonus) moving the
game to the next state at target t - x. The bots (:class:`Player`) break ties of probability (a
target secured or out of reach) by the expected score, then by the solver's rule (stopping first,
the first box in sheet order). :mod:`harness.exact.kernels.target` runs the solver's own turn kernel on
(keeps, targets) arrays, so the two policies share every line of the turn arithmetic.

"tie" is the same recursion with a full sheet worth 1/2 at target 0 instead of 1: its value at t
is max over policies of P(X > t) + 1/2 P(X = t), which no pair of ordinary target maxima gives (the
two maxima may need different policies). "ev" evaluates the solver's fixed EV-optimal policy
instead of maximising: its value at t is exactly the tail P(X >= t) of the exact score
distribution of :func:`harness.exact.solver.exact_distribution` from that state.

Storage: float32 (half of float64; DESIGN.md). The solve keeps two adjacent layers in float64 and
rounds each stored entry once (relative error <= 2**-24 = 6e-8, no accumulation across layers).
A bot deciding on float32 entries may pick an option whose true value is below the best by at
most the two entries' rounding, about 1.2e-7 per decision (a bound, not a measurement: under
1e-5 over a 75-decision game); on the tiny rule sets of ``tests/test_target.py`` the stored
table is exactly the float64 solve rounded once (at most 6e-8 apart). Cached beside the value
table (``.target1-KIND-TMAX.bin``, the solver's header and crc32 checks, rebuilt when damaged)
and memory-mapped when loaded, so forked workers share its pages. Built in memory up to
``max_bytes``, else in a memory-mapped scratch file.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.util import progress as P
from harness.exact import solver as S
from harness.exact.kernels import solver as K
from harness.exact.kernels import target as TK
from harness.util.errors import UserError
from harness.util.progress import bar
from harness.game.rules import RuleSet
from harness.game.scoring import context

log = logging.getLogger(__name__)

#: Version of the target tables' file layout; bump when it changes.
TFORMAT = 1
#: The kinds of target table, each with a full sheet's value at target 0 (1: P(points >= t); the
#: tie-aware table's 1/2: P(points > t) + 1/2 P(points = t)).
TABLE_KINDS = {"target": 1.0, "tie": 0.5, "ev": 1.0}


@dataclass(frozen=True, eq=False)
class TargetTable:
    """A solved target table (see the module docstring).

    off: (states + 1,) int64 where each state's vector starts in ``values``; values: (off[-1],)
    float32, memory-mapped when loaded from the cache.
    """

    rules: RuleSet
    plan: S.Plan
    kind: str
    tmax: int
    off: np.ndarray
    values: np.ndarray
    seconds: float
    cached: bool
    path: Path | None = field(default=None)

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes)

    def index(self, filled: int, upper: int, flag: bool = False) -> int:
        lay = self.plan.layout
        g = int(lay.base[filled * lay.n_flags + int(bool(flag))])
        s = int(lay.slot[lay.umask_of[filled], min(int(upper), lay.threshold)])
        if g < 0 or s < 0:
            raise ValueError(f"no state filled={filled:#x} upper={upper} flag={flag} in {self.rules.name}")
        return g + s

    def vector(self, filled: int, upper: int = 0, flag: bool = False) -> np.ndarray:
        """(len,) float32 values at targets 0..len-1 of a state (1 below 0, 0 from len on)."""
        g = self.index(filled, upper, flag)
        return self.values[self.off[g] : self.off[g + 1]]

    def prob(self, filled: int, upper: int, flag: bool, t: int) -> float:
        """The table's value at target t from the start of a turn in state (filled, upper, flag)."""
        if t > self.tmax:
            raise ValueError(f"target {t} is above the table's tmax {self.tmax}")
        if t < 0:
            return 1.0
        v = self.vector(filled, upper, flag)
        return float(v[t]) if t < len(v) else 0.0


def default_tmax(rules: RuleSet) -> int:
    """The perfect sheet plus two extra bonuses (the solver's distribution cap)."""
    return int(rules.perfect_score()) + 2 * int(rules.extra_yatzy_bonus)


def offsets(rules: RuleSet, plan: S.Plan, tmax: int) -> np.ndarray:
    """(states + 1,) int64 start of each state's vector."""
    lens = np.zeros(plan.n_states, dtype=np.int64)
    TK.state_lengths(plan.layout, plan.item_mask, plan.item_flag, int(rules.extra_yatzy_bonus), int(tmax), lens)
    off = np.zeros(plan.n_states + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    return off


def table_path(rules: RuleSet, kind: str, tmax: int, cache_dir: str | os.PathLike | None = None) -> Path:
    return S.cache_path(rules, cache_dir).with_suffix(f".target{TFORMAT}-{kind}-{tmax}.bin")


def table_bytes(rules: RuleSet, tmax: int | None = None) -> int:
    """Bytes of one table (float32) without solving it."""
    plan = S.build_plan(rules)
    return 4 * int(offsets(rules, plan, default_tmax(rules) if tmax is None else tmax)[-1])


_MEMO: dict[tuple[str, str, int, str], TargetTable] = {}


def clear_memo() -> None:
    _MEMO.clear()


def target_table(
    rules: RuleSet,
    kind: str = "target",
    tmax: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    *,
    use_cache: bool = True,
    max_bytes: int = 3 << 30,
    scratch_dir: str | os.PathLike | None = None,
    progress: bool = False,
) -> TargetTable:
    """The ``kind`` table of ``rules`` ("target", "tie" or "ev"): from memory, the disk cache or a
    fresh solve (written to the cache; an unwritable cache only logs a warning)."""
    if kind not in TABLE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(TABLE_KINDS)}, got {kind!r}")
    if rules.saved_rolls:
        raise UserError(
            f"rule set {rules.name}: saved_rolls is on, and the solver's states do not model "
            "rolls carried over, so there is no exact target table"
        )
    tmax = default_tmax(rules) if tmax is None else int(tmax)
    if tmax < 0:
        raise UserError(f"tmax must be >= 0, got {tmax}")
    path = table_path(rules, kind, tmax, cache_dir)
    key = (rules.digest, kind, tmax, str(path) if use_cache else "")
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    t0 = time.perf_counter()
    plan = S.build_plan(rules)
    off = offsets(rules, plan, tmax)
    loaded = S.load_table(path, rules, int(off[-1]), np.float32, mmap=True) if use_cache else None
    if loaded is not None and (loaded[1].get("kind") != kind or loaded[1].get("tmax") != tmax):
        log.warning("target table %s is for %s/%s: rebuilding it", path, loaded[1].get("kind"), loaded[1].get("tmax"))
        loaded = None
    if loaded is not None:
        values, header = loaded
        tab = TargetTable(rules, plan, kind, tmax, off, values, float(header.get("seconds", 0.0)), True, path)
    else:
        size = 4 * int(off[-1])
        progress = progress or P.enabled()
        if P.enabled():  # a first solve takes seconds to minutes and memory: say so before it starts
            where = "on disk, a layer at a time in memory" if size > max_bytes else "in memory"
            P.say(
                f"solving {rules.name}'s {kind} table, once ({int(off[-1]):,} entries, {size / 2**20:,.0f} MiB "
                f"{where}; later runs load it from the cache)"
            )
        scratch = None
        if size > max_bytes:
            scratch = Path(scratch_dir) if scratch_dir is not None else path.parent
            scratch.mkdir(parents=True, exist_ok=True)
        values = S.scratch_zeros(int(off[-1]), scratch, np.float32)
        _solve_into(rules, plan, kind, off, values, progress)
        seconds = time.perf_counter() - t0
        tab = TargetTable(rules, plan, kind, tmax, off, values, seconds, False, path if use_cache else None)
        if use_cache:
            try:
                S.save_table(
                    path,
                    rules,
                    values,
                    {
                        "rules": rules.name,
                        "kind": kind,
                        "tmax": tmax,
                        "seconds": round(seconds, 3),
                        "what": "target table",
                    },
                )
                again = S.load_table(path, rules, int(off[-1]), np.float32, mmap=True)
                if again is not None:  # the mapped file from now on: its pages are shared
                    tab = TargetTable(rules, plan, kind, tmax, off, again[0], seconds, False, path)
            except OSError as exc:
                log.warning("cannot write target table %s: %s", path, exc)
    tab.values.setflags(write=False)
    _MEMO[key] = tab
    return tab


def _solve_into(rules: RuleSet, plan: S.Plan, kind: str, off: np.ndarray, out: np.ndarray, progress: bool) -> None:
    """Backward induction layer by layer; the layer being solved and the one it reads in float64."""
    ctx = context(rules)
    lay, dk = plan.layout, plan.dice
    threads = S.n_threads()
    terminal = TABLE_KINDS[kind]
    if kind == "ev":
        sol = S.solve(rules)
        ev = _EvPolicy(ctx, S.outcome_codes(rules, lay), sol.values, plan, off, threads)
    nxt = np.zeros(1)
    nshift = 0
    shown = bar(rules.n_boxes + 1, f"{kind} table {rules.name}", "layer", quiet=not progress)
    for k in range(rules.n_boxes, -1, -1):
        lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
        s0, s1 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        oshift = int(off[s0])
        cur = np.zeros(int(off[s1]) - oshift)
        if kind != "ev" or k == rules.n_boxes:

            def run(a: int, b: int, nxt=nxt, nshift=nshift, cur=cur, oshift=oshift) -> None:
                TK.target_items(
                    ctx, lay, dk, nxt, off, nshift, cur, oshift, plan.item_mask, plan.item_flag, a, b, terminal
                )

            S.run_blocks(run, S.split_range(lo, hi, 8 * threads if hi - lo > 64 else 1), threads)
        else:
            _policy_layer(ev, k, nxt, nshift, cur)
        out[oshift : int(off[s1])] = cur
        nxt, nshift = cur, oshift
        shown.update()
    shown.close()


@dataclass(frozen=True, eq=False)
class _EvPolicy:
    """What every layer of the "ev" table reads: the scoring context, the outcome codes and values
    of the solver's policy, the plan, the table's offsets and the threads to run on."""

    ctx: Any
    oc: Any
    V: np.ndarray
    plan: S.Plan
    off: np.ndarray
    threads: int


def _policy_layer(
    ev: _EvPolicy, k: int, nxt: np.ndarray, nshift: int, cur: np.ndarray, rows_per_chunk: int = 4096
) -> None:
    """Layer ``k`` of the "ev" table into ``cur`` (the next layer's ``nxt`` starts at entry
    ``nshift``): each state's turn-outcome distribution under the solver's policy (the forward
    pass's own kernel, every state live), then the shifted mixture."""
    ctx, oc, V, plan, off, threads = ev.ctx, ev.oc, ev.V, ev.plan, ev.off, ev.threads
    lay, dk = plan.layout, plan.dice
    lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
    s0, s1 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
    oshift = int(off[s0])
    live_p = np.ones(s1 - s0)
    nslot = lay.nslot[lay.umask_of[plan.item_mask[lo:hi]]].astype(np.int64)
    a = lo
    while a < hi:
        cum = np.cumsum(nslot[a - lo :])
        b = a + max(1, int(np.searchsorted(cum, rows_per_chunk, side="right")))
        b = min(b, hi)
        rows = nslot[a - lo : b - lo]
        row_of = np.cumsum(rows) - rows
        outp = np.zeros((int(rows.sum()), len(oc.o_box)))
        live = np.ones(b - a, dtype=np.bool_)

        def fwd(c: int, d: int, a=a, row_of=row_of, live=live, outp=outp) -> None:
            K.forward_items(
                ctx,
                lay,
                dk,
                oc,
                V,
                plan.item_mask,
                plan.item_flag,
                c,
                d,
                row_of[c - a :],
                live[c - a :],
                outp,
                live_p,
                s0,
            )
            TK.policy_tail_items(
                lay, oc, outp, row_of[c - a :], plan.item_mask, plan.item_flag, c, d, nxt, off, nshift, cur, oshift
            )

        S.run_blocks(fwd, S.split_range(a, b, 4 * threads if b - a > 16 else 1), threads)
        a = b


# ---------------------------------------------------------------------------------------------
# solve --target


def target_report(
    rules: RuleSet,
    target: int,
    cache_dir: str | os.PathLike | None = None,
    *,
    max_bytes: int = 3 << 30,
    max_disk_bytes: int = 64 << 30,
    scratch_dir: str | os.PathLike | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """P(final score >= target) of one column under target play (the table) and under EV-optimal
    play (the tail of the exact distribution), with what the table cost."""
    fig = S.exact_distribution(
        rules, cache_dir, max_bytes=max_bytes, max_disk_bytes=max_disk_bytes, scratch_dir=scratch_dir, progress=progress
    )
    t0 = time.perf_counter()
    need = int(target) - (int(rules.bonus_value) if rules.threshold == 0 else 0)  # a bonus earned before play
    plan = S.build_plan(rules)
    most = int(offsets(rules, plan, 1 << 40)[1]) - 1  # the most a column can score (state 0: empty)
    # a table up to the default tmax answers every target it can: above the most a column can
    # score the chance is 0, so only extra bonuses can make a larger table worth its solve
    tmax = max(default_tmax(rules), min(need, most))
    tab = target_table(
        rules, "target", tmax, cache_dir, max_bytes=max_bytes, scratch_dir=scratch_dir, progress=progress
    )
    p_target = 1.0 if need < 0 else (0.0 if need > most else tab.prob(0, 0, False, need))
    p_ev = None
    if fig.distribution is not None:
        dist = fig.distribution
        # the last cell lumps the scores at or above the cap: exact below it
        p_ev = float(dist[max(int(target), 0) :].sum()) if int(target) < len(dist) else 0.0
        p_ev = min(p_ev, 1.0)
    return {
        "rules": rules.name,
        "digest": rules.digest,
        "target": int(target),
        "p_target_play": p_target,
        "p_ev_play": p_ev,
        "expected_score": fig.expected_score,
        "tmax": tab.tmax,
        "states": tab.plan.n_states,
        "entries": int(tab.off[-1]),
        "table_bytes": tab.nbytes,
        "table_seconds": tab.seconds,
        "cached": tab.cached,
        "seconds": time.perf_counter() - t0,
    }


# ---------------------------------------------------------------------------------------------
# playing from a table (the bots)


@dataclass(frozen=True, eq=False)
class Aims:
    """What each game g of a batch plays for: sum_k W[g, k] x (table value at target leads[g] + k),
    k < nws[g]. leads (B,) int64, W (B, K) float64, nws (B,) int64; one target t is lead t with
    weights [1] (:meth:`target`); a distribution of scores to beat is its deficits with their
    probabilities (:func:`harness.exact.kernels.target.best_final_weights`)."""

    leads: np.ndarray
    W: np.ndarray
    nws: np.ndarray

    @classmethod
    def target(cls, leads: np.ndarray) -> Aims:
        """Each game g plays for the one target ``leads[g]``."""
        b = len(leads)
        return cls(leads, np.ones((b, 1)), np.ones(b, dtype=np.int64))


class Player:
    """Decisions for a batch of games from a table, each game playing for its :class:`Aims`
    (:func:`harness.exact.kernels.target.mixed_plan`); with a ``temperature`` (percentage points of
    probability) each decision is drawn by softmax."""

    #: weight of the expected score (the solver's values) in every option: it only decides
    #: between options of equal probability (see :func:`harness.exact.kernels.target.mixed_plan`)
    LAM = 1e-12

    def __init__(self, tab: TargetTable, temperature: float = 0.0) -> None:
        self.tab = tab
        self.temperature = float(temperature)
        self.V = S.solve(tab.rules).values
        self.ctx = context(tab.rules)
        self.lay, self.dk = tab.plan.layout, tab.plan.dice

    def keeps(
        self,
        filled: np.ndarray,
        flag: np.ndarray,
        upper: np.ndarray,
        roll: np.ndarray,
        left: np.ndarray,
        aims: Aims,
        unif: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B,) int32 keeps; ``left`` the rerolls left (every one on the first roll); with a
        temperature drawn by softmax with ``unif[:, 1]``."""
        unif = np.zeros((len(filled), 2)) if unif is None else unif
        out = np.empty(len(filled), dtype=np.int32)
        TK.mixed_keeps(
            self.ctx,
            self.lay,
            self.dk,
            self.tab.values,
            self.tab.off,
            self.V,
            self.LAM,
            filled.astype(np.int64),
            flag.astype(np.int64),
            upper.astype(np.int64),
            roll.astype(np.int64),
            left.astype(np.int64),
            aims.leads.astype(np.int64),
            aims.W,
            aims.nws.astype(np.int64),
            self.temperature,
            unif,
            out,
        )
        return out

    def boxes(
        self,
        filled: np.ndarray,
        flag: np.ndarray,
        upper: np.ndarray,
        options: np.ndarray,
        allowed: np.ndarray,
        extra: np.ndarray,
        aims: Aims,
        unif: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B,) int64 boxes of the choices ``options`` (B, NB) with ``allowed`` and ``extra`` (B,)
        (:class:`harness.game.strategy.TurnView`'s); with a temperature drawn by softmax with ``unif[:, 1]``."""
        unif = np.zeros((len(filled), 2)) if unif is None else unif
        out = np.empty(len(filled), dtype=np.int64)
        TK.mixed_boxes(
            self.lay,
            self.tab.values,
            self.tab.off,
            self.V,
            self.LAM,
            filled.astype(np.int64),
            flag.astype(np.int64),
            upper.astype(np.int64),
            np.ascontiguousarray(options, dtype=np.int16),
            allowed.astype(np.int64),
            extra.astype(np.int64),
            aims.leads.astype(np.int64),
            aims.W,
            aims.nws.astype(np.int64),
            self.temperature,
            unif,
            out,
        )
        return out


def cached_tmax(rules: RuleSet, kind: str, need: int, cache_dir: str | os.PathLike | None = None) -> int:
    """The tmax a bot needing targets up to ``need`` should use: the default table's if it covers
    ``need`` and is on disk already, else ``need`` itself (the smallest exact table: a table's
    entries up to t do not depend on its tmax, so the decisions are the same either way)."""
    full = default_tmax(rules)
    if need <= full and table_path(rules, kind, full, cache_dir).exists():
        return full
    return need

"""Player models fitted to recorded games by maximum likelihood: the solver bot's dial, an extended family (``fit``).

The ``solver`` bot's dial defines its choice probabilities exactly (:mod:`strategies.solver`,
:func:`harness.exact.kernels.solver.soft_keeps` and ``choose_boxes``): at every decision (each keep,
``stop`` included, and each box) with n legal options of exact values v_a,

    P(a) = blunder / n + (1 - blunder) x exp(v_a / T) / sum_b exp(v_b / T)

the same rule, with the same temperature T (points), for keep and box decisions; a blunder is a
uniformly random legal option (sub-keeps of the roll, stop included; allowed boxes). T = 0 is
the argmax. The values are those of :func:`harness.decisions.analysis.decision_table`, the very numbers the
bot's softmax sees, so a record's likelihood under (T, blunder) is exact and the fitted spec
plays like the fit says. Decisions with one legal option carry no information and are left out.

Ties. The T = 0 bot breaks exact ties by a fixed rule (stop first, larger keeps first; the first
box in sheet order); the model uses the limit of the softmax instead, an equal share among the
options tied for best (regret <= :data:`harness.decisions.positions.TIE`), so that the likelihood is
continuous in T down to 0 and the three models are nested. About 1 % of decisions have a tie;
the recovery tests show no measurable bias from it.

Models (``--model``): ``solver:temperature`` (blunder 0), ``solver:blunder`` (T = 0) and
``solver:temperature,blunder``. Fit: T on [0, :data:`T_MAX`] searched in log T (a grid, then
Brent's method, then the T = 0 limit), blunder on [0, 1] (for a fixed T the log-likelihood is
concave in it: the root of its derivative). Intervals: profile likelihood, {theta: 2 (l_max -
l_profile(theta)) <= chi2_1 quantile}; an end at the parameter's bound (T = 0, blunder 0 or 1,
T >= T_MAX) is reported as that bound.

Goodness of fit, both at the fitted parameters (a player is flagged ``poor`` when either p-value is
below :data:`POOR_P`; a bot of the family is flagged about 0.2 % of the time):

* a likelihood-ratio test against the richer model "(T, blunder) fitted separately to keep and to
  box decisions" (df = 4 - parameters of the model, or 2 - parameters with one decision kind).
  A player whose keeps and boxes are not equally good (a greedy bot: fair keeps, poor boxes) fails it.
* the regret distribution: per decision kind, the number of decisions whose regret falls in each
  bin of :data:`REGRET_BINS`, against the number the model predicts (each decision's model
  probabilities summed); X^2 = d' S^+ d with S the exact covariance of the predicted counts (a sum of
  multinomials), df = rank of S (the parameters' estimation is not subtracted: conservative);
  adjacent bins are merged until each expects :data:`MIN_EXPECTED` decisions.

Also per player: decisions used, log-likelihood per decision, top-choice agreement (share of
decisions with regret 0) observed and predicted, top-1 agreement (the share of decisions whose
option played is the model's most likely; ties shared: 1/k for one of k), mean regret per decision
by kind observed and predicted, and the fitted spec (``solver:temperature=1.02``) ready for
``--seats``. The pooled fit treats every selected player's decisions as one player. The *median
player* is the player with the median regret per seat-game (model-free; the lower median for an
even count): ``calibrate --levels --against FIT.json`` tunes against that player's fitted spec.

The extended family (models ``kinds``, ``mixed`` and ``paced``; no bot plays them, so they have no spec)
contains players the dial cannot explain. Each option has its exact value v_a and its *myopic
value* m_a, the best box score reachable this turn from the option, what ``greedy`` maximises
(:attr:`harness.decisions.analysis.DecisionTable.myopic`, computed by the analysis kernel next to the exact
values): a box, its score plus the upper bonus if it completes it (less 0.01 point per place in
the boxes sorted by their highest score: greedy's tie rule, the cheapest box to give up first,
:attr:`harness.decisions.analysis.Analyser.MYOPIC_TIE`); stop, the best allowed box's score plus the roll's
extra bonus; a keep, the expectation over the reroll of that stop value at
the end of the turn, the keeps that follow chosen to maximise it. With regrets r_a = max v - v_a
and g_a = max m - m_a (each exactly 0 within :data:`TIE`)::

    x_a = (1 - weight) r_a + weight g_a
    P(a) = blunder / n + (1 - blunder) x exp(-x_a / T_kind) / sum_b exp(-x_b / T_kind)

with T_kind the keep temperature for keep decisions and the box temperature for box decisions.
``kinds`` fits (keep_temperature, box_temperature, blunder) at weight 0, ``mixed`` all four.
``paced`` is ``mixed`` with each option's *paced value* in place of its myopic value: its value
to a player who plays for the upper bonus as the ``bonus`` bot does
(:attr:`harness.decisions.analysis.DecisionTable.paced`, :mod:`harness.game.pace`: a box, its score plus the
roll's extra bonus, less its opportunity cost, plus the upper bonus times the change in the chance
of making it; ties with the bot's box broken by its rule, :attr:`harness.decisions.analysis.Analyser.PACED_TIE`;
stop, the best box's value; a keep, the expectation over the reroll of that stop value at the end
of the turn under the bot's own turn plan), so that ``bonus`` is ``paced`` at weight 1,
temperatures 0, as ``greedy`` is ``mixed`` there. Fit:
SLSQP with the kernel's exact gradient, the temperatures in log T on [T_MIN, T_MAX], weight and
blunder on [0, 1], from several starts in the weight (:func:`family_mle`); intervals by profile
likelihood, the other parameters maximised again at each point (:func:`family_intervals`); a
temperature at the T_MIN floor is reported as 0. The likelihood-ratio test's richer model is the
same model fitted separately to keeps and boxes (weight and blunder per kind too: df 2 for
``mixed``, 1 for ``kinds``); the regret test is the same, on the exact regrets.

Several models (``fit_records(..., "all")`` or ``"dial+mixed"``) are also compared player by
player on held-out games: each player's seat-games are split in halves by a seeded hash
(:func:`fold`), every model is fitted to one half and judged on the other by its log-likelihood per
decision and its top-1 agreement (:class:`ModelChoice`; the chosen model has the best
log-likelihood). The population picture (:meth:`FitReport.population`) groups players in the skill
bands of :data:`harness.decisions.analysis.SCALE` (the rating ``analyse`` gives, the bands a levels file's
``band = "NAME"`` targets: :mod:`harness.players.opponents`) of their regret per decision exactly as
``analyse`` computes it (regret summed over every decision / every decision, one legal option
included; model-free), with their fitted parameters.

Public API::

    from harness.players.fit import fit_table, fit_records, Choices, fit_choices
    rep = fit_records(read_records("games.jsonl"), "solver:temperature")   # -> FitReport
    rep = fit_records(RecordStream("big.jsonl"), "solver:temperature")    # a log of any size, a batch at a time
    for p in rep.players: p.player, p.params["temperature"].value, p.params["temperature"].ci, p.poor, p.spec
    rep.to_dict()                                                           # what --json prints
    rep = fit_records(RecordStream("big.jsonl"), "all")                      # dial, kinds, paced, mixed; rep.choice per player
    rep.model_fit("mixed").player("greedy").params["weight"]; rep.population()["bands"]
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.stats import chi2

from harness.players import fit_kernels as FK
from harness.game import registry
from harness.decisions.analysis import DECISION_KINDS, SCALE, Analyser, DecisionTable, decision_batches, rating
from harness.records.codec import arrays_of_recording
from harness.game.engine import play
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.decisions.positions import TIE
from harness.util.render import MISSING, Table, ci_level, count, num, pct, plain, sig, statistic
from harness.util.render import text as render_text
from harness.util.progress import bar
from harness.records.record import GameRecord, ReadResult, RecordStream
from harness.exact.solver import n_threads, run_blocks

#: The extended family's parameters, in its kernels' order (:func:`harness.players.fit_kernels.family_loglik`).
FAMILY = ("weight", "keep_temperature", "box_temperature", "blunder")
#: The models ``fit`` knows: name -> the parameters it fits. The solver's dial (``solver:...``;
#: the others stay 0) and the extended family: ``kinds`` (a temperature per decision kind and a
#: blunder rate, weight 0), ``mixed`` (and the weight on the myopic values), ``paced`` (the same
#: with the weight on the paced values instead).
MODELS: dict[str, tuple[str, ...]] = {
    "solver:temperature": ("temperature",),
    "solver:blunder": ("blunder",),
    "solver:temperature,blunder": ("temperature", "blunder"),
    "kinds": ("keep_temperature", "box_temperature", "blunder"),
    "mixed": FAMILY,
    "paced": FAMILY,
}
#: The values each weighted model of the family mixes with the exact ones: ``mixed`` the myopic
#: values (:attr:`harness.decisions.analysis.DecisionTable.myopic`), ``paced`` the paced values
#: (:attr:`harness.decisions.analysis.DecisionTable.paced`).
MIXES = {"mixed": "myopic", "paced": "paced"}
#: Other names of models: ``dial`` is the default model, the solver's whole dial.
ALIASES = {"dial": "solver:temperature,blunder"}
#: What ``--model all`` fits, and compares player by player on held-out games (the population
#: picture shows the last one's parameters).
ALL_MODELS = ("solver:temperature,blunder", "kinds", "paced", "mixed")
FAMILY_MODELS = ("kinds", "mixed", "paced")
#: Temperatures are searched in [T_MIN, T_MAX] (log scale) and at 0; beyond T_MAX play is uniform
#: to within the noise of any record.
T_MIN = 1e-3
T_MAX = 1e3
#: Regret bins of the goodness-of-fit check (points): 0 (a best option), (0, 0.5], (0.5, 2], (2, 8], > 8.
REGRET_BINS = (0.0, 0.5, 2.0, 8.0)
BIN_NAMES = ("0", "(0, 0.5]", "(0.5, 2]", "(2, 8]", "> 8")
#: A player is a poor fit when a goodness-of-fit test gives p below this.
POOR_P = 1e-3
#: The least evidence a fit needs to be an answer (``fit --min-decisions``): informative decisions
#: (about a dozen games). The goodness-of-fit tests flag ``greedy`` in every one of 10 records from
#: about 220 decisions (5 games) under the default model, and a temperature is known to +-10 % from
#: about 500 (benchmarks/BENCHMARKS.md, "Player models"): twice the first, the second.
MIN_DECISIONS = 500
#: ... and every parameter's interval no wider than this fraction of its estimate on either side
#: (``fit --max-half-width``: (hi - lo) / 2 <= MAX_HALF_WIDTH x max(estimate, RESOLUTION)).
MAX_HALF_WIDTH = 0.25
#: An estimate near 0 is measured against these instead (a temperature below 0.1 points plays
#: within about 0.01 points per decision of perfect; a blunder rate below 2 %).
RESOLUTION = {"temperature": 0.1, "blunder": 0.02, "keep_temperature": 0.1, "box_temperature": 0.1,
              "weight": 0.05}
#: The verdicts of a fit.
OK, POOR, TOO_LITTLE = "ok", "POOR", "too little data"
#: Games walked per batch when a fit reads its records (the per-option table of a batch only).
BATCH_GAMES = 2000


def parse_model(text: str) -> str:
    """The canonical model name of ``text`` (parameter order free); UserError naming the models."""
    name, _, params = text.replace(" ", "").partition(":")
    ps = [x for x in params.split(",") if x]
    if name == "solver" and ps and len(set(ps)) == len(ps) and set(ps) <= {"temperature", "blunder"}:
        return "solver:" + ",".join(x for x in ("temperature", "blunder") if x in ps)
    if not params and name in FAMILY_MODELS:
        return name
    if not params and name in ALIASES:
        return ALIASES[name]
    raise UserError(f"unknown model {text!r}: the models are {', '.join([*MODELS, *ALIASES])}, or several "
                    "joined by '+', or all")


def parse_models(text: str) -> tuple[str, ...]:
    """The models of ``text``: one model, several joined by ``+`` (``dial+mixed``) or ``all``
    (:data:`ALL_MODELS`); each once, in the order given."""
    if text.strip() == "all":
        return ALL_MODELS
    out: list[str] = []
    for part in text.split("+"):
        m = parse_model(part)
        if m not in out:
            out.append(m)
    return tuple(out)


def is_family(model: str) -> bool:
    """A model of the extended family (``kinds``, ``mixed``, ``paced``): no solver bot plays it."""
    return model in FAMILY_MODELS


def mixes(models: Iterable[str]) -> set[str]:
    """The values besides the exact ones that ``models`` need (:data:`MIXES`: ``myopic``, ``paced``)."""
    return {MIXES[m] for m in models if m in MIXES}


# ---------------------------------------------------------------------------------------------
# the data of a fit


@dataclass(frozen=True)
class Choices:
    """The informative decisions (two legal options or more) of a player or a pool, flat, identical
    decisions merged into one row with their count.

    ptr: (D0 + 1,) int64 and r: (M,) float32 (or float64) the options of a store of D0 rows: row j's
    are r[ptr[j]:ptr[j + 1]], each legal option's regret (best value - its value; exactly 0 within
    :data:`TIE` of the best) in ascending order; rows: (D,) int64 which rows of the store these are
    (None: all of them, in order); per row of these: rc (D,) the regret of the option played (r's
    type), u (D,) float64 1 / n, kind (D,) int8 0 keep, 1 box, w (D,) float64 the number of decisions
    it stands for (None: 1 each; any number type). ``len`` is the rows, :attr:`decisions` the decisions. A player's
    decisions and their subsets share the store's options (:meth:`subset` copies no option).
    With the myopic values (the extended family's models need them): g (M,) each option's myopic
    regret (best myopic value - its myopic value, exactly 0 within :data:`TIE`; in r's order, which
    is the exact regrets' ascending order, not g's) and gc (D,) the chosen option's; else None.
    With the paced values (the ``paced`` model's): h (M,) and hc (D,) likewise; else None. A model's
    likelihood reads g: :meth:`mixing` puts the values it mixes there.
    who (D,) int32: each row's player code in a fit's store (:class:`DecisionStore`; its lowest bit
    the half of the held-out split), or None.
    """

    ptr: np.ndarray
    r: np.ndarray
    rc: np.ndarray
    u: np.ndarray
    kind: np.ndarray
    rows: np.ndarray | None = None
    w: np.ndarray | None = None
    g: np.ndarray | None = None
    gc: np.ndarray | None = None
    h: np.ndarray | None = None
    hc: np.ndarray | None = None
    who: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.rows is None:
            object.__setattr__(self, "rows", np.arange(len(self.rc), dtype=np.int64))
        if self.w is None:
            object.__setattr__(self, "w", np.ones(len(self.rc)))

    def __len__(self) -> int:
        return len(self.rc)

    @property
    def decisions(self) -> int:
        """The decisions these rows stand for (each row's count added)."""
        return int(self.w.sum())

    @classmethod
    def of_arrays(cls, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray,
                  dtype: Any = np.float32, myopic: np.ndarray | None = None,
                  paced: np.ndarray | None = None) -> Choices:
        """From a :class:`harness.decisions.analysis.DecisionTable`'s columns (values (D, W), -inf past n[d];
        ``myopic`` and ``paced`` likewise, or None); ``dtype`` of the stored regrets."""
        b = ChoicesBuilder(dtype=dtype, myopic=myopic is not None, paced=paced is not None)
        b.add(values, n, chosen, kind, np.zeros(len(n), np.int32), myopic, paced)
        return b.choices()

    @classmethod
    def of_table(cls, table: DecisionTable, rows: np.ndarray | None = None, dtype: Any = np.float32) -> Choices:
        """The informative decisions of a :class:`~harness.decisions.analysis.DecisionTable` (``rows``: a
        boolean mask or indices of the decisions to keep), with its myopic and paced values when it
        has them."""
        sel = slice(None) if rows is None else rows
        return cls.of_arrays(table.values[sel], table.n[sel], table.chosen[sel], table.kind[sel], dtype,
                             None if table.myopic is None else table.myopic[sel],
                             None if table.paced is None else table.paced[sel])

    def mixing(self, model: str) -> Choices:
        """These decisions as ``model``'s likelihood reads them: g and gc the values it mixes
        (:data:`MIXES`; the paced regrets for ``paced``), no copy; ValueError when they are missing."""
        what = MIXES.get(model)
        if what is None:
            return self
        g, gc = (self.g, self.gc) if what == "myopic" else (self.h, self.hc)
        if g is None:
            raise ValueError(f"the {model} model needs decisions with their {what} values")
        return self if what == "myopic" else dataclasses.replace(self, g=g, gc=gc, h=None, hc=None)

    def subset(self, mask: np.ndarray) -> Choices:
        """The rows where ``mask`` (D,) bool is true (their options are not copied)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.all():
            return self
        return self.take(mask)

    def take(self, sel: Any) -> Choices:
        """The rows ``sel`` (a mask, indices or a slice: a slice copies nothing) of these."""
        return Choices(self.ptr, self.r, self.rc[sel], self.u[sel], self.kind[sel], self.rows[sel], self.w[sel],
                       self.g, None if self.gc is None else self.gc[sel], self.h,
                       None if self.hc is None else self.hc[sel], None if self.who is None else self.who[sel])

    def compact(self) -> Choices:
        """These rows with only their own options, in their order (ptr from 0, rows 0..D-1)."""
        lo = self.ptr[self.rows]
        n = self.ptr[self.rows + 1] - lo
        ptr = np.zeros(len(n) + 1, np.int64)
        np.cumsum(n, out=ptr[1:])
        opt = np.repeat(lo - ptr[:-1], n) + np.arange(ptr[-1])
        return Choices(ptr, self.r[opt], self.rc, self.u, self.kind, None, self.w,
                       None if self.g is None else self.g[opt], self.gc, None if self.h is None else self.h[opt],
                       self.hc, self.who)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.ptr, self.r, self.rc, self.u, self.kind, self.rows, self.w, self.g, self.gc,
                                      self.h, self.hc, self.who) if a is not None)


class _Buffer:
    """A 1-d array grown by half at a time with ``ndarray.resize`` (``realloc``: a large block is
    usually moved by remapping its pages, not copied, so growing seldom holds two copies);
    :meth:`view` of what is filled, once everything has been added (no view lives while it grows)."""

    def __init__(self, dtype: Any, capacity: int = 1024) -> None:
        self.a = np.zeros(max(capacity, 16), dtype=dtype)
        self.n = 0
        self.viewed = False

    def reserve(self, need: int) -> np.ndarray:
        """Room for ``need`` items in all (the array, to be filled by the caller)."""
        if need > len(self.a):
            self.a.resize(max(need, len(self.a) + len(self.a) // 2), refcheck=False)
        return self.a

    def view(self) -> np.ndarray:
        self.viewed = True
        return self.a[:self.n]


class ChoicesBuilder:
    """A store of :class:`Choices` built batch by batch, in memory (a fit's :class:`DecisionStore`
    fills one per segment of a log): only what the likelihood needs is kept, the informative
    decisions' option regrets in CSR form, sorted and of ``dtype`` (float32: 4 bytes an option, 4
    more with each of the myopic and the paced values), identical decisions of a player merged into
    one row and a count
    (:func:`harness.players.fit_kernels.merge`, a hash table of the rows), and each player's summed regret
    over every decision (the model-free regret per game). ``add`` takes a batch of a
    :class:`~harness.decisions.analysis.DecisionTable`'s columns and each decision's player code.

    Memory: per row, its options (4 bytes each, 16.6 on average on scandinavian) and 33 bytes
    (ptr, rc, kind, player, count, hash), plus 16 to 32 of hash table while the store is built
    (dropped, and the buffers trimmed to what they hold, by :meth:`choices`); nothing per merged
    decision. It grows with what it is given: :class:`DecisionStore` bounds it by segments."""

    def __init__(self, capacity: int = 1024, dtype: Any = np.float32, myopic: bool = False,
                 paced: bool = False) -> None:
        self.dtype = np.dtype(dtype)
        self.bits_type = np.dtype(f"u{self.dtype.itemsize}")
        self.r = _Buffer(self.bits_type, capacity * 16)
        #: with ``myopic``, each option's myopic regret (and the chosen one's) too: 4 bytes more an option
        self.myopic = myopic
        self.g = _Buffer(self.bits_type, capacity * 16 if myopic else 0)
        self.gc = _Buffer(self.bits_type, capacity if myopic else 0)
        #: with ``paced``, each option's paced regret (and the chosen one's): 4 bytes more an option
        self.paced = paced
        self.h = _Buffer(self.bits_type, capacity * 16 if paced else 0)
        self.hc = _Buffer(self.bits_type, capacity if paced else 0)
        self.ptr = _Buffer(np.int64, capacity + 1)
        self.ptr.n = 1
        self.rc = _Buffer(self.bits_type, capacity)
        self.kind = _Buffer(np.int8, capacity)
        self.who = _Buffer(np.int32, capacity)  # player of each row
        self.w = _Buffer(np.int64, capacity)  # decisions of each row
        self.hashes = _Buffer(np.uint64, capacity)
        self.table = np.full(1 << max(4, (2 * capacity - 1).bit_length()), -1, np.int64)
        self.regret = np.zeros(0)  # per player code: best value - chosen value over every decision, as the sums count it

    @property
    def rows(self) -> int:
        return self.kind.n

    #: A batch is added this many decisions at a time (its per-option temporaries stay this small).
    ADD_ROWS = 1 << 15

    def add(self, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray, who: np.ndarray,
            myopic: np.ndarray | None = None, paced: np.ndarray | None = None) -> None:
        if self.ptr.viewed:
            raise RuntimeError("a store takes no decisions once its choices were asked for")
        if self.myopic and myopic is None:
            raise ValueError("a store of myopic values takes decisions with their myopic values")
        if self.paced and paced is None:
            raise ValueError("a store of paced values takes decisions with their paced values")
        for a in range(0, len(n), self.ADD_ROWS):
            s = slice(a, a + self.ADD_ROWS)
            self._add(values[s], n[s], chosen[s], kind[s], who[s], None if myopic is None else myopic[s],
                      None if paced is None else paced[s])

    def _add(self, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray, who: np.ndarray,
             myopic: np.ndarray | None, paced: np.ndarray | None) -> None:
        n = np.asarray(n, dtype=np.int64)
        chosen = np.asarray(chosen, np.int64)
        who = np.asarray(who, np.int32)
        legal = np.arange(values.shape[1])[None, :] < n[:, None]
        best = np.where(legal, values, -np.inf).max(axis=1)
        if len(who):
            top = int(who.max()) + 1
            if top > len(self.regret):
                self.regret = np.concatenate([self.regret, np.zeros(top - len(self.regret))])
            self.regret[:top] += np.bincount(who, weights=best - values[np.arange(len(n)), chosen], minlength=top)
        keep = n >= 2
        values, n, chosen, kind, legal = values[keep], n[keep], chosen[keep], kind[keep], legal[keep]
        reg = _regrets(values, legal)
        rc = reg[np.arange(len(n)), chosen]
        if len(n) and not np.isfinite(rc).all():
            raise ValueError("a chosen option outside the legal ones")
        # ascending: the legal options stay first, the kernels stop at the cut (the myopic regrets
        # follow the same order)
        gopts = gc = hopts = hc = np.zeros(0, self.bits_type)
        if self.myopic or self.paced:
            order = np.argsort(reg, axis=1, kind="stable")

            def other(x: Any) -> tuple[np.ndarray, np.ndarray]:  # its options' regrets in r's order, the chosen one's
                xr = _regrets(np.asarray(x)[keep], legal)
                return (np.take_along_axis(xr, order, axis=1).astype(self.dtype)[legal].view(self.bits_type),
                        xr[np.arange(len(n)), chosen].astype(self.dtype).view(self.bits_type))

            if self.myopic:
                gopts, gc = other(myopic)
            if self.paced:
                hopts, hc = other(paced)
            reg = np.take_along_axis(reg, order, axis=1)
        else:
            reg.sort(axis=1)
        opts = reg.astype(self.dtype)[legal].view(self.bits_type)
        bptr = np.zeros(len(n) + 1, np.int64)
        np.cumsum(n, out=bptr[1:])
        need = self.rows + len(n)
        if 2 * need > len(self.table):
            self.table = np.full(1 << (2 * need - 1).bit_length(), -1, np.int64)
            FK.rehash(self.table, self.hashes.a, self.rows)
        rows, m = FK.merge(bptr, opts, rc.astype(self.dtype).view(self.bits_type), np.asarray(kind, np.int8),
                           who[keep], self.table, self.hashes.reserve(need), self.ptr.reserve(need + 1),
                           self.r.reserve(self.r.n + len(opts)), self.rc.reserve(need), self.kind.reserve(need),
                           self.who.reserve(need), self.w.reserve(need), self.rows, self.r.n, gopts, gc,
                           self.g.reserve(self.g.n + len(gopts)) if self.myopic else self.g.a,
                           self.gc.reserve(need) if self.myopic else self.gc.a, hopts, hc,
                           self.h.reserve(self.h.n + len(hopts)) if self.paced else self.h.a,
                           self.hc.reserve(need) if self.paced else self.hc.a)
        for b in ((self.kind, self.rc, self.who, self.w, self.hashes) + ((self.gc,) if self.myopic else ())
                  + ((self.hc,) if self.paced else ())):
            b.n = rows
        self.ptr.n, self.r.n = rows + 1, m
        if self.myopic:
            self.g.n = m
        if self.paced:
            self.h.n = m

    def choices(self) -> Choices:
        """Every informative decision, in order, with each row's player code. Once asked, the store
        takes no more decisions (its hash table is dropped)."""
        self.table, self.hashes.a = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        if not self.ptr.viewed:  # the buffers' room beyond what is filled given back (no view of them lives yet)
            for b in (self.r, self.ptr, self.rc, self.kind, self.who, self.w, self.g, self.gc, self.h, self.hc):
                b.a.resize(b.n, refcheck=False)
        ptr = self.ptr.view()
        g, gc = (self.g.view().view(self.dtype), self.gc.view().view(self.dtype)) if self.myopic else (None, None)
        h, hc = (self.h.view().view(self.dtype), self.hc.view().view(self.dtype)) if self.paced else (None, None)
        return Choices(ptr, self.r.view().view(self.dtype), self.rc.view().view(self.dtype), 1.0 / np.diff(ptr),
                       self.kind.view(), None, self.w.view(), g, gc, h, hc, self.who.view())

    @property
    def nbytes(self) -> int:
        """The store's bytes (buffers as allocated, hash table included)."""
        return sum(b.a.nbytes for b in (self.r, self.ptr, self.rc, self.kind, self.who, self.w, self.hashes, self.g,
                                        self.gc, self.h, self.hc)) + self.table.nbytes


def _regrets(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """(D, W) best legal value - each value, exactly 0 within :data:`TIE` of the best, +inf past the legal options."""
    v = np.where(legal, values, -np.inf)
    reg = v.max(axis=1, initial=-np.inf)[:, None] - v
    reg[legal & (reg <= TIE)] = 0.0
    return reg


# ---------------------------------------------------------------------------------------------
# decisions in blocks: kept in memory, or beyond a budget in a scratch file read a block at a time

#: The unit of every sum over decisions: a player's rows (of one segment of the store) are cut in
#: blocks of this many; a kernel sums a block in row order and the blocks' sums are added by
#: :func:`_total` (exactly rounded, whatever their order), so a fit's figures do not depend on the
#: thread count, nor on which blocks are in memory and which in the scratch file.
BLOCK_ROWS = 1 << 14
#: Identical decisions are merged into one row within a segment of the store (:class:`DecisionStore`)
#: of about this many rows (a segment is sealed after the batch that fills it); the hash table that
#: finds them covers one segment only, so it does not grow with the log either.
SEGMENT_ROWS = 1 << 20
#: The most bytes of sealed segments a fit keeps in memory (``fit --max-memory``); beyond it they
#: are written to a scratch file, and read back a block at a time by every pass.
MAX_MEMORY = 1 << 27


def _total(xs: Iterable[float]) -> float:
    """The exactly rounded sum of ``xs`` (:func:`math.fsum`; nan for +inf and -inf together)."""
    xs = list(xs)
    try:
        return math.fsum(xs)
    except ValueError:  # inf - inf
        return math.nan


class _Scratch:
    """The temporary directory of a fit's scratch files, removed by :meth:`close` (a fit calls it
    also when it fails). Each file is unlinked as soon as it is open: what is written lives in the
    open descriptors only, and no file outlives the process, however it ends."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="yatzy-fit-")
        self.fds: set[int] = set()
        self.made = 0

    def file(self) -> int:
        """A new empty file open for reading and writing: its descriptor (:meth:`release` it)."""
        path = os.path.join(self.dir, f"{self.made}.bin")
        self.made += 1
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        self.fds.add(fd)
        try:
            os.unlink(path)
        except OSError:  # a system that cannot unlink an open file: the directory's removal does it
            pass
        return fd

    def release(self, fd: int) -> None:
        if fd in self.fds:
            self.fds.discard(fd)
            os.close(fd)

    def close(self) -> None:
        for fd in list(self.fds):
            self.release(fd)
        shutil.rmtree(self.dir, ignore_errors=True)


def _write(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data).cast("B")
    while len(view):
        k = os.pwrite(fd, view, offset)
        view, offset = view[k:], offset + k


def _read(fd: int, size: int, offset: int) -> bytearray:
    buf = bytearray(size)
    got = 0
    while got < size:
        k = os.preadv(fd, [memoryview(buf)[got:]], offset + got)
        if k <= 0:
            raise OSError(f"scratch file ended at {offset + got} of {offset + size}")
        got += k
    return buf


#: A spilled block's arrays, in the order written (the 8-byte ones first; each padded to 8 bytes).
_FIELDS = ("ptr", "w", "who", "rc", "gc", "hc", "r", "g", "h", "kind")


class _Part:
    """One block of a store's decisions: at most :data:`BLOCK_ROWS` rows of one player in one
    segment, rows a..b of the segment while it is in memory, or the same rows with only their own
    options in the scratch file (:meth:`spill`; read back whole by :meth:`choices`). ``counts`` (4,)
    its rows and ``weights`` (4,) its decisions of each (kind, half), at index 2 kind + half."""

    __slots__ = ("seg", "a", "b", "fd", "offset", "layout", "counts", "weights")

    def __init__(self, seg: Choices, a: int, b: int) -> None:
        self.seg, self.a, self.b, self.fd = seg, a, b, None
        self.offset, self.layout = 0, ()
        ch = self.choices()
        cat = _category(ch)
        self.counts = np.bincount(cat, minlength=4)
        self.weights = np.bincount(cat, weights=ch.w, minlength=4)

    def choices(self) -> Choices:
        if self.fd is None:
            return self.seg.take(slice(self.a, self.b))
        size, fields = self.layout
        buf = _read(self.fd, size, self.offset)
        a = {name: np.frombuffer(buf, dtype, n, at) for name, at, dtype, n in fields}
        return Choices(a["ptr"], a["r"], a["rc"], 1.0 / np.diff(a["ptr"]), a["kind"], None, a["w"], a.get("g"),
                       a.get("gc"), a.get("h"), a.get("hc"), a.get("who"))

    def spill(self, fd: int, offset: int) -> int:
        """Write the block at ``offset`` of file ``fd`` (it is read from there from now on); its bytes."""
        ch = self.choices().compact()
        chunks, fields, at = [], [], 0
        for name in _FIELDS:
            x = getattr(ch, name)
            if x is None:
                continue
            x = np.ascontiguousarray(x)
            fields.append((name, at, x.dtype.str, x.size))
            chunks.append(x.tobytes())
            at += x.nbytes
            if at % 8:
                chunks.append(bytes(8 - at % 8))
                at += 8 - at % 8
        _write(fd, b"".join(chunks), offset)
        self.fd, self.offset, self.layout, self.seg = fd, offset, (at, tuple(fields)), None
        return at


def _category(ch: Choices) -> np.ndarray:
    """Each row's 2 kind + half (the lowest bit of its player code; 0 without codes)."""
    cat = 2 * ch.kind.astype(np.int64)
    return cat if ch.who is None else cat + (ch.who & 1)


class Blocks:
    """Decisions as a sequence of blocks (of a :class:`DecisionStore`, or of a :class:`Choices`
    cut every :data:`BLOCK_ROWS` rows: :func:`as_blocks`), each loaded as a :class:`Choices` when a
    pass reaches it (from memory, or read from the scratch file), restricted to one decision kind
    and/or one half of the held-out split (:meth:`where`). What the likelihoods, the regret check
    and the fit's tallies walk."""

    def __init__(self, parts: Sequence[_Part], myopic: bool, kind: int | None = None, half: int | None = None,
                 scratch: _Scratch | None = None, paced: bool = False, model: str | None = None) -> None:
        self.kind, self.half, self.myopic, self.scratch = kind, half, myopic, scratch
        #: the paced values are there; each block is given to ``model``'s likelihood (:meth:`mixing`)
        self.paced, self.model = paced, model
        kinds, halves = (0, 1) if kind is None else (kind,), (0, 1) if half is None else (half,)
        self.sel = [2 * k + h for k in kinds for h in halves]
        self.parts = [p for p in parts if p.counts[self.sel].sum()]
        self.lengths = [int(p.counts[self.sel].sum()) for p in self.parts]
        self.spilled = any(p.fd is not None for p in self.parts)
        self._kept: dict[int, Choices] = {}  # the rows selected of a block in memory (selected once)

    def __len__(self) -> int:
        return sum(self.lengths)

    @property
    def decisions(self) -> int:
        """The decisions these rows stand for (each row's count added)."""
        return int(sum(float(p.weights[self.sel].sum()) for p in self.parts))

    def where(self, kind: int | None = None, half: int | None = None) -> Blocks:
        """These decisions of ``kind`` only (0 keep, 1 box) and/or ``half`` only (0 trains, 1 tests)."""
        for mine, asked in ((self.kind, kind), (self.half, half)):
            if mine is not None and asked is not None and mine != asked:
                return Blocks((), self.myopic, kind, half, self.scratch, self.paced, self.model)
        return Blocks(self.parts, self.myopic, self.kind if kind is None else kind,
                      self.half if half is None else half, self.scratch, self.paced, self.model)

    def mixing(self, model: str) -> Blocks:
        """These decisions as ``model``'s likelihood reads them (:meth:`Choices.mixing` of each
        block: for ``paced`` the paced regrets in g), or ValueError when they are missing."""
        what = MIXES.get(model)
        if what is None:
            return self
        if not (self.myopic if what == "myopic" else self.paced):
            raise ValueError(f"the {model} model needs decisions with their {what} values")
        if what == "myopic":
            return self
        return Blocks(self.parts, True, self.kind, self.half, self.scratch, True, model)

    def load(self, i: int) -> Choices:
        """Block i's rows (of the kind and half asked)."""
        if i in self._kept:
            return self._kept[i]
        p = self.parts[i]
        ch = p.choices()
        if self.model is not None:
            ch = ch.mixing(self.model)
        if self.lengths[i] == len(ch):
            return ch
        ch = ch.take(np.isin(_category(ch), self.sel))
        if p.fd is None:  # as many bytes as the block's own (its options shared): in memory anyway
            self._kept[i] = ch
        return ch


def as_blocks(ch: Choices | Blocks) -> Blocks:
    """``ch`` as :class:`Blocks` (a :class:`Choices` cut every :data:`BLOCK_ROWS` rows, no copy)."""
    if isinstance(ch, Blocks):
        return ch
    parts = [_Part(ch, a, min(a + BLOCK_ROWS, len(ch))) for a in range(0, len(ch), BLOCK_ROWS)]
    return Blocks(parts, ch.g is not None, paced=ch.h is not None)


#: From this many rows a pass is split between the cores, a block at a time (the kernels release the GIL).
PARALLEL_ROWS = 20_000


def _each(ch: Blocks, fn: Callable[[int, Choices], Any], threads: int | None = None) -> list[Any]:
    """fn(i, block i) for every block of ``ch``, on the cores when they are :data:`PARALLEL_ROWS`
    rows or more; the results in block order."""
    out: list[Any] = [None] * len(ch.parts)

    def part(a: int, b: int) -> None:
        for i in range(a, b):
            out[i] = fn(i, ch.load(i))

    if threads is None:
        threads = n_threads() if len(ch) >= PARALLEL_ROWS else 1
    run_blocks(part, [(i, i + 1) for i in range(len(ch.parts))], threads)
    return out


class _Probs:
    """The chosen options' probabilities at one temperature of each block of a :class:`Blocks`,
    with the blocks' 1 / n and counts: (q, u, w) per block, in memory (u and w the block's own
    arrays), or for spilled decisions in a scratch file (24 bytes a row; ``fd``: one to reuse),
    read back :data:`WINDOW_BYTES` at a time."""

    #: A spilled cache is read back this many bytes at a time at most (the blocks it holds, whole).
    WINDOW_BYTES = 4 << 20

    def __init__(self, ch: Blocks, fd: int | None = None) -> None:
        self.ch = ch
        self.fd = fd if fd is not None or not ch.spilled or ch.scratch is None else ch.scratch.file()
        self.at = np.concatenate([[0], np.cumsum(ch.lengths, dtype=np.int64)]) * 24
        self.mem: list[Any] = [None] * len(ch.parts)

    def put(self, i: int, q: np.ndarray, c: Choices) -> None:
        if self.fd is None:
            self.mem[i] = (q, c.u, c.w)
        else:
            _write(self.fd, np.stack([q, c.u, c.w.astype(np.float64)]).tobytes(), int(self.at[i]))

    def __iter__(self) -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self.fd is None:
            yield from self.mem
            return
        i, n = 0, len(self.ch.parts)
        while i < n:
            j = i + 1
            while j < n and self.at[j + 1] - self.at[i] <= self.WINDOW_BYTES:
                j += 1
            buf = _read(self.fd, int(self.at[j] - self.at[i]), int(self.at[i]))
            for k in range(i, j):
                x = np.frombuffer(buf, np.float64, 3 * self.ch.lengths[k], int(self.at[k] - self.at[i]))
                x = x.reshape(3, -1)
                yield x[0], x[1], x[2]
            i = j


class DecisionStore:
    """The players' informative decisions of a fit, added a batch at a time, in memory within a
    budget whatever the size of the log: a :class:`ChoicesBuilder` merges identical decisions of a
    player into counted rows within a segment (:data:`SEGMENT_ROWS`); a full segment is sealed, its
    rows grouped by player (player c = code // 2, the two halves of the held-out split kept in their
    order) and cut in blocks (:data:`BLOCK_ROWS`); sealed segments stay in memory up to
    ``max_bytes`` bytes, beyond it every sealed segment goes to a scratch file (the builder's open
    segment stays in memory). :meth:`blocks` gives a player's (or several players') decisions as
    :class:`Blocks`; :meth:`close` removes the scratch files. What is fitted does not depend on
    ``max_bytes``: the segments, rows and blocks are the same, only where they are kept changes.

    Memory: the open segment (a row's options, 4 bytes each, 16.6 on average on scandinavian, and 33
    bytes, plus 16 to 32 of hash table; 4 bytes more an option with the myopic values), the sealed
    segments kept (up to ``max_bytes``) and, while the fit reads them, a block per thread."""

    def __init__(self, myopic: bool = False, max_bytes: int = MAX_MEMORY, segment_rows: int | None = None,
                 paced: bool = False) -> None:
        self.myopic, self.paced, self.max_bytes = myopic, paced, max_bytes
        self.segment_rows = SEGMENT_ROWS if segment_rows is None else segment_rows
        self.builder: ChoicesBuilder | None = None
        self.parts: dict[int, list[_Part]] = {}  # player -> its blocks, segment after segment
        self.memory: list[_Part] = []  # the blocks still in memory
        self.memory_bytes = 0
        self.regret = np.zeros(0)  # per player code, as ChoicesBuilder.regret
        self.scratch: _Scratch | None = None
        self.fd, self.spilled_bytes = -1, 0
        self.rows = self.options = self.decisions = self.segments = 0
        self.finished = False

    def add(self, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray, who: np.ndarray,
            myopic: np.ndarray | None = None, paced: np.ndarray | None = None) -> None:
        if self.finished:
            raise RuntimeError("a store takes no decisions once its choices were asked for")
        if self.builder is not None and self.builder.rows >= self.segment_rows:
            self._seal()
        if self.builder is None:
            self.builder = ChoicesBuilder(min(1 << 16, self.segment_rows), myopic=self.myopic, paced=self.paced)
        self.builder.add(values, n, chosen, kind, who, myopic, paced)

    def _seal(self) -> None:
        b, self.builder = self.builder, None
        if b is None:
            return
        ch = b.choices()
        top = len(b.regret)
        if top > len(self.regret):
            self.regret = np.concatenate([self.regret, np.zeros(top - len(self.regret))])
        self.regret[:top] += b.regret
        del b
        self.segments += 1
        if not len(ch):
            return
        seg = ch.take(np.argsort(ch.who >> 1, kind="stable"))
        del ch
        self.rows += len(seg)
        self.options += int(seg.ptr[-1])
        self.decisions += int(seg.w.sum())
        player = seg.who >> 1
        ends = [*(np.flatnonzero(np.diff(player)) + 1).tolist(), len(seg)]
        start = 0
        for end in ends:
            mine = [_Part(seg, a, min(a + BLOCK_ROWS, end)) for a in range(start, end, BLOCK_ROWS)]
            self.parts.setdefault(int(player[start]), []).extend(mine)
            self.memory += mine
            start = end
        self.memory_bytes += seg.nbytes
        if self.memory_bytes > self.max_bytes:
            self._spill()

    def _spill(self) -> None:
        if self.scratch is None:
            self.scratch = _Scratch()
            self.fd = self.scratch.file()
        for p in self.memory:
            self.spilled_bytes += p.spill(self.fd, self.spilled_bytes)
        self.memory, self.memory_bytes = [], 0

    def finish(self) -> None:
        """Seal the last segment: the store takes no more decisions."""
        if not self.finished:
            self._seal()
            self.finished = True

    def blocks(self, players: Sequence[int]) -> Blocks:
        """The decisions of ``players`` (player numbers, code // 2), player after player."""
        self.finish()
        return Blocks([p for c in players for p in self.parts.get(c, ())], self.myopic, scratch=self.scratch,
                      paced=self.paced)

    def regret_sum(self, codes: Sequence[int]) -> float:
        """The summed regret of every decision of player ``codes``."""
        self.finish()
        return float(sum(self.regret[c] for c in codes if c < len(self.regret)))

    def close(self) -> None:
        """Remove the scratch files (the store's blocks kept on disk are gone)."""
        if self.scratch is not None:
            self.scratch.close()
            self.scratch = None


def _release(scratch: _Scratch, fds: list[int]) -> None:
    for fd in fds:
        scratch.release(fd)


class Likelihood:
    """log L(T, blunder) of a :class:`Choices` (or :class:`Blocks`) and its profiles (the chosen
    options' softmax probabilities are cached per temperature: :class:`_Probs`)."""

    #: The cache of chosen-option probabilities holds at most this many bytes (and 2 temperatures at least).
    CACHE_BYTES = 16 << 20
    #: ... and for spilled decisions, this many temperatures (scratch files) at most.
    CACHE_FILES = 8

    def __init__(self, ch: Choices | Blocks) -> None:
        self.ch = as_blocks(ch)
        self._q: dict[float, _Probs] = {}
        self._most = min(257, max(2, self.CACHE_BYTES // max(1, 8 * len(self.ch))))
        self._fds: list[int] = []  # the scratch files of a spilled cache (each reused when its temperature goes)
        if self.ch.spilled and self.ch.scratch is not None:
            self._most = min(self._most, self.CACHE_FILES)
            weakref.finalize(self, _release, self.ch.scratch, self._fds)

    def q(self, t: float) -> _Probs:
        q = self._q.get(t)
        if q is None:
            fd = None
            if len(self._q) >= self._most:
                fd = self._q.pop(next(iter(self._q))).fd
            q = _Probs(self.ch, fd)
            if q.fd is not None and fd is None:
                self._fds.append(q.fd)

            def one(i: int, c: Choices) -> None:
                out = np.empty(len(c))
                FK.chosen_probs(c.ptr, c.r, c.rows, c.rc, float(t), out)
                q.put(i, out, c)

            _each(self.ch, one)
            self._q[t] = q
        return q

    def at(self, t: float, p: float) -> float:
        if p >= 1.0:  # every choice uniform: the temperature does not matter (no pass over the options)
            return _total(_each(self.ch, lambda i, c: float(FK.loglik(c.u, c.u, c.w, 1.0)), 1))
        return _total(float(FK.loglik(q, u, w, float(p))) for q, u, w in self.q(t))

    def best_blunder(self, t: float) -> tuple[float, float]:
        """(blunder, log L) maximising over the blunder rate at temperature t (concave in it)."""
        if not len(self.ch):
            return 0.0, 0.0
        tabs = self.q(t)

        def slope(p: float) -> float:
            return _total(float(FK.blunder_slope(q, u, w, float(p))) for q, u, w in tabs)

        if any(np.any((q == 0) & (u - q > 0)) for q, u, _ in tabs):
            s0 = math.inf
        else:
            s0 = slope(0.0)
        if s0 <= 0:
            return 0.0, self.at(t, 0.0)
        if slope(1.0) >= 0:
            return 1.0, self.at(t, 1.0)

        lo, hi = (1e-15 if not math.isfinite(s0) else 0.0), 1.0
        if slope(lo) <= 0:
            return lo, self.at(t, lo)
        p = float(brentq(slope, lo, hi, xtol=1e-12, rtol=1e-12))
        return p, self.at(t, p)


_FLOOR = -1e300  # -inf for the optimisers


def _finite(x: float) -> float:
    return x if x > _FLOOR else _FLOOR


def _max_over_t(f: Callable[[float], float], center: float | None = None) -> tuple[float, float]:
    """(T, f(T)) maximising f over T in {0} and [T_MIN, T_MAX]: a grid in log T (25 points; or 3,
    0.25 apart, around log ``center`` when given: a profile's walk starts from the temperature of
    its last point), widened while the best point is at its edge, then Brent's method between the
    best point's neighbours."""

    lo, hi = math.log(T_MIN), math.log(T_MAX)
    if center is None or center <= 0:
        grid = np.linspace(lo, hi, 25)
    else:
        c = min(max(math.log(center), lo), hi)
        grid = np.clip(c + np.linspace(-0.25, 0.25, 3), lo, hi)
    vals = {float(x): _finite(f(math.exp(x))) for x in grid}
    while True:
        xs = sorted(vals)
        i = max(range(len(xs)), key=lambda j: vals[xs[j]])
        if 0 < i < len(xs) - 1 or (i == 0 and xs[0] <= lo) or (i == len(xs) - 1 and xs[-1] >= hi):
            break
        step = 1.0
        nxt = max(xs[0] - step, lo) if i == 0 else min(xs[-1] + step, hi)
        vals[nxt] = _finite(f(math.exp(nxt)))
    a, b = xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)]
    best_x, best_v = xs[i], vals[xs[i]]
    if b > a:
        res = minimize_scalar(lambda x: -_finite(f(math.exp(x))), bounds=(a, b), method="bounded",
                              options={"xatol": 1e-5})
        if -res.fun > best_v:
            best_x, best_v = float(res.x), float(-res.fun)
    t0 = _finite(f(0.0))
    if t0 >= best_v:
        return 0.0, t0
    return math.exp(best_x), best_v


def _crossing(f: Callable[[float], float], inside: float, outside: float, level: float, tol: float,
              top: float | None = None) -> float:
    """The x between ``inside`` (the maximum of f, ``top`` when known) and ``outside`` (f < level)
    where f crosses level, to ``tol``.

    Near its maximum a log-likelihood profile is close to a parabola, so its signed root deviance
    s(x) = sqrt(2 (top - f(x))) is close to a line: one small step from the maximum and a linear
    extrapolation of s put a point just past the crossing, and Brent's method on s finishes in the
    close bracket. About 6 evaluations of f where bisection from the bounds took 20 (each is a
    likelihood pass, and a blunder profile's a maximisation over T)."""
    seen: dict[float, float] = {}
    if top is not None:
        seen[inside] = top

    def fx(x: float) -> float:  # brentq asks for the ends again: each x evaluated once
        if x not in seen:
            seen[x] = _finite(f(x))
        return seen[x]

    top = fx(inside)
    if top <= level:
        return inside
    if fx(outside) >= level:  # a profile's inner maximum found higher this time: no crossing inside
        return outside
    target = math.sqrt(2 * (top - level))

    def h(x: float) -> float:
        return math.sqrt(2 * max(0.0, top - fx(x))) - target

    a, b = inside, outside
    x = inside + (outside - inside) * 1e-3
    for _ in range(64):
        if h(x) >= 0:
            b = x
            break
        a = x
        s = h(x) + target
        # past the crossing if s is a line (10 % beyond its extrapolation), else 16 times further
        x = inside + (x - inside) * (1.1 * target / s if s > 0 else 16.0)
        if (x - outside) * (outside - inside) >= 0:  # beyond the outer end: bracket with it
            break
    return float(brentq(h, a, b, xtol=tol, rtol=4 * np.finfo(float).eps))


@dataclass(frozen=True)
class Estimate:
    """A fitted parameter: ``value`` and its profile-likelihood interval [lo, hi] (hi may be inf)."""

    name: str
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.lo, self.hi]}


@dataclass(frozen=True)
class Mle:
    temperature: float
    blunder: float
    loglik: float


def mle(lik: Likelihood, model: str) -> Mle:
    """The maximum-likelihood (T, blunder) of ``model`` (the parameters it does not fit are 0)."""
    params = MODELS[model]
    if not len(lik.ch):
        return Mle(0.0, 0.0, 0.0)
    if params == ("blunder",):
        p, ll = lik.best_blunder(0.0)
        return Mle(0.0, p, ll)
    if params == ("temperature",):
        t, ll = _max_over_t(lambda t: lik.at(t, 0.0))
        return Mle(t, 0.0, ll)
    t, ll = _max_over_t(lambda t: lik.best_blunder(t)[1])
    p, ll = lik.best_blunder(t)
    return Mle(t, p, ll)


def intervals(lik: Likelihood, model: str, m: Mle, confidence: float) -> dict[str, Estimate]:
    """Profile-likelihood intervals of each parameter of ``model`` at its maximum ``m``."""

    level = m.loglik - chi2.ppf(confidence, 1) / 2
    params = MODELS[model]
    out: dict[str, Estimate] = {}
    if "temperature" in params:
        free = "blunder" in params
        prof = (lambda t: lik.best_blunder(t)[1]) if free else (lambda t: lik.at(t, 0.0))
        g = lambda x: prof(math.exp(x))  # noqa: E731
        x0 = math.log(max(m.temperature, T_MIN))
        if prof(0.0) >= level:
            lo = 0.0
        elif g(math.log(T_MIN)) >= level:
            lo = T_MIN
        else:
            lo = math.exp(_crossing(g, x0, math.log(T_MIN), level, 1e-5, m.loglik))
        if g(math.log(T_MAX)) >= level:
            hi = math.inf
        else:
            hi = math.exp(_crossing(g, x0, math.log(T_MAX), level, 1e-5, m.loglik))
        out["temperature"] = Estimate("temperature", m.temperature, lo, hi)
    if "blunder" in params:
        if "temperature" in params:
            state = {"t": m.temperature}

            def prof_p(p: float) -> float:
                t, v = _max_over_t(lambda t: lik.at(t, p), center=state["t"] or None)
                state["t"] = t
                return v
        else:
            def prof_p(p: float) -> float:
                return lik.at(0.0, p)
        bounds = []
        for end in (0.0, 1.0):
            if "temperature" in params:
                state["t"] = m.temperature
            v = prof_p(end)
            if v >= level:
                bounds.append(end)
                continue
            if "temperature" in params:  # the walk from the maximum starts at its temperature
                state["t"] = m.temperature
            bounds.append(_crossing(lambda p: v if p == end else prof_p(p), m.blunder, end, level, 1e-6, m.loglik))
        out["blunder"] = Estimate("blunder", m.blunder, bounds[0], bounds[1])
    return out


# ---------------------------------------------------------------------------------------------
# the extended family (models ``kinds`` and ``mixed``)


class FamilyLikelihood:
    """log L and its gradient under the extended family (:func:`harness.players.fit_kernels.family_loglik`)
    of a :class:`Choices` (or :class:`Blocks`): theta = (weight, keep temperature, box temperature,
    blunder), the temperatures > 0. Choices without myopic values take weight 0 only."""

    def __init__(self, ch: Choices | Blocks) -> None:
        self.ch = as_blocks(ch)
        self.myopic = self.ch.myopic

    def _g(self, c: Choices) -> tuple[np.ndarray, np.ndarray]:
        # without myopic values the weight is 0 and g is never read: r stands in for it
        return (c.g, c.gc) if self.myopic else (c.r, c.rc)

    def at(self, theta: Sequence[float]) -> tuple[float, np.ndarray]:
        weight, tk, tb, p = (float(x) for x in theta)
        if weight and not self.myopic:
            raise ValueError("a weight on the myopic values needs decisions with their myopic values")

        def one(i: int, c: Choices) -> tuple[float, np.ndarray]:
            grad = np.zeros(4)
            g, gc = self._g(c)
            ll = FK.family_loglik(c.ptr, c.r, g, c.rows, c.rc, gc, c.kind, c.u, c.w, weight, tk, tb, p, grad)
            return float(ll), grad

        parts = _each(self.ch, one)
        return _total(v[0] for v in parts), np.array([_total(v[1][j] for v in parts) for j in range(4)])

    def top1(self, weight: float) -> float:
        """The share of decisions whose option played is the model's most likely (ties shared)."""
        if not len(self.ch):
            return math.nan

        def one(i: int, c: Choices) -> float:
            out = np.empty(len(c))
            g, gc = self._g(c)
            FK.top_share(c.ptr, c.r, g, c.rows, c.rc, gc, float(weight), out)
            return float(c.w @ out)

        return _total(_each(self.ch, one)) / self.ch.decisions


_LOG_T = (math.log(T_MIN), math.log(T_MAX))


def _to_coord(name: str, x: float) -> float:
    """The optimiser's coordinate of a parameter: log T for the temperatures, the value otherwise."""
    return math.log(min(max(x, T_MIN), T_MAX)) if name.endswith("temperature") else x


def _of_coord(name: str, c: float) -> float:
    return math.exp(c) if name.endswith("temperature") else c


def _bounds(name: str) -> tuple[float, float]:
    return _LOG_T if name.endswith("temperature") else (0.0, 1.0)


def family_max(lik: FamilyLikelihood, free: Sequence[str], start: np.ndarray,
               starts: Sequence[np.ndarray] = ()) -> tuple[np.ndarray, float]:
    """(theta, log L) maximising over the ``free`` parameters of :data:`FAMILY` (the others stay at
    ``start``'s values): SLSQP from ``start`` and from each of ``starts``, in the coordinates of
    :func:`_to_coord` (temperatures in log T on [T_MIN, T_MAX]; weight and blunder on [0, 1]),
    with the kernel's exact gradient."""
    idx = [FAMILY.index(k) for k in free]
    start = np.asarray(start, dtype=float)
    if not idx:
        return start.copy(), lik.at(start)[0]
    temps = [j for j, k in zip(idx, free) if k.endswith("temperature")]

    def unpack(c: np.ndarray) -> np.ndarray:
        th = start.copy()
        for j, k, x in zip(idx, free, c):
            th[j] = _of_coord(k, float(x))
        return th

    def f(c: np.ndarray) -> tuple[float, np.ndarray]:
        th = unpack(c)
        ll, grad = lik.at(th)
        grad = grad.copy()
        for j in temps:
            grad[j] *= th[j]  # d/d log T
        if not math.isfinite(ll):
            return 1e300, np.zeros(len(idx))
        return -ll, -np.nan_to_num(grad[idx], posinf=1e300, neginf=-1e300)

    best_th, best_ll = start.copy(), -math.inf
    for s in (start, *starts):
        c0 = np.array([_to_coord(k, float(s[j])) for j, k in zip(idx, free)])
        # SLSQP, not L-BFGS-B: scipy's L-BFGS-B calls the threaded BLAS at every step, which on a
        # loaded machine took 6 times the CPU (11.0 s against 1.8 s for fit_table(..., "all") of two
        # players of 30 games; the same estimates and interval ends to 4 digits)
        res = minimize(f, c0, jac=True, method="SLSQP", bounds=[_bounds(k) for k in free],
                       options={"ftol": 1e-13, "maxiter": 500})
        c = np.array([min(max(x, lo), hi) for x, (lo, hi) in zip(res.x, (_bounds(k) for k in free))])
        for i, k in enumerate(free):  # an optimiser's 1e-17 for a bound of a weight or blunder rate
            if not k.endswith("temperature"):
                c[i] = 0.0 if c[i] < 1e-12 else 1.0 if c[i] > 1 - 1e-12 else c[i]
        th = unpack(c)
        ll = lik.at(th)[0]
        if ll > best_ll:
            best_th, best_ll = th, ll
    return best_th, best_ll


#: The extended family's fixed values where a model does not fit a parameter.
FAMILY_DEFAULTS = np.array([0.0, 1.0, 1.0, 0.0])


def family_mle(lik: FamilyLikelihood, model: str) -> tuple[np.ndarray, float]:
    """The maximum-likelihood theta of a model of the extended family, from several starts (the
    log-likelihood need not be concave in the weight)."""
    free = MODELS[model]
    start = FAMILY_DEFAULTS.copy()
    start[3] = 0.02 if "blunder" in free else 0.0
    starts = []
    if "weight" in free:
        for w0 in (0.1, 0.5, 0.95):
            s = start.copy()
            s[0] = w0
            starts.append(s)
        start = starts.pop(0)
    return family_max(lik, free, start, starts)


def family_intervals(lik: FamilyLikelihood, model: str, theta: np.ndarray, top: float,
                     confidence: float) -> dict[str, Estimate]:
    """Profile-likelihood intervals of each parameter of a model of the extended family at its
    maximum (theta, top): the others maximised again at each point of a profile (warm-started
    from the point before). A temperature at the T_MIN floor is reported as 0 (and an interval end
    there as 0), an end at T_MAX as inf."""
    free = MODELS[model]
    level = top - chi2.ppf(confidence, 1) / 2
    out: dict[str, Estimate] = {}
    for name in free:
        j = FAMILY.index(name)
        rest = [k for k in free if k != name]
        state = {"theta": theta.copy()}

        def prof(c: float) -> float:
            th = state["theta"].copy()
            th[j] = _of_coord(name, c)
            th, ll = family_max(lik, rest, th)
            state["theta"] = th
            return ll

        c0 = _to_coord(name, float(theta[j]))
        ends = []
        for end in _bounds(name):
            state["theta"] = theta.copy()
            v = prof(end) if end != c0 else top
            if v >= level:
                ends.append(end)
                continue
            state["theta"] = theta.copy()
            tol = 1e-5 if name.endswith("temperature") else 1e-6
            ends.append(_crossing(lambda c: v if c == end else prof(c), c0, end, level, tol, top))
        lo, hi = (_of_coord(name, c) for c in ends)
        value = float(theta[j])
        if name.endswith("temperature"):
            floor = T_MIN * (1 + 1e-6)
            value = 0.0 if value <= floor else value
            lo = 0.0 if lo <= floor else lo
            hi = math.inf if hi >= T_MAX * (1 - 1e-6) else hi
        out[name] = Estimate(name, value, lo, hi)
    return out


def _family_per_kind(ch: Blocks, model: str, theta: np.ndarray) -> float:
    """log L of ``model`` fitted separately to keep and to box decisions (its weight and blunder
    rate per kind too): the richer model of the likelihood-ratio test. Each kind's maximum starts
    from the joint fit ``theta`` and, with a weight, also from the far end of the weight's range."""
    total = 0.0
    for k, temp in enumerate(("keep_temperature", "box_temperature")):
        mine = ch.where(kind=k)
        if len(mine):
            free = [x for x in MODELS[model] if not x.endswith("temperature") or x == temp]
            starts = []
            if "weight" in free:
                other = theta.copy()
                other[0] = 0.05 if theta[0] > 0.5 else 0.95
                starts.append(other)
            total += family_max(FamilyLikelihood(mine), free, theta, starts)[1]
    return total


@dataclass(frozen=True)
class Test:
    """A goodness-of-fit statistic with its degrees of freedom and p-value."""

    statistic: float
    df: int
    p: float

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "df": self.df, "p": self.p}


def _spec(model: str, m: Mle) -> str:
    """The fitted bot as a spec; parameters at 0 are left out (``solver`` when all are)."""
    parts = [f"{name}={plain(getattr(m, name), 4)}" for name in MODELS[model] if getattr(m, name) > 0]
    return "solver" + (":" + ",".join(parts) if parts else "")


def evidence(decisions: int, params: Mapping[str, tuple[float, float, float]], min_decisions: int = MIN_DECISIONS,
             max_half_width: float = MAX_HALF_WIDTH) -> list[str]:
    """Why a fit of ``decisions`` informative decisions and parameter estimates {name: (value, lo,
    hi)} is too little data to be an answer (empty: it is enough): fewer than ``min_decisions``, or
    an interval wider than ``max_half_width`` x max(value, :data:`RESOLUTION`) on either side."""
    why = []
    if decisions < min_decisions:
        why.append(f"{decisions:,} decisions, fewer than {min_decisions:,}")
    for name, (value, lo, hi) in params.items():
        scale = max(value, RESOLUTION.get(name, 0.0)) if math.isfinite(value) else math.nan
        if not (math.isfinite(hi) and math.isfinite(lo) and (hi - lo) / 2 <= max_half_width * scale):
            why.append(f"the {name}'s interval [{sig(lo, 3)}, {sig(hi, 3)}] is wider than "
                       f"±{100 * max_half_width:g} % of {sig(scale, 3)}")
    return why


@dataclass(frozen=True)
class PlayerFit:
    """The fit of one player (or the pool): see the module docstring for each figure."""

    player: str
    model: str
    params: dict[str, Estimate]
    temperature: float
    blunder: float
    decisions: int
    seat_games: int
    regret_per_game: float
    loglik: float
    agreement: float
    agreement_model: float
    by_kind: dict[str, dict[str, Any]]
    lr: Test | None
    regret_test: Test | None
    observed_bins: np.ndarray
    expected_bins: np.ndarray
    poor: bool
    notes: tuple[str, ...] = field(default=())
    #: why the fit is too little data to be an answer (:func:`evidence`; empty: enough)
    too_little: tuple[str, ...] = field(default=())
    #: the extended family's fitted (weight, keep temperature, box temperature, blunder) (None: a dial model)
    theta: tuple[float, ...] | None = None
    #: top-1 agreement: the share of decisions whose option played is the model's most likely (ties shared)
    top1: float = math.nan
    #: every decision of the player's seat-games, one legal option included (``decisions``: the
    #: informative ones, what the likelihood uses); the denominator of :attr:`regret_per_decision`
    all_decisions: int = 0

    @property
    def enough(self) -> bool:
        """Enough evidence for an answer (:data:`MIN_DECISIONS`, :data:`MAX_HALF_WIDTH`)."""
        return not self.too_little

    @property
    def verdict(self) -> str:
        """``too little data`` (below the minimum of evidence, whatever the tests say), ``POOR`` or ``ok``."""
        return TOO_LITTLE if self.too_little else POOR if self.poor else OK

    @property
    def spec(self) -> str | None:
        """The fitted bot as a strategy spec (None for a model of the extended family: no bot plays it)."""
        if is_family(self.model):
            return None
        return _spec(self.model, Mle(self.temperature, self.blunder, self.loglik))

    @property
    def regret_per_decision(self) -> float:
        """Regret summed over every decision / every decision (:attr:`all_decisions`): what
        ``analyse`` calls a player's regret per decision (model-free; nan without any decision)."""
        return self.regret_per_game * self.seat_games / self.all_decisions if self.all_decisions else math.nan

    @property
    def band(self) -> str | None:
        """The skill band of :attr:`regret_per_decision` (:func:`harness.decisions.analysis.rating`; None
        without any decision)."""
        return rating(self.regret_per_decision) if self.all_decisions else None

    @property
    def loglik_per_decision(self) -> float | None:
        return self.loglik / self.decisions if self.decisions else None

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "model": self.model, "spec": self.spec,
                "params": {k: v.to_dict() for k, v in self.params.items()},
                "decisions": self.decisions, "all_decisions": self.all_decisions, "seat_games": self.seat_games,
                "regret_per_game": self.regret_per_game, "regret_per_decision": self.regret_per_decision,
                "loglik": self.loglik, "loglik_per_decision": self.loglik_per_decision,
                "top_choice": {"observed": self.agreement, "model": self.agreement_model},
                "top1_agreement": self.top1,
                "by_kind": self.by_kind, "verdict": self.verdict, "too_little_data": list(self.too_little),
                "goodness_of_fit": {
                    "poor": self.poor, "threshold_p": POOR_P,
                    "lr_vs_per_kind": None if self.lr is None else self.lr.to_dict(),
                    "regret_distribution": None if self.regret_test is None else self.regret_test.to_dict(),
                    "regret_bins": list(BIN_NAMES),
                    "observed": {k: self.observed_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)},
                    "expected": {k: self.expected_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)}},
                "notes": list(self.notes)}


#: Regret bins are merged with their neighbours until each expects at least this many decisions.
MIN_EXPECTED = 5.0


def _groups(expected: np.ndarray) -> np.ndarray:
    """(G, B) 0/1 matrix merging adjacent bins, left to right, until each group expects at least
    :data:`MIN_EXPECTED` (a short last group joins the one before)."""
    groups: list[list[int]] = [[]]
    acc = 0.0
    for j, e in enumerate(expected):
        groups[-1].append(j)
        acc += e
        if acc >= MIN_EXPECTED:
            groups.append([])
            acc = 0.0
    if not groups[-1]:
        groups.pop()
    elif len(groups) > 1:
        last = groups.pop()
        groups[-1] += last
    g = np.zeros((len(groups), len(expected)))
    for i, js in enumerate(groups):
        g[i, js] = 1.0
    return g


def _regret_test(ch: Blocks, t: float, p: float, theta: np.ndarray | None = None
                 ) -> tuple[Test | None, np.ndarray, np.ndarray, np.ndarray]:
    """The regret-distribution check at (t, p) (or at the extended family's ``theta``): (test,
    observed (2, B), expected (2, B), the model's mean regret per decision of each kind (2,), nan
    for a kind without decisions). Walks the decisions a block at a time, in order."""

    edges = np.array(REGRET_BINS)
    nb = len(edges) + 1
    nk = len(DECISION_KINDS)
    observed = np.zeros((nk, nb))
    expected = np.zeros((nk, nb))
    second = np.zeros((nk, nb, nb))  # sum over decisions of p p' (p: the decision's bin probabilities)
    regret = np.zeros(nk)
    for i in range(len(ch.parts)):
        c = ch.load(i)
        probs = np.empty((len(c), nb))
        mean = np.empty(len(c))
        if theta is None:
            FK.option_bins(c.ptr, c.r, c.rows, float(t), float(p), edges, probs, mean)
        else:
            FK.family_bins(c.ptr, c.r, c.r if c.g is None else c.g, c.rows, c.kind,
                           *(float(x) for x in theta), edges, probs, mean)
        obs_bin = np.searchsorted(edges, c.rc, side="left")
        kind, w = c.kind, c.w
        for k in range(nk):
            m = kind == k
            if m.any():
                pm, wm = probs[m], w[m]
                observed[k] += np.bincount(obs_bin[m], weights=wm, minlength=nb)
                expected[k] += wm @ pm
                second[k] += pm.T @ (pm * wm[:, None])
                regret[k] += wm @ mean[m]
    stat, df = 0.0, 0
    counts = observed.sum(axis=1)
    for k in range(nk):
        if not counts[k]:
            continue
        # adjacent bins merged until each expects MIN_EXPECTED decisions (the chi-square
        # approximation fails for rare cells: one decision where 0.04 are expected is not p = 1e-14)
        g = _groups(expected[k])
        cov = np.diag(g @ expected[k]) - g @ second[k] @ g.T
        w, vec = np.linalg.eigh(cov)
        keep = w > max(1e-9 * w.max(initial=0.0), 1e-12)
        z = vec[:, keep].T @ (g @ (observed[k] - expected[k]))
        stat += float(np.sum(z * z / w[keep]))
        df += int(keep.sum())
    test = Test(stat, df, float(chi2.sf(stat, df))) if df else None
    with np.errstate(invalid="ignore", divide="ignore"):
        return test, observed, expected, regret / counts


def fit_choices(ch: Choices | Blocks, model: str, player: str = "", confidence: float = 0.95, seat_games: int = 0,
                regret_per_game: float = math.nan, *, all_decisions: int | None = None,
                min_decisions: int = MIN_DECISIONS, max_half_width: float = MAX_HALF_WIDTH,
                step: Callable[[], None] | None = None) -> PlayerFit:
    """Fit ``model`` to one player's (or a pool's) decisions, with intervals, goodness of fit and
    the verdict (``too little data`` below ``min_decisions`` or ``max_half_width``: :func:`evidence`).
    ``all_decisions``: every decision of the seat-games, one legal option included (None: the
    decisions of ``ch``, for choices that are the whole record). ``step`` is called after each of
    the fit's :data:`STEPS` stages (a progress bar)."""

    tick = step or (lambda: None)
    model = parse_model(model)
    ch = as_blocks(ch)
    decisions = ch.decisions
    kinds = sum(bool(len(ch.where(kind=k))) for k in range(len(DECISION_KINDS)))
    theta = None
    if is_family(model):
        ch = ch.mixing(model)
        flik = FamilyLikelihood(ch)
        if len(ch):
            theta, top = family_mle(flik, model)
        else:
            theta, top = FAMILY_DEFAULTS.copy(), 0.0
        m = Mle(math.nan, float(theta[3]), top)
        tick()
        params = family_intervals(flik, model, theta, top, confidence) if len(ch) else {
            k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
        tick()
        # the richer model: the same model fitted separately to keep and to box decisions
        rich = _family_per_kind(ch, model, theta)
        shared = sum(not k.endswith("temperature") for k in MODELS[model])
        df = shared if kinds == 2 else 0
        top1 = flik.top1(float(theta[0]))
    else:
        lik = Likelihood(ch)
        m = mle(lik, model)
        tick()
        params = intervals(lik, model, m, confidence) if len(ch) else {
            k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
        tick()
        # the richer model: (T, blunder) fitted separately to keep and to box decisions
        rich = 0.0
        for k in range(len(DECISION_KINDS)):
            mine = ch.where(kind=k)
            if len(mine):
                rich += mle(Likelihood(mine), "solver:temperature,blunder").loglik
        df = 2 * kinds - len(MODELS[model])
        top1 = FamilyLikelihood(ch).top1(0.0)
    notes = []
    tick()
    lr = None
    if df > 0:
        stat = max(0.0, 2 * (rich - m.loglik))
        lr = Test(stat, df, float(chi2.sf(stat, df)))
    rt, observed, expected, mean = _regret_test(ch, m.temperature, m.blunder, theta)
    tick()
    by_kind = {}
    tally = _tally(ch)
    for k, name in enumerate(DECISION_KINDS):
        nk = ch.where(kind=k).decisions
        by_kind[name] = {"decisions": nk,
                         "regret_per_decision": float(tally[k, 0]) / nk if nk else None,
                         "regret_per_decision_model": float(mean[k]) if nk else None}
    poor = any(t is not None and t.p < POOR_P for t in (lr, rt))
    for k in ("temperature", "keep_temperature", "box_temperature"):
        if k in params and math.isinf(params[k].hi):
            notes.append(f"the {k.replace('_', ' ')}'s interval reaches {T_MAX:g} points: play indistinguishable "
                         "from random")
    if len(ch) == 0:
        notes.append("no decision with a choice: nothing to fit")
    agree = float(tally[:, 1].sum()) / decisions if len(ch) else math.nan
    agree_model = float(expected[:, 0].sum() / decisions) if len(ch) else math.nan
    too_little = evidence(decisions, {k: (e.value, e.lo, e.hi) for k, e in params.items()}, min_decisions,
                          max_half_width)
    return PlayerFit(player, model, params, m.temperature, m.blunder, decisions, seat_games, regret_per_game,
                     m.loglik, agree, agree_model, by_kind, lr, rt, observed, expected, poor, tuple(notes),
                     tuple(too_little), None if theta is None else tuple(float(x) for x in theta), top1,
                     decisions if all_decisions is None else all_decisions)


def _tally(ch: Blocks) -> np.ndarray:
    """(kinds, 2): per decision kind, the regret of the options played summed over the decisions,
    and the decisions playing a best option (regret 0)."""

    def one(i: int, c: Choices) -> np.ndarray:
        out = np.zeros((len(DECISION_KINDS), 2))
        rc = c.rc.astype(np.float64)
        for k in range(len(DECISION_KINDS)):
            m = c.kind == k
            out[k] = float(c.w[m] @ rc[m]), float(c.w[m] @ (rc[m] == 0.0))
        return out

    parts = _each(ch, one, 1)
    return np.array([[_total(x[k, j] for x in parts) for j in range(2)] for k in range(len(DECISION_KINDS))])


#: The stages of :func:`fit_choices` (its ``step`` calls): the maximum, the intervals, the per-kind
#: fits, the regret check.
STEPS = 4


# ---------------------------------------------------------------------------------------------
# many players


@dataclass(frozen=True)
class Holdout:
    """One model's held-out figures for one player: fitted (maximum likelihood, no intervals) to
    the player's training games, judged on the others: log-likelihood per decision and top-1
    agreement (:attr:`PlayerFit.top1`) there."""

    model: str
    loglik_per_decision: float
    top1: float

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "loglik_per_decision": self.loglik_per_decision, "top1_agreement": self.top1}


@dataclass(frozen=True)
class ModelChoice:
    """The model choice of one player: every model's :class:`Holdout`, the decisions of each half
    (seat-games split by :func:`fold`) and the chosen model, the best held-out log-likelihood per
    decision (a tie to the model listed first, the simpler)."""

    player: str
    train_decisions: int
    test_decisions: int
    models: tuple[Holdout, ...]

    @property
    def chosen(self) -> str | None:
        scored = [h for h in self.models if math.isfinite(h.loglik_per_decision)]
        if not scored or not self.test_decisions:
            return None
        return max(scored, key=lambda h: h.loglik_per_decision).model  # max keeps the first of equals

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "train_decisions": self.train_decisions, "test_decisions": self.test_decisions,
                "models": [h.to_dict() for h in self.models], "chosen": self.chosen}


def holdout(train: Choices | Blocks, test: Choices | Blocks, model: str) -> Holdout:
    """``model`` fitted to ``train`` and judged on ``test`` (:class:`Holdout`)."""
    if not len(train) or not len(test):
        return Holdout(model, math.nan, math.nan)
    if is_family(model):
        theta, _ = family_mle(FamilyLikelihood(train.mixing(model)), model)
        lik = FamilyLikelihood(test.mixing(model))
        return Holdout(model, lik.at(theta)[0] / test.decisions, lik.top1(float(theta[0])))
    m = mle(Likelihood(train), model)
    return Holdout(model, Likelihood(test).at(m.temperature, m.blunder) / test.decisions,
                   FamilyLikelihood(test).top1(0.0))


def fold(seed: int, game: Any, seat: int) -> int:
    """The half (0 trains, 1 tests) of seat ``seat`` of game ``game`` in the held-out split of
    ``seed``: a bit of a hash of the three (each seat-game on its own, whatever the order or the
    batches the records come in)."""
    return hashlib.blake2b(f"{seed}/{game}/{seat}".encode(), digest_size=1).digest()[0] & 1


@dataclass(frozen=True)
class FitReport:
    """Every player's fit, the pooled fit, the median player, and the games skipped; with several
    models, the other models' reports (``alternatives``), each player's :class:`ModelChoice` and
    the held-out split's seed."""

    source: str
    rules: str
    model: str
    confidence: float
    games: int
    players: tuple[PlayerFit, ...]
    pooled: PlayerFit | None
    median: str | None
    bad: tuple[str, ...] = field(default=())
    min_decisions: int = MIN_DECISIONS
    max_half_width: float = MAX_HALF_WIDTH
    alternatives: tuple[FitReport, ...] = field(default=())
    choice: tuple[ModelChoice, ...] = field(default=())
    holdout_seed: int | None = None

    def player(self, name: str) -> PlayerFit:
        for p in self.players:
            if p.player == name:
                return p
        raise UserError(f"no player {name!r} in the fit (players: {', '.join(p.player for p in self.players)})")

    def model_fit(self, model: str) -> FitReport:
        """The report of ``model`` (this one or an alternative)."""
        for r in (self, *self.alternatives):
            if r.model == model:
                return r
        known = ", ".join(r.model for r in (self, *self.alternatives))
        raise UserError(f"no model {model!r} in the fit (models: {known})")

    def population(self) -> dict[str, Any]:
        """The skill bands of the players (:data:`harness.decisions.analysis.SCALE`, each player's band the
        :func:`harness.decisions.analysis.rating` of its :attr:`PlayerFit.regret_per_decision`) that have
        players, best first, each with its range of regret per decision [from, below) (the last band's
        below: inf, null in the JSON), its players, their regret per decision and their fitted parameters under each model."""
        ps = [p for p in self.players if p.all_decisions]
        out = []
        for lo, b in zip((0.0, *(x.below for x in SCALE)), SCALE):
            mine = [p for p in ps if p.band == b.name]
            if not mine:
                continue
            models = {}
            for r in (self, *self.alternatives):
                fits = [r.player(p.player) for p in mine]
                models[r.model] = {k: [f.params[k].value for f in fits] for k in MODELS[r.model]}
            out.append({"band": b.name, "from": lo, "below": b.below, "players": [p.player for p in mine],
                        "regret_per_decision": [p.regret_per_decision for p in mine], "params": models})
        return {"definition": "the rating scale of analyse (harness.decisions.analysis.SCALE) of the players' regret per "
                              "decision (exact regret summed over every decision / every decision)",
                "scale": [{"band": b.name, "below": b.below} for b in SCALE], "bands": out}

    def to_dict(self) -> dict[str, Any]:

        d = {
            "format": "yatzy-fit/1", "source": self.source, "rules": self.rules, "model": self.model,
            "confidence": self.confidence, "games": self.games, "median_player": self.median,
            "evidence": {"min_decisions": self.min_decisions, "max_half_width": self.max_half_width,
                         "resolution": RESOLUTION},
            "players": [p.to_dict() for p in self.players],
            "pooled": None if self.pooled is None else self.pooled.to_dict(),
            "bad_games": list(self.bad)}
        if len(self.players) > 1:
            pop = self.population()
            d["population"] = pop
            for p, f in zip(d["players"], self.players):
                p["band"] = f.band
        if self.alternatives or self.choice:
            d["alternatives"] = [r.to_dict() for r in self.alternatives]
            d["model_choice"] = {"seed": self.holdout_seed, "players": [c.to_dict() for c in self.choice]}
        return jsonable(d)


def fit_table(table: DecisionTable, model: str, *, player: str | None = None, confidence: float = 0.95,
              source: str = "", rules: str = "", games: int = 0, pooled: bool = True,
              bad: Sequence[str] = (), min_decisions: int = MIN_DECISIONS, max_half_width: float = MAX_HALF_WIDTH,
              quiet: bool = True, holdout_seed: int = 1, max_memory: int = MAX_MEMORY) -> FitReport:
    """Fit ``model`` (or several: :func:`parse_models`) to every player of a
    :class:`harness.decisions.analysis.DecisionTable` (or ``player`` alone), and to all of them pooled (when
    more than one); several models are also compared player by player on held-out games.
    ``max_memory``: bytes of decisions kept in memory (:class:`DecisionStore`)."""
    models = parse_models(model)
    need = mixes(models)
    store = _Store(myopic="myopic" in need, paced="paced" in need, seed=holdout_seed if len(models) > 1 else None,
                   max_memory=max_memory)
    try:
        store.add(table)
        return store.fit(models, player=player, confidence=confidence, source=source, rules=rules, games=games,
                         pooled=pooled, bad=bad, min_decisions=min_decisions, max_half_width=max_half_width,
                         quiet=quiet)
    finally:
        store.close()


class _Store:
    """The players' decisions of a fit, added a :class:`~harness.decisions.analysis.DecisionTable` (a batch
    of games) at a time: a :class:`DecisionStore` (with the myopic values when a model needs
    them; at most ``max_memory`` bytes of it in memory, the rest in scratch files that
    :meth:`close` removes) and the players' seat-games. Player number c's decisions are stored
    under two codes, 2c for its seat-games in the training half of the held-out split of ``seed``
    (:func:`fold`), 2c + 1 for the others; without a seed (one model: no held-out comparison) all
    under 2c, so that a player's identical decisions merge into one row as before."""

    def __init__(self, myopic: bool = False, seed: int | None = 1, paced: bool = False,
                 max_memory: int = MAX_MEMORY) -> None:
        self.b = DecisionStore(myopic=myopic, paced=paced, max_bytes=max_memory)
        self.code: dict[str, int] = {}
        self.seat_games: dict[str, int] = {}
        self.all_decisions: dict[str, int] = {}  # every decision, one legal option included
        self.seed = seed

    def add(self, table: DecisionTable) -> None:
        for x in table.labels:
            self.code.setdefault(x, len(self.code))
            self.seat_games[x] = self.seat_games.get(x, 0) + 1
        codes = np.array([2 * self.code[x] + (0 if self.seed is None else fold(self.seed, g, int(s)))
                          for x, g, s in zip(table.labels, table.games, table.seats)], dtype=np.int32)
        who = codes[np.asarray(table.seatgame)] if len(codes) else np.zeros(len(table), np.int32)
        per_seat_game = np.bincount(np.asarray(table.seatgame), minlength=len(table.labels)) if len(table) else \
            np.zeros(len(table.labels), np.int64)
        for x, k in zip(table.labels, per_seat_game.tolist()):
            self.all_decisions[x] = self.all_decisions.get(x, 0) + k
        for what, wanted, got in (("myopic", self.b.myopic, table.myopic), ("paced", self.b.paced, table.paced)):
            if wanted and got is None:
                raise ValueError(f"the decision table has no {what} values (walk it with {what}=True)")
        self.b.add(table.values, table.n, table.chosen, table.kind, who,
                   table.myopic if self.b.myopic else None, table.paced if self.b.paced else None)

    def codes(self, names: Sequence[str]) -> list[int]:
        return [2 * self.code[x] + f for x in names for f in (0, 1)]

    def close(self) -> None:
        self.b.close()

    def fit(self, models: Sequence[str], *, player: str | None, confidence: float, source: str, rules: str,
            games: int, pooled: bool, bad: Sequence[str], min_decisions: int, max_half_width: float,
            quiet: bool) -> FitReport:

        names = list(self.code)
        if player is not None:
            if player not in names:
                raise UserError(f"no player {player!r} in the records (players: {', '.join(names)})")
            names = [player]
        pool = pooled and len(names) > 1
        opts = {"min_decisions": min_decisions, "max_half_width": max_half_width}
        per_game = {x: self.b.regret_sum(self.codes([x])) / self.seat_games[x] for x in names}
        several = len(models) > 1
        reports = []
        with bar(STEPS * (len(names) * len(models) + pool) + several * len(names) * len(models), "fitting",
                 "step", quiet=quiet) as shown:
            mine = {x: self.b.blocks([self.code[x]]) for x in names}
            for model in models:
                fits = []
                for name in names:
                    shown.set_postfix_str(f"{name} {model}", refresh=False)
                    fits.append(fit_choices(mine[name], model, name, confidence, self.seat_games[name],
                                            per_game[name], all_decisions=self.all_decisions[name], **opts,
                                            step=shown.update))
                together = None
                if pool and model == models[0]:  # the pool of the first model only
                    shown.set_postfix_str(f"(pooled) {model}", refresh=False)
                    codes = self.codes(names)
                    sgs = sum(self.seat_games[x] for x in names)
                    together = fit_choices(self.b.blocks([self.code[x] for x in names]), model, "(pooled)",
                                           confidence, sgs, self.b.regret_sum(codes) / sgs,
                                           all_decisions=sum(self.all_decisions[x] for x in names), **opts,
                                           step=shown.update)
                # the median player: among the players with enough evidence (a fit below it is no answer)
                ranked = sorted((f.player for f in fits if f.enough), key=lambda x: (per_game[x], x))
                median = ranked[(len(ranked) - 1) // 2] if ranked else None
                reports.append(FitReport(source, rules, model, confidence, games, tuple(fits), together, median,
                                         tuple(bad), min_decisions, max_half_width))
            choice = []
            if several:
                for name in names:
                    train, test = mine[name].where(half=0), mine[name].where(half=1)
                    rows = []
                    for model in models:
                        shown.set_postfix_str(f"{name} {model} held out", refresh=False)
                        rows.append(holdout(train, test, model))
                        shown.update()
                    choice.append(ModelChoice(name, train.decisions, test.decisions, tuple(rows)))
        first = reports[0]
        if not several:
            return first
        return dataclasses.replace(first, alternatives=tuple(reports[1:]), choice=tuple(choice),
                                   holdout_seed=self.seed)


def fit_records(source: ReadResult | RecordStream | Iterable[GameRecord], model: str, *, player: str | None = None,
                confidence: float = 0.95, cache_dir: Any = None, min_decisions: int = MIN_DECISIONS,
                max_half_width: float = MAX_HALF_WIDTH, quiet: bool = True, holdout_seed: int = 1,
                max_memory: int = MAX_MEMORY) -> FitReport:
    """Fit ``model`` (or several, :func:`parse_models`: then compared player by player on the
    held-out half of each player's games, split by ``holdout_seed``) to game records: a
    :class:`harness.records.record.ReadResult`, a :class:`harness.records.record.RecordStream` (a log of any size,
    read a batch at a time) or records of one rule set. The records are walked :data:`BATCH_GAMES`
    games at a time and only what the likelihood needs is kept (:class:`DecisionStore`: the
    distinct decisions, about 110 bytes each, 4 bytes more an option with the myopic values the
    ``mixed`` model needs, 4 more with the paced values of ``paced``; at most ``max_memory`` bytes of them in memory, the rest in a scratch
    file, read a block at a time, removed when the fit ends or fails: memory does not grow with the
    log); ``quiet=False`` shows progress bars on stderr (a stream draws its own while it is read)."""
    models = parse_models(model)
    stream = RecordStream.of(source)
    held = stream.held
    if held is not None and not len(held.games):
        raise UserError(f"{held.source}: no game records to fit")
    need = mixes(models)
    store = _Store(myopic="myopic" in need, paced="paced" in need, seed=holdout_seed if len(models) > 1 else None,
                   max_memory=max_memory)
    games = 0
    try:
        with bar(None if held is None else len(held.games), "decisions", "game", quiet=quiet or held is None,
                 unit_scale=True) as shown:
            for n, table in decision_batches(stream, BATCH_GAMES, cache_dir=cache_dir, myopic="myopic" in need,
                                             paced="paced" in need):
                store.add(table)
                games += n
                shown.update(n)
        assert stream.named is not None
        rules_name, settings = stream.named
        rules = rules_name + "".join(f" {k}={v}" for k, v in sorted(settings.items()))
        return store.fit(models, player=player, confidence=confidence, source=stream.source, rules=rules,
                         games=games, pooled=True, bad=[b.message for b in stream.errors],
                         min_decisions=min_decisions, max_half_width=max_half_width, quiet=quiet)
    finally:
        store.close()


def play_table(analyser: Analyser, specs: Sequence[str], games: int | np.ndarray, seed: int,
               myopic: bool = True, paced: bool = False) -> DecisionTable:
    """The :class:`~harness.decisions.analysis.DecisionTable` of bots ``specs`` playing ``games`` games (a
    count, or the game indices) at one table with ``seed``, straight from the engine's recording
    (no records written; for tests and benchmarks), with the options' myopic values unless not
    ``myopic`` and with their paced values if ``paced``. Each seat-game is labelled with its bot's
    label."""

    rules = analyser.rules
    idx = np.arange(games, dtype=np.int64) if np.isscalar(games) else np.asarray(games, dtype=np.int64)
    bots = [registry.make(s, rules) for s in specs]
    rec = play(rules, bots, idx, seed, record=True).recording
    b, s = rec.boxes.shape[:2]
    _, d = analyser.walk(*arrays_of_recording(rec), decisions=True, myopic=myopic, paced=paced)
    return DecisionTable(**d, labels=tuple(bot.label for _ in range(b) for bot in bots),
                         games=tuple(int(g) for g in idx for _ in range(s)),
                         seats=np.tile(np.arange(s, dtype=np.int16), b))


# ---------------------------------------------------------------------------------------------
# text


def _evidence_of(d: Mapping[str, Any]) -> tuple[int, float]:
    """(min_decisions, max_half_width) a fit file was made with (the defaults for an older file)."""
    e = d.get("evidence") or {}
    return int(e.get("min_decisions", MIN_DECISIONS)), float(e.get("max_half_width", MAX_HALF_WIDTH))


def _too_little(p: Mapping[str, Any], d: Mapping[str, Any]) -> list[str]:
    """Why player ``p`` of fit file ``d`` is too little data (its own list, or :func:`evidence` of
    its figures for a file written before the verdict was)."""
    if "too_little_data" in p:
        return list(p["too_little_data"])
    params = {k: (math.nan if e["value"] is None else e["value"], math.nan if e["ci"][0] is None else e["ci"][0],
                  math.inf if e["ci"][1] is None else e["ci"][1]) for k, e in p["params"].items()}
    return evidence(int(p["decisions"]), params, *_evidence_of(d))


def _verdict(p: Mapping[str, Any], d: Mapping[str, Any]) -> str:
    return TOO_LITTLE if _too_little(p, d) else POOR if p["goodness_of_fit"]["poor"] else OK


def _test(t: Mapping[str, Any] | None) -> str:
    return MISSING if t is None else statistic(t["statistic"], t["df"], t["p"])


#: How each model's choice rule reads in its table's title.
RULES_TEXT = {
    "dial": "P(option) = blunder/n + (1 - blunder) x softmax(value / temperature) over the n legal options",
    "kinds": "P(option) = blunder/n + (1 - blunder) x softmax(value / temperature of its kind: keep or box)",
    "mixed": "utility = (1 - weight) x value + weight x myopic value (the best box score reachable this turn); "
             "P(option) = blunder/n + (1 - blunder) x softmax(utility / temperature of its kind)",
    "paced": "utility = (1 - weight) x value + weight x paced value (the option's value to a player who plays for "
             "the upper bonus as the bonus bot does); P(option) = blunder/n + (1 - blunder) x softmax(utility / "
             "temperature of its kind)",
}


def _estimate(e: Mapping[str, Any]) -> str:
    return sig(e["value"], 3, ci=(e["ci"][0], math.inf if e["ci"][1] is None else e["ci"][1]))  # None: infinite


def tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables (:class:`harness.util.render.Table`) from :meth:`FitReport.to_dict` (one
    model's: the dict itself or one of its ``alternatives``)."""
    params = MODELS[d["model"]]
    family = is_family(d["model"])
    rows, gof = [], []
    every = list(d["players"]) + ([d["pooled"]] if d["pooled"] else [])
    for p in every:
        ests = [_estimate(p["params"][k]) for k in params]
        top = p["top_choice"]
        fit = _verdict(p, d)
        if family:
            rows.append([p["player"], count(p["seat_games"]), count(p["decisions"]), *ests,
                         num(p["loglik_per_decision"], 3), pct(p["top1_agreement"]), fit])
        else:
            rows.append([p["player"], count(p["seat_games"]), count(p["decisions"]), *ests,
                         num(p["loglik_per_decision"], 3),
                         MISSING if top["observed"] is None else f"{pct(top['observed'])} / {pct(top['model'])}",
                         fit, p["spec"]])
        g = p["goodness_of_fit"]
        kinds = []
        for k in DECISION_KINDS:
            x = p["by_kind"][k]
            kinds.append(MISSING if x["regret_per_decision"] is None else
                         f"{num(x['regret_per_decision'], 3)} / {num(x['regret_per_decision_model'], 3)}")
        gof.append([p["player"], _test(g["lr_vs_per_kind"]), _test(g["regret_distribution"]), *kinds])
    conf = ci_level(d["confidence"])
    rule = RULES_TEXT[d["model"] if family else "dial"]
    title = f"Model {d['model']}: {rule}; maximum likelihood, {conf} profile-likelihood intervals"
    richer = ("the same model fitted separately to keeps and boxes (its weight and blunder rate per kind too)"
              if family else "(temperature, blunder) fitted separately to keeps and boxes")
    gof_title = (f"Goodness of fit (POOR when a test gives p < {sig(POOR_P, 6)}): likelihood ratio against {richer}; "
                 "observed vs predicted regret distribution (bins 0, 0.5, 2, 8 points, per kind)")
    if family:
        first = Table(title + " (no bot plays it: no spec)", ["player", "games", "decisions", *params,
                                                              "loglik/decision", "top-1", "fit"], rows)
    else:
        first = Table(title, ["player", "games", "decisions", *params, "loglik/decision", "top choice (obs / model)",
                              "fit", "spec"], rows)
    return [first, Table(gof_title, ["player", "LR vs per-kind", "regret distribution X2",
                                     "keep regret/decision (obs / model)", "box regret/decision (obs / model)"], gof)]


def choice_table(d: Mapping[str, Any]) -> Table:
    """The model choice per player (:class:`ModelChoice`) from :meth:`FitReport.to_dict`."""
    mc = d["model_choice"]
    models = [d["model"], *(a["model"] for a in d["alternatives"])]
    rows = []
    for c in mc["players"]:
        by = {h["model"]: h for h in c["models"]}
        cells = []
        for m in models:
            h = by[m]
            cells += [num(h["loglik_per_decision"], 3), pct(h["top1_agreement"])]
        rows.append([c["player"], f"{count(c['train_decisions'])} / {count(c['test_decisions'])}", *cells,
                     c["chosen"] or MISSING])
    return Table(f"Model choice on held-out games (each player's seat-games split in halves, seed {mc['seed']}: "
                 "fitted on one, judged on the other): log-likelihood per held-out decision (higher is better) and "
                 "top-1 agreement (the share of held-out decisions where the model's most likely option is the one "
                 "played, ties shared); chosen: the best log-likelihood",
                 ["player", "decisions (fit / held out)",
                  *(f"{m} {what}" for m in models for what in ("loglik/decision", "top-1")), "chosen"], rows)


def population_tables(d: Mapping[str, Any]) -> list[Table]:
    """The population picture from :meth:`FitReport.to_dict`: the skill bands that have players,
    their players' regret per decision, and each band's fitted parameters under the last model
    fitted (the richest)."""
    pop = d["population"]
    last = d["alternatives"][-1]["model"] if d.get("alternatives") else d["model"]
    params = MODELS[last]
    rows = []
    for b in pop["bands"]:
        rpd = b["regret_per_decision"]
        cells = []
        for k in params:
            x = b["params"][last][k]
            cells.append(MISSING if not x else f"{sig(float(np.median(x)), 3)} ({sig(min(x), 3)} – {sig(max(x), 3)})")
        hi = "∞" if b["below"] is None else sig(b["below"], 6)
        rows.append([b["band"], f"[{sig(b['from'], 6)}, {hi})", count(len(b["players"])),
                     f"{num(float(np.median(rpd)), 3)} ({num(min(rpd), 3)} – {num(max(rpd), 3)})",
                     *cells, ", ".join(b["players"])])
    return [Table(f"Population: skill bands of the players' regret per decision (points, regret over every decision "
                  f"/ every decision: analyse's rating scale, the bands a levels file targets; model-free); per band, "
                  f"each fitted parameter of model {last} as median (min – max) over its players",
                  ["band", "its regret/decision", "players", "their regret/decision median (min – max)",
                   *params, "who"], rows)]


def evidence_line(min_decisions: int, max_half_width: float) -> str:
    """The minimum of evidence, in words (fit's output header)."""
    return (f"A fit is an answer (ok or POOR) from {min_decisions:,} decisions and with every interval within "
            f"±{100 * max_half_width:g} % of its estimate (of {sig(RESOLUTION['temperature'], 3)} for a temperature, "
            f"{sig(RESOLUTION['blunder'], 3)} for a blunder rate, when the estimate is below); else: too little "
            "data (never the median player, never a calibrate reference)")


def text(d: Mapping[str, Any]) -> str:
    n, bad = d["games"], len(d["bad_games"])
    shown = tables(d) + [t for a in d.get("alternatives", []) for t in tables(a)]
    if d.get("model_choice"):
        shown.append(choice_table(d))
    if d.get("population"):
        shown += population_tables(d)
    out = render_text(shown, [f"Source: {d['source']} ({count(n)} game{'s' * (n != 1)}, {count(bad)} "
                              f"bad game{'s' * (bad != 1)} skipped); rules {d['rules']}",
                              evidence_line(*_evidence_of(d))])
    each = [d, *d.get("alternatives", [])]
    short = [(p["player"] + (f" ({r['model']})" if len(each) > 1 else ""), _too_little(p, r)) for r in each
             for p in list(r["players"]) + ([r["pooled"]] if r["pooled"] else [])]
    short = [(x, why) for x, why in short if why]
    if short:
        out += "\n\ntoo little data:\n" + "\n".join(f"  {x}: {'; '.join(why)}" for x, why in short)
    if d["median_player"] is None and d["players"]:
        out += "\n\nno median player: every player's fit is too little data"
    elif d["median_player"] is not None and len(d["players"]) > 1:
        med = next(p for p in d["players"] if p["player"] == d["median_player"])
        fitted = f"fitted {med['spec']}" if med["spec"] else f"model {d['model']} (no bot plays it)"
        out += f"\n\nmedian player (by regret per game, {num(med['regret_per_game'])}): {med['player']}, {fitted}"
    return out


# ---------------------------------------------------------------------------------------------
# fitted model files (calibrate --against FILE.json)


def reference_of(ref: str) -> tuple[str, str | None]:
    """A reference player for ``calibrate``: a strategy spec as is, or ``FIT.json`` (the file
    ``fit --out`` writes: its median player's fitted spec) or ``FIT.json#PLAYER`` (that player's).
    Returns (spec, where it came from or None)."""
    path, sep, who = ref.partition("#")
    if not path.endswith(".json"):
        return ref, None
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read the fitted model {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a fit file (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not a fit file (invalid JSON: {exc.msg})") from None
    if not isinstance(d, dict) or d.get("format") != "yatzy-fit/1":
        raise UserError(f"{path}: not a fit file (write one with: yatzy-harness fit RECORDS --out {path})")
    name = who if sep else d.get("median_player")
    if name is None:
        raise UserError(f"{path}: no median player, every player's fit is too little data (fit more games, "
                        f"or name one: {path}#PLAYER)")
    for p in d.get("players", []):
        if p.get("player") == name:
            why = _too_little(p, d)
            if why:
                raise UserError(f"{path}: player {name!r} is too little data for a reference ({'; '.join(why)})")
            if p["goodness_of_fit"]["poor"]:
                raise UserError(f"{path}: player {name!r} is a poor fit of {d['model']}: its spec does not play like it")
            if not p.get("spec"):
                raise UserError(f"{path}: model {d['model']} has no bot that plays it (fit a solver model for a "
                                "reference: --model dial)")
            return p["spec"], f"{path}#{name}" + ("" if sep else " (median player)")
    names = ", ".join(str(p.get("player")) for p in d.get("players", []))
    raise UserError(f"{path}: no player {name!r} (players: {names})")


__all__ = ["ALL_MODELS", "FAMILY", "MAX_HALF_WIDTH", "MAX_MEMORY", "MIN_DECISIONS", "MIXES", "MODELS", "RESOLUTION",
           "Blocks", "Choices", "ChoicesBuilder", "DecisionStore", "Estimate", "FamilyLikelihood", "FitReport",
           "Holdout", "Likelihood", "ModelChoice", "PlayerFit", "evidence", "family_intervals", "family_mle",
           "fit_choices", "fit_records", "fit_table", "fold", "holdout", "mixes", "mle", "parse_model", "parse_models",
           "reference_of", "text"]

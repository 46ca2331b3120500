"""The data of a fit: a player's informative decisions as :class:`Choices` (each legal option's
regret, flat in CSR form, identical decisions merged into counted rows), and
:class:`ChoicesBuilder`, the in-memory store that builds them a batch of a
:class:`~harness.decisions.analysis.DecisionTable` at a time."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

import harness.players.fit.kernels as FK
from harness.decisions.analysis import DecisionTable
from harness.decisions.positions import TIE
from harness.players.fit.models import MIXES


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
    who (D,) int32: each row's player code in a fit's store
    (:class:`~harness.players.fit.store.DecisionStore`; its lowest bit the half of the held-out
    split), or None.
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
    def of_arrays(
        cls,
        values: np.ndarray,
        n: np.ndarray,
        chosen: np.ndarray,
        kind: np.ndarray,
        dtype: Any = np.float32,
        myopic: np.ndarray | None = None,
        paced: np.ndarray | None = None,
    ) -> Choices:
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
        return cls.of_arrays(
            table.values[sel],
            table.n[sel],
            table.chosen[sel],
            table.kind[sel],
            dtype,
            None if table.myopic is None else table.myopic[sel],
            None if table.paced is None else table.paced[sel],
        )

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
        return Choices(
            self.ptr,
            self.r,
            self.rc[sel],
            self.u[sel],
            self.kind[sel],
            self.rows[sel],
            self.w[sel],
            self.g,
            None if self.gc is None else self.gc[sel],
            self.h,
            None if self.hc is None else self.hc[sel],
            None if self.who is None else self.who[sel],
        )

    def compact(self) -> Choices:
        """These rows with only their own options, in their order (ptr from 0, rows 0..D-1)."""
        lo = self.ptr[self.rows]
        n = self.ptr[self.rows + 1] - lo
        ptr = np.zeros(len(n) + 1, np.int64)
        np.cumsum(n, out=ptr[1:])
        opt = np.repeat(lo - ptr[:-1], n) + np.arange(ptr[-1])
        return Choices(
            ptr,
            self.r[opt],
            self.rc,
            self.u,
            self.kind,
            None,
            self.w,
            None if self.g is None else self.g[opt],
            self.gc,
            None if self.h is None else self.h[opt],
            self.hc,
            self.who,
        )

    @property
    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (
                self.ptr,
                self.r,
                self.rc,
                self.u,
                self.kind,
                self.rows,
                self.w,
                self.g,
                self.gc,
                self.h,
                self.hc,
                self.who,
            )
            if a is not None
        )


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
        return self.a[: self.n]


class ChoicesBuilder:
    """A store of :class:`Choices` built batch by batch, in memory (a fit's
    :class:`~harness.players.fit.store.DecisionStore` fills one per segment of a log): only what the
    likelihood needs is kept, the informative decisions' option regrets in CSR form, sorted and of
    ``dtype`` (float32: 4 bytes an option, 4 more with each of the myopic and the paced values),
    identical decisions of a player merged into one row and a count
    (:func:`harness.players.fit.kernels.merge`, a hash table of the rows), and each player's summed regret
    over every decision (the model-free regret per game). ``add`` takes a batch of a
    :class:`~harness.decisions.analysis.DecisionTable`'s columns and each decision's player code.

    Memory: per row, its options (4 bytes each, 16.6 on average on scandinavian) and 33 bytes
    (ptr, rc, kind, player, count, hash), plus 16 to 32 of hash table while the store is built
    (dropped, and the buffers trimmed to what they hold, by :meth:`choices`); nothing per merged
    decision. It grows with what it is given: :class:`~harness.players.fit.store.DecisionStore`
    bounds it by segments."""

    def __init__(
        self, capacity: int = 1024, dtype: Any = np.float32, myopic: bool = False, paced: bool = False
    ) -> None:
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
        self.regret = np.zeros(
            0
        )  # per player code: best value - chosen value over every decision, as the sums count it

    @property
    def rows(self) -> int:
        return self.kind.n

    #: A batch is added this many decisions at a time (its per-option temporaries stay this small).
    ADD_ROWS = 1 << 15

    def add(
        self,
        values: np.ndarray,
        n: np.ndarray,
        chosen: np.ndarray,
        kind: np.ndarray,
        who: np.ndarray,
        myopic: np.ndarray | None = None,
        paced: np.ndarray | None = None,
    ) -> None:
        if self.ptr.viewed:
            raise RuntimeError("a store takes no decisions once its choices were asked for")
        if self.myopic and myopic is None:
            raise ValueError("a store of myopic values takes decisions with their myopic values")
        if self.paced and paced is None:
            raise ValueError("a store of paced values takes decisions with their paced values")
        for a in range(0, len(n), self.ADD_ROWS):
            s = slice(a, a + self.ADD_ROWS)
            self._add(
                values[s],
                n[s],
                chosen[s],
                kind[s],
                who[s],
                None if myopic is None else myopic[s],
                None if paced is None else paced[s],
            )

    def _add(
        self,
        values: np.ndarray,
        n: np.ndarray,
        chosen: np.ndarray,
        kind: np.ndarray,
        who: np.ndarray,
        myopic: np.ndarray | None,
        paced: np.ndarray | None,
    ) -> None:
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
                return (
                    np.take_along_axis(xr, order, axis=1).astype(self.dtype)[legal].view(self.bits_type),
                    xr[np.arange(len(n)), chosen].astype(self.dtype).view(self.bits_type),
                )

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
        rows, m = FK.merge(
            bptr,
            opts,
            rc.astype(self.dtype).view(self.bits_type),
            np.asarray(kind, np.int8),
            who[keep],
            self.table,
            self.hashes.reserve(need),
            self.ptr.reserve(need + 1),
            self.r.reserve(self.r.n + len(opts)),
            self.rc.reserve(need),
            self.kind.reserve(need),
            self.who.reserve(need),
            self.w.reserve(need),
            self.rows,
            self.r.n,
            gopts,
            gc,
            self.g.reserve(self.g.n + len(gopts)) if self.myopic else self.g.a,
            self.gc.reserve(need) if self.myopic else self.gc.a,
            hopts,
            hc,
            self.h.reserve(self.h.n + len(hopts)) if self.paced else self.h.a,
            self.hc.reserve(need) if self.paced else self.hc.a,
        )
        for b in (
            (self.kind, self.rc, self.who, self.w, self.hashes)
            + ((self.gc,) if self.myopic else ())
            + ((self.hc,) if self.paced else ())
        ):
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
        return Choices(
            ptr,
            self.r.view().view(self.dtype),
            self.rc.view().view(self.dtype),
            1.0 / np.diff(ptr),
            self.kind.view(),
            None,
            self.w.view(),
            g,
            gc,
            h,
            hc,
            self.who.view(),
        )

    @property
    def nbytes(self) -> int:
        """The store's bytes (buffers as allocated, hash table included)."""
        return (
            sum(
                b.a.nbytes
                for b in (
                    self.r,
                    self.ptr,
                    self.rc,
                    self.kind,
                    self.who,
                    self.w,
                    self.hashes,
                    self.g,
                    self.gc,
                    self.h,
                    self.hc,
                )
            )
            + self.table.nbytes
        )


def _regrets(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """(D, W) best legal value - each value, exactly 0 within :data:`TIE` of the best, +inf past the legal options."""
    v = np.where(legal, values, -np.inf)
    reg = v.max(axis=1, initial=-np.inf)[:, None] - v
    reg[legal & (reg <= TIE)] = 0.0
    return reg

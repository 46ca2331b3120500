"""Decisions in blocks: a fit's store (:class:`DecisionStore`) keeps the players' decisions in
memory within a budget and beyond it in a scratch file, and every pass over them walks
:class:`Blocks`, a block at a time, on the cores (:func:`_each`), its sums added exactly
(:func:`_total`) so that a fit's figures depend neither on the thread count nor on where the
blocks are kept."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from harness.exact.solver import n_threads, run_blocks
from harness.players.fit.data import Choices, ChoicesBuilder
from harness.players.fit.models import MIXES


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
    also when it fails). Each file is unlinked as it is open: what is written lives in the
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
        return Choices(
            a["ptr"],
            a["r"],
            a["rc"],
            1.0 / np.diff(a["ptr"]),
            a["kind"],
            None,
            a["w"],
            a.get("g"),
            a.get("gc"),
            a.get("h"),
            a.get("hc"),
            a.get("who"),
        )

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

    def __init__(
        self,
        parts: Sequence[_Part],
        myopic: bool,
        kind: int | None = None,
        half: int | None = None,
        scratch: _Scratch | None = None,
        paced: bool = False,
        model: str | None = None,
    ) -> None:
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
        return Blocks(
            self.parts,
            self.myopic,
            self.kind if kind is None else kind,
            self.half if half is None else half,
            self.scratch,
            self.paced,
            self.model,
        )

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

    def __init__(
        self, myopic: bool = False, max_bytes: int = MAX_MEMORY, segment_rows: int | None = None, paced: bool = False
    ) -> None:
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
        return Blocks(
            [p for c in players for p in self.parts.get(c, ())], self.myopic, scratch=self.scratch, paced=self.paced
        )

    def regret_sum(self, codes: Sequence[int]) -> float:
        """The summed regret of every decision of player ``codes``."""
        self.finish()
        return float(sum(self.regret[c] for c in codes if c < len(self.regret)))

    def close(self) -> None:
        """Remove the scratch files (the store's blocks kept on disk are gone)."""
        if self.scratch is not None:
            self.scratch.close()
            self.scratch = None

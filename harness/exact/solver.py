"""Exact solitaire-optimal play: value tables by backward induction, cached on disk, and exact figures.

Public API (used by the ``solver`` bot, ``compare`` checks and the reports)::

    from harness.exact.solver import solve, exact_distribution, one_turn_odds
    sol = solve(rules, cache_dir=None)    # -> Solution, from memory, the disk cache, or a fresh solve
    sol.expected_score                    # optimal expected final score of one column (float)
    sol.value(filled, upper, flag)        # expected future score from the start of a turn in a state
    sol.states, sol.seconds, sol.cached   # size of the table, time the solve took, loaded from disk?
    fig = exact_distribution(rules)       # -> Figures: expected_score, std, p_bonus, percentiles,
                                          #    distribution (P(score = s)), all exact (forward pass)
    fig.to_json()                         # what ``yatzy-harness solve --json`` prints
    policy_table(sol)                     # -> (states, rerolls, rolls) uint8: the T=0 keep of every
                                          #    state and roll, cached beside the table (long runs)
    one_turn_odds(rules)                  # -> {lower box: P(requirement met within one turn)}
    clear_memo()                          # forget the tables held by this process

The state of one column at the start of a turn is (filled boxes, upper subtotal capped at the bonus
threshold, flag); ``flag`` (the key box holds a non-zero score) exists only for rule sets with a key
box (``yahtzee``: +100 and joker; ``generala``: double generala). Its value is the expected sum of
the boxes still to fill, the upper bonus if it is still to be crossed, and extra yatzy bonuses,
under optimal play. Every score comes from :func:`harness.game.scoring.score_options`, so servida,
the forced joker, forced order and extra bonuses are exactly the engine's. The upper subtotal only
matters below the threshold, so it is capped there and only subtotals reachable with the filled
upper boxes get a state; with the bonus worth 0 (``generala``) or a threshold of 0 it is dropped.
Forced order leaves one reachable sheet per layer.

Optimal play is deterministic: ties between equal-valued actions follow the fixed rule of
:mod:`harness.exact.kernels.solver` (first box in sheet order; stopping before rerolling; the larger keep).
The forward pass of :func:`exact_distribution` and the bot use the very same decisions, so the
exact distribution is the distribution of the bot's scores.

Parallelism: a layer (states with the same number of boxes filled) only reads the next layer, so
its items are split between threads running GIL-free numba kernels; numba's own ``prange`` pools
compile several times slower and are not fork-safe (the runner forks workers from this process).
A forked worker solves on one thread.

Saved rolls (``saved_rolls``) are not part of the state: the table is the value of the game with
ordinary turns, and the bot plays longer turns optimally against those values (see
strategies/solver.py).

Disk cache: one file per rule set, named by :attr:`RuleSet.digest` and :data:`FORMAT`, in
``--cache-dir``, ``$YATZY_HARNESS_CACHE``, ``$XDG_CACHE_HOME/yatzy-harness`` or
``~/.cache/yatzy-harness``, written atomically (temporary file, then rename). A 4 KiB JSON header
(magic, format, digest, dtype, shape, crc32) is checked on every load; a file that fails any check
is rebuilt, never trusted. Values are float64: the 5-dice tables are small (scandinavian 11 MiB)
and maxi's 428 MiB still loads in about a second, and float64 keeps every decision bit-identical to
a fresh solve. The exact figures are cached beside the table (``.figures.json``), and so is the
whole keep policy once a long run has needed it (``.policy.bin``, same header and checks).

Exact figures: the forward pass carries each state's probability and the window of accumulated
scores it can hold, two layers at a time. Up to ``--max-memory`` they stay in memory; beyond it
(maxi: 32.5 GiB) in memory-mapped files under ``--scratch-dir``, unlinked as soon as they are
mapped, up to ``--max-disk`` and the free space; beyond both only the moments are computed.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import shutil
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from harness.exact.kernels import solver as K
from harness.util.cache import default_cache_dir
from harness.game.dice import Dice
from harness.util.errors import UserError
from harness.util import progress
from harness.util.progress import bar
from harness.game.rules import RuleSet
from harness.game.scoring import context
from harness.game.turn import turn_policy

log = logging.getLogger(__name__)

#: Version of the solver's file format and state layout; bump when either changes.
FORMAT = 1
_MAGIC = "yatzy-harness-solver"
_HEADER = 4096
#: Largest sheet the solver accepts (2**24 masks: the layout alone would take several GiB beyond).
MAX_BOXES = 24

_IN_CHILD = False
_POOL: ThreadPoolExecutor | None = None
_POOL_THREADS = 0  # the threads _POOL was made with


def _mark_child() -> None:
    global _IN_CHILD, _POOL, _POOL_THREADS
    _IN_CHILD = True
    _POOL, _POOL_THREADS = None, 0  # its threads did not survive the fork


# a forked worker shares the cores with its siblings: it solves on one thread
os.register_at_fork(after_in_child=_mark_child)


# ---------------------------------------------------------------------------------------------
# layout


@dataclass(frozen=True, eq=False)
class Plan:
    """The state layout of a rule set (see :mod:`harness.exact.kernels.solver`).

    item_mask, item_flag: (I,) int64 work items (one per (mask, flag)), ordered by layer;
    layer_items, layer_states: (NB+2,) int64 where each layer's items / states start.
    bonus0: bonus earned before play (threshold 0).
    """

    layout: K.Layout
    dice: K.DiceK
    item_mask: np.ndarray
    item_flag: np.ndarray
    layer_items: np.ndarray
    layer_states: np.ndarray
    n_states: int
    bonus0: int

    @property
    def full_mask(self) -> int:
        return (1 << self.layout.n_boxes) - 1

    def states(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(mask, flag, slot, upper subtotal) of every state, (states,) int64: what the layout packs
        into a state's index."""
        lay = self.layout
        item = np.repeat(np.arange(len(self.item_mask)), lay.nslot[lay.umask_of[self.item_mask]].astype(np.int64))
        mask, flag = self.item_mask[item], self.item_flag[item]
        slot = np.arange(self.n_states) - lay.base[self.item_mask * lay.n_flags + self.item_flag][item]
        return mask, flag, slot, lay.ulist[lay.umask_of[mask], slot].astype(np.int64)


def dice_tables(d: Dice, rerolls: int) -> K.DiceK:
    """The one-die-at-a-time tables of :class:`harness.exact.kernels.solver.DiceK`."""
    kc = d.keep_counts.astype(np.int64)
    n_small = int(np.sum(d.keep_size < d.n))
    if not (np.all(np.diff(d.keep_size) >= 0) and np.array_equal(d.roll_as_keep, n_small + np.arange(d.n_rolls))):
        raise AssertionError("the kernels need keeps sorted by size, the whole rolls last in roll order")
    add = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    rem = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    eye = np.eye(6, dtype=np.int64)
    for f in range(6):
        small = d.keep_size < d.n
        add[small, f] = d.keep_index(kc[small] + eye[f])
        has = kc[:, f] > 0
        rem[has, f] = d.keep_index(kc[has] - eye[f])
    sub_pos = np.full((d.n_rolls, d.n_keeps), -1, dtype=np.int16)
    for r in range(d.n_rolls):
        subs = d.sub_keep[d.sub_ptr[r]:d.sub_ptr[r + 1]]
        sub_pos[r, subs] = np.arange(len(subs))
    faces = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    n_faces = np.sum(rem >= 0, axis=1).astype(np.int32)
    for k in range(d.n_keeps):
        faces[k, :n_faces[k]] = rem[k][rem[k] >= 0]
    return K.DiceK(d.roll_prob.astype(np.float64), d.roll_as_keep.astype(np.int32), add, rem,
                   d.sub_ptr.astype(np.int64), d.sub_keep.astype(np.int32), sub_pos, faces, n_faces, n_small,
                   int(rerolls))


def _box_values(rules: RuleSet, b: int) -> np.ndarray:
    """Every score box b can take (0 included: a box may always be scratched)."""
    vals = np.concatenate([rules.table[:, b], rules.table_first[:, b], [0]])
    if rules.joker_value[b] >= 0:
        vals = np.append(vals, rules.joker_value[b])
    return np.unique(vals.astype(np.int64))


_PLANS: dict[str, Plan] = {}


def build_plan(rules: RuleSet) -> Plan:
    """Work out which states exist and where each one lives in the value array (once per rule set
    and process: the solution and each target table of a rule set share one, ~0.03 s each)."""
    hit = _PLANS.get(rules.digest)
    if hit is None:
        hit = _PLANS[rules.digest] = _build_plan(rules)
    return hit


def _build_plan(rules: RuleSet) -> Plan:
    nbx = rules.n_boxes
    if nbx > MAX_BOXES:
        raise UserError(f"rule set {rules.name!r}: the solver handles at most {MAX_BOXES} boxes, got {nbx}")
    bonus0 = 0
    if rules.bonus_value == 0:
        T, bonus = 0, 0  # the upper subtotal never matters
    elif rules.threshold == 0:
        T, bonus, bonus0 = 0, 0, int(rules.bonus_value)  # earned before the first roll
    else:
        T, bonus = int(rules.threshold), int(rules.bonus_value)
    upidx = np.flatnonzero(rules.upper_face > 0)
    n_up = len(upidx)
    n_um = 1 << n_up
    full_um = n_um - 1
    reach: list[np.ndarray] = []
    up_vals = [_box_values(rules, b) for b in upidx]
    for um in range(n_um):
        s = np.zeros(1, dtype=np.int64)
        for j, vals in enumerate(up_vals):
            if (um >> j) & 1:
                s = np.unique(np.minimum(s[:, None] + vals[None, :], T))
        reach.append(s if um != full_um else np.zeros(1, dtype=np.int64))
    nslot = np.array([len(s) for s in reach], dtype=np.int32)
    slot = np.full((n_um, T + 1), -1, dtype=np.int32)
    ulist = np.zeros((n_um, int(nslot.max())), dtype=np.int32)
    for um, s in enumerate(reach):
        slot[um, s] = np.arange(len(s))
        ulist[um, : len(s)] = s
    slot[full_um, :] = 0  # every upper box filled: one state whatever the subtotal

    masks = np.arange(1 << nbx, dtype=np.int64)
    umask_of = np.zeros(1 << nbx, dtype=np.int32)
    for j, b in enumerate(upidx):
        umask_of |= (((masks >> b) & 1) << j).astype(np.int32)
    if rules.forced:
        valid = (1 << np.arange(nbx + 1, dtype=np.int64)) - 1  # strictly top to bottom: prefixes only
    else:
        valid = masks
    pop = np.zeros(len(valid), dtype=np.int64)
    for b in range(nbx):
        pop += (valid >> b) & 1
    order = np.lexsort((valid, pop))
    valid, pop = valid[order], pop[order]
    F = 2 if rules.key_box >= 0 else 1
    if F == 2:
        has_key = ((valid >> rules.key_box) & 1).astype(bool)
        reps = 1 + has_key
        item_mask = np.repeat(valid, reps)
        item_pop = np.repeat(pop, reps)
        item_flag = np.zeros(len(item_mask), dtype=np.int64)
        starts = np.cumsum(reps) - reps
        item_flag[starts[has_key] + 1] = 1
    else:
        item_mask, item_pop = valid, pop
        item_flag = np.zeros(len(item_mask), dtype=np.int64)
    sizes = nslot[umask_of[item_mask]].astype(np.int64)
    offsets = np.cumsum(sizes) - sizes
    base = np.full((1 << nbx) * F, -1, dtype=np.int64)
    base[item_mask * F + item_flag] = offsets
    layer_items = np.searchsorted(item_pop, np.arange(nbx + 2)).astype(np.int64)
    layer_states = np.append(offsets, offsets[-1] + sizes[-1])[layer_items]
    vals = [_box_values(rules, b) for b in range(nbx)]
    box_nvals = np.array([len(v) for v in vals], dtype=np.int32)
    box_vals = np.zeros((nbx, int(box_nvals.max())), dtype=np.int64)
    box_vidx = np.full((nbx, int(max(v.max() for v in vals)) + 1), -1, dtype=np.int32)
    for b, v in enumerate(vals):
        box_vals[b, : len(v)] = v
        box_vidx[b, v] = np.arange(len(v))
    is_upper = rules.upper_face > 0
    wrow = np.zeros(nbx, dtype=np.int32)
    n_wrows = 0
    for b in np.flatnonzero(is_upper):
        wrow[b] = n_wrows
        n_wrows += len(vals[b])
    layout = K.Layout(base, umask_of, nslot, slot, ulist, is_upper, rules.box_max().astype(np.int32),
                      box_vals, box_nvals, box_vidx, wrow, n_wrows, F, full_um, T, bonus,
                      int(rules.key_box), nbx, bool(rules.has_servida))
    return Plan(layout, dice_tables(rules.dice, rules.rolls_per_turn - 1), item_mask, item_flag,
                layer_items, layer_states, int(sizes.sum()), bonus0)


# ---------------------------------------------------------------------------------------------
# the solution and its cache


@dataclass(frozen=True, eq=False)
class Solution:
    """The solved value table of one rule set.

    values: (states,) float64 expected future score from the start of a turn in each state
    (see :class:`Plan` for the layout); ``expected_score`` includes a bonus earned before play.
    """

    rules: RuleSet
    plan: Plan
    values: np.ndarray
    expected_score: float
    seconds: float
    cached: bool
    path: Path | None = field(default=None)

    @property
    def states(self) -> int:
        return self.plan.n_states

    def index(self, filled: int, upper: int, flag: bool = False) -> int:
        """Flat index of a state (``upper`` uncapped is fine)."""
        lay = self.plan.layout
        if lay.base[filled * lay.n_flags + int(bool(flag))] < 0:
            raise ValueError(f"no state with filled={filled:#x} flag={flag} in {self.rules.name}")
        u = min(int(upper), lay.threshold)
        s = lay.slot[lay.umask_of[filled], u]
        if s < 0:
            raise ValueError(f"upper subtotal {upper} cannot be reached with filled={filled:#x}")
        return int(lay.base[filled * lay.n_flags + int(bool(flag))] + s)

    def value(self, filled: int, upper: int = 0, flag: bool = False) -> float:
        """Expected future score (boxes still open, a bonus still to cross, extras) under optimal play."""
        return float(self.values[self.index(filled, upper, flag)])


def cache_path(rules: RuleSet, cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache file of a rule set's value table."""
    d = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return d / f"solve-{rules.digest[:40]}-v{FORMAT}.bin"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _crc(a: np.ndarray) -> int:
    return zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B"))


def save_table(path: Path, rules: RuleSet, values: np.ndarray, meta: dict[str, Any]) -> None:
    """Write a value table atomically (temporary file in the same directory, then rename)."""
    header = {"magic": _MAGIC, "format": FORMAT, "digest": rules.digest, "dtype": str(values.dtype),
              "shape": list(values.shape), "crc32": _crc(values), **meta}
    raw = json.dumps(header).encode()
    if len(raw) >= _HEADER:
        raise AssertionError("solver cache header too long")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw.ljust(_HEADER, b" "))
            fh.write(memoryview(np.ascontiguousarray(values)).cast("B"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a cache is shared like any file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_table_header(path: Path) -> dict[str, Any]:
    """The JSON header of a file :func:`save_table` wrote (not checked: :func:`load_table` checks it)."""
    with open(path, "rb") as fh:
        return json.loads(fh.read(_HEADER).decode())


def load_table(path: Path, rules: RuleSet, shape: int | tuple[int, ...],
               dtype: Any = np.float64, *, mmap: bool = False) -> tuple[np.ndarray, dict[str, Any]] | None:
    """The cached array if the file is complete and matches the rules; None (with a warning) if not.

    ``mmap``: map the file read-only instead of reading it (large tables: the pages are shared with
    forked workers and other processes). A mapped table's checksum is read once per file: a good
    check leaves a stamp beside it (:func:`_stamp`: the file's inode, size, modification time and
    checksum), and a later load whose file still has that inode, size and time trusts it without
    reading every page (the "ev" target table is 999 MiB on scandinavian: 0.5 s of CPU and its
    whole size in resident memory for every `review`). A table written again, or touched, is
    checked again."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER)
            if len(head) < _HEADER:
                raise ValueError("truncated header")
            header = json.loads(head.decode())
            if header.get("magic") != _MAGIC or header.get("format") != FORMAT:
                raise ValueError("not a solver table of this format")
            if header.get("digest") != rules.digest:
                raise ValueError("made for other rules")
            if header.get("dtype") != dtype.name or header.get("shape") != list(shape):
                raise ValueError(f"shape/dtype {header.get('shape')}/{header.get('dtype')} "
                                 f"!= {list(shape)}/{dtype.name}")
            if mmap:
                st = os.fstat(fh.fileno())
                size = st.st_size - _HEADER
                if size != count * dtype.itemsize:
                    raise ValueError(f"it has {size} bytes of values, {count * dtype.itemsize} expected")
                values = np.memmap(path, dtype=dtype, mode="r", offset=_HEADER, shape=(count,)).view(np.ndarray)
            else:
                values = np.fromfile(fh, dtype=dtype, count=count + 1)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        log.warning("solver cache %s is unusable (%s): rebuilding it", path, exc)
        return None
    if values.size != count:
        log.warning("solver cache %s has %d values, expected %d: rebuilding it", path, values.size, count)
        return None
    stamp = _stamp(st, header.get("crc32")) if mmap else None
    if stamp is None or _read_stamp(path) != stamp:
        if _crc(values) != header.get("crc32"):
            log.warning("solver cache %s fails its checksum: rebuilding it", path)
            return None
        if stamp is not None and time.time_ns() - st.st_mtime_ns > _STAMP_AGE_NS:
            _write_stamp(path, stamp)
    return values.reshape(shape), header


#: A file modified this recently gets no stamp: a file's times move in steps of the kernel's clock
#: tick, so a change within a tick of the check would keep the time the stamp holds (git's "racy
#: index" rule). The next load checks it and stamps it.
_STAMP_AGE_NS = 2_000_000_000


def _stamp(st: os.stat_result, crc: Any) -> str:
    """What a checked table's stamp holds: the file's identity at the check and its checksum."""
    return f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {crc}"


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _read_stamp(path: Path) -> str | None:
    try:
        return _stamp_path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _write_stamp(path: Path, stamp: str) -> None:
    """Leave the stamp of a good check (atomically); a cache directory that cannot take it only
    costs the next load its checksum."""
    target = _stamp_path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            fh.write(stamp + "\n")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        log.debug("no checksum stamp for %s (%s)", path, exc)


def n_threads() -> int:
    """Threads for the solve and the forward pass: the usable cores (1 in a forked worker;
    ``$YATZY_HARNESS_THREADS`` where set, as on a Dask worker: :mod:`harness.exact.cluster`)."""
    if _IN_CHILD:
        return 1
    env = os.environ.get("YATZY_HARNESS_THREADS")  # a Dask worker's threads (harness.exact.cluster.THREADS_ENV)
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def split_range(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    """[lo, hi) cut into at most ``parts`` blocks (lo, hi) of about equal size, empty ones left out."""
    edges = np.linspace(lo, hi, parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges, edges[1:]) if b > a]


def run_blocks(fn, blocks: list[tuple[int, int]], threads: int) -> None:
    """fn(lo, hi) for every block, on ``threads`` threads (the kernels release the GIL)."""
    global _POOL, _POOL_THREADS
    if threads <= 1 or len(blocks) <= 1:
        for a, b in blocks:
            fn(a, b)
        return
    if _POOL is None or _POOL_THREADS < threads:
        _POOL, _POOL_THREADS = ThreadPoolExecutor(threads, thread_name_prefix="yatzy-solver"), threads
    for f in [_POOL.submit(fn, a, b) for a, b in blocks]:
        f.result()


def solve_values(rules: RuleSet, plan: Plan | None = None, threads: int | None = None) -> np.ndarray:
    """Backward induction over every state, layer by layer (no cache). Returns (states,) float64.

    The items of one layer read only the next layer, so a layer is split between threads; the
    kernels are serial numba code that releases the GIL (numba's own thread pools compile slowly
    and are not fork-safe, and the runner forks workers from this process).
    """
    plan = plan or build_plan(rules)
    threads = threads or n_threads()
    ctx = context(rules)
    V = np.zeros(plan.n_states)
    ro = V.view()
    ro.setflags(write=False)
    lay, dk, full = plan.layout, plan.dice, plan.full_mask

    def run(a: int, b: int) -> None:
        K.solve_items(ctx, lay, dk, ro, V, plan.item_mask, plan.item_flag, a, b, full)

    items = int(plan.layer_items[-1])
    show = progress.enabled() and plan.n_states > 100_000  # a table that takes seconds (scandinavian: 4 s)
    if show:
        progress.say(f"solving {rules.name}'s value table, once ({plan.n_states:,} states, "
                     f"{8 * plan.n_states / 2**20:,.0f} MiB; later runs load it from the cache)")
    with progress.bar(items, f"solving {rules.name}", "item", quiet=not show, unit_scale=True) as b:
        for k in range(rules.n_boxes, -1, -1):
            lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
            # blocks interleave cheap and costly items well enough; 4 per thread evens out the rest
            run_blocks(run, split_range(lo, hi, 4 * threads if hi - lo > 64 else 1), threads)
            b.update(hi - lo)
    return V


_MEMO: dict[tuple[str, str], Solution] = {}


def clear_memo() -> None:
    """Forget the tables solved or loaded in this process (the disk cache is untouched)."""
    _MEMO.clear()
    _POLICY.clear()
    _PLANS.clear()


def is_solved(rules: RuleSet, cache_dir: str | os.PathLike | None = None) -> bool:
    """Whether :func:`solve` would answer from memory or the disk cache (no fresh solve)."""
    path = cache_path(rules, cache_dir)
    return (rules.digest, str(path)) in _MEMO or path.is_file()


def solve(rules: RuleSet, cache_dir: str | os.PathLike | None = None, *, use_cache: bool = True) -> Solution:
    """The solved table of ``rules``: from this process's memory, the disk cache, or a fresh solve.

    A fresh solve is written to the cache (a cache directory that cannot be written only logs a
    warning). ``use_cache=False`` ignores and does not write the disk cache.
    """
    path = cache_path(rules, cache_dir)
    key = (rules.digest, str(path) if use_cache else "")
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    t0 = time.perf_counter()
    plan = build_plan(rules)
    # mapped, as the target tables are: a review touches a few of its pages (scandinavian's table is
    # 11 MB: reading and checksumming it at every load was ~0.03 s), and forked workers share them
    loaded = load_table(path, rules, plan.n_states, mmap=True) if use_cache else None
    if loaded is not None:
        values, header = loaded
        sol = Solution(rules, plan, values, float(values[0]) + plan.bonus0,
                       float(header.get("seconds", time.perf_counter() - t0)), True, path)
    else:
        values = solve_values(rules, plan)
        seconds = time.perf_counter() - t0
        sol = Solution(rules, plan, values, float(values[0]) + plan.bonus0, seconds, False,
                       path if use_cache else None)
        if use_cache:
            try:
                save_table(path, rules, values, {"rules": rules.name, "seconds": round(seconds, 3),
                                                  "expected_score": sol.expected_score})
            except OSError as exc:
                log.warning("cannot write solver cache %s: %s", path, exc)
    values.setflags(write=False)
    _MEMO[key] = sol
    return sol


# ---------------------------------------------------------------------------------------------
# the whole keep policy

#: Largest whole keep policy worth computing (scandinavian 705 MB, yahtzee 264 MB; maxi's would be
#: 52 GB and its bots keep to per-state caches).
POLICY_MAX_BYTES = 1 << 30
_POLICY: dict[tuple[str, str], np.ndarray] = {}


def policy_shape(sol: Solution) -> tuple[int, int, int]:
    """(states, rerolls, rolls) of :func:`policy_table`."""
    return sol.states, sol.rules.rolls_per_turn - 1, sol.rules.dice.n_rolls


def policy_table(sol: Solution, *, compute: bool = True) -> np.ndarray | None:
    """The T=0 keep of every state, reroll stage and roll: (states, rerolls, rolls) uint8, the keep's
    position among the roll's sub-keeps (``dice.sub_keep[dice.sub_ptr[roll] + code]``), stage j
    (rerolls left) at row j - 1. The same keeps as the bot's per-state caches, to the last tie.

    From this process's memory, else from the disk cache beside the value table (checked like the
    table), else computed when ``compute`` (about a solve's time; written to the cache). None when
    the table would exceed :data:`POLICY_MAX_BYTES`, a turn has no reroll, or it is neither cached
    nor to be computed.
    """
    shape = policy_shape(sol)
    if shape[1] == 0 or int(np.prod(shape)) > POLICY_MAX_BYTES:
        return None
    path = sol.path.with_suffix(".policy.bin") if sol.path is not None else None
    key = (sol.rules.digest, str(path))
    hit = _POLICY.get(key)
    if hit is not None:
        return hit
    loaded = load_table(path, sol.rules, shape, np.uint8) if path is not None else None
    if loaded is not None:
        codes = loaded[0]
    elif not compute:
        return None
    else:
        t0 = time.perf_counter()
        plan, rules = sol.plan, sol.rules
        codes = np.zeros(shape, dtype=np.uint8)
        ctx = context(rules)
        threads = n_threads()

        def run(a: int, b: int) -> None:
            K.policy_items(ctx, plan.layout, plan.dice, sol.values, plan.item_mask, plan.item_flag, a, b, codes)

        n_items = len(plan.item_mask)
        run_blocks(run, split_range(0, n_items, 16 * threads if n_items > 256 else 1), threads)
        log.info("keep policy of %s: %d states in %.1f s", rules.name, sol.states, time.perf_counter() - t0)
        if path is not None:
            try:
                save_table(path, rules, codes, {"rules": rules.name, "what": "keep policy"})
            except OSError as exc:
                log.warning("cannot write solver cache %s: %s", path, exc)
    codes.setflags(write=False)
    _POLICY[key] = codes
    return codes


# ---------------------------------------------------------------------------------------------
# exact figures: forward pass of the optimal policy


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
        return {"rules": self.rules, "digest": self.digest, "expected_score": self.expected_score,
                "std": self.std, "p_bonus": self.p_bonus, "percentiles": self.percentiles,
                "states": self.states, "seconds": self.seconds, "solve_seconds": self.solve_seconds,
                "cached": self.cached, "forward_mean": self.forward_mean, "distribution_storage": self.storage}


def outcome_codes(rules: RuleSet, lay: K.Layout) -> K.Outcomes:
    """The codes of one turn's outcomes (box, points, extra bonus) of a layout (:class:`K.Outcomes`)."""
    nbx = rules.n_boxes
    off = (np.cumsum(lay.box_nvals) - lay.box_nvals).astype(np.int32)
    half = int(lay.box_nvals.sum())
    o_box = np.repeat(np.arange(nbx, dtype=np.int64), lay.box_nvals)
    o_pts = np.concatenate([lay.box_vals[b, : lay.box_nvals[b]] for b in range(nbx)])
    extras = [0, int(rules.extra_yatzy_bonus)] if rules.extra_yatzy_bonus else [0]
    return K.Outcomes(off, lay.box_vidx, half, np.tile(o_box, len(extras)), np.tile(o_pts, len(extras)),
                      np.repeat(np.array(extras, dtype=np.int64), half))


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

    The file is unlinked as soon as it is mapped, so it disappears with the array, also when the
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

    def fill(a: int, b: int, row_of: np.ndarray, live: np.ndarray, outp: np.ndarray, P: np.ndarray,
             start: int) -> None:
        def fwd(c: int, d: int) -> None:
            K.forward_items(ctx, plan.layout, plan.dice, oc, sol.values, plan.item_mask, plan.item_flag, c, d,
                            row_of[c - a:], live[c - a:], outp, P, start)

        run_blocks(fwd, split_range(a, b, 4 * threads if b - a > 16 else 1), threads)
    return fill


def layer_chunks(plan: Plan, k: int, P: np.ndarray, n_out: int, rows_per_chunk: int
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
        live = alive[a - lo:b - lo]
        rows = n_live[a - lo:b - lo]
        if live.any():
            yield a, b, np.cumsum(rows) - rows, live, np.zeros((max(int(rows.sum()), 1), n_out))
        a = b


#: observe(k, a, b, row_of, live, outp, P, start, D, wlo, woff): a chunk of layer k after its fill,
#: with the layer's state probabilities and score windows (see :func:`forward_pass`)
ChunkObserver = Callable[..., None]


def forward_pass(rules: RuleSet, plan: Plan, fill: OutcomeFill, cap: int, want_dist: bool, threads: int,
                 rows_per_chunk: int = 8192, scratch: Path | None = None,
                 progress: bool = False, observe: ChunkObserver | None = None
                 ) -> tuple[float, float, float, np.ndarray | None]:
    """One forward pass of a policy over the states of ``plan``: (mean, E[S^2], p_bonus, distribution or None).

    ``fill`` gives the policy: for a chunk of items a..b-1 of one layer it writes, for the j-th live
    slot (P[state - start] > 0, in slot order) of item t, the probability of each turn outcome code
    (:class:`harness.exact.kernels.solver.Outcomes`) into outp[row_of[t - a] + j]; items not ``live[t - a]``
    have no rows. The pass then moves probability, moments and score windows to the next layer.
    With ``scratch`` the score windows live in memory-mapped files in that directory (see
    :func:`scratch_zeros`) instead of memory; ``progress`` shows a bar of the layers on stderr;
    ``observe`` (a :data:`ChunkObserver`) sees every chunk's outcome rows and the layer's score
    windows before they are pushed (:mod:`harness.exact.course` reads the course of a game there).
    """
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
    shown = bar(nbx, f"forward pass {rules.name}", "layer", quiet=not progress)
    for k in range(nbx):
        n2 = size(k + 1)
        P2, S12, S22, B2 = np.zeros(n2), np.zeros(n2), np.zeros(n2), np.zeros(n2)
        if want_dist:
            wlo2, woff2 = layer_windows(plan, k + 1, cap, extra)
            D2 = scratch_zeros(int(woff2[-1]), scratch)
        else:
            wlo2 = woff2 = np.zeros(2, dtype=np.int64)
            D2 = np.zeros(1)
        start, start2 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        for a, b, row_of, live, outp in layer_chunks(plan, k, P, len(oc.o_box), rows_per_chunk):
            def push(t: int, _: int) -> None:
                K.push_part(t, nthreads, lay, oc, plan.item_mask, plan.item_flag, a, b, row_of, live, outp,
                            start, P, S1, S2, wlo, woff, D, start2, P2, S12, S22, wlo2, woff2, D2,
                            want_dist, B2)

            fill(a, b, row_of, live, outp, P, start)
            if observe is not None:
                observe(k, a, b, row_of, live, outp, P, start, D, wlo, woff)
            run_blocks(push, [(t, t + 1) for t in range(nthreads)], nthreads)
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
            w = D[woff[i]:woff[i + 1]]
            dist[wlo[i]:wlo[i] + len(w)] += w
    return mean, m2, p_bonus, dist


def _forward(sol: Solution, cap: int, want_dist: bool, threads: int, rows_per_chunk: int = 8192,
             scratch: Path | None = None, progress: bool = False) -> tuple[float, float, float, np.ndarray | None]:
    """The forward pass of the optimal policy (see :func:`forward_pass`)."""
    return forward_pass(sol.rules, sol.plan, optimal_fill(sol, threads), cap, want_dist, threads,
                        rows_per_chunk, scratch, progress)


def distribution_bytes(rules: RuleSet, cap: int | None = None) -> int:
    """Peak bytes of the score windows of two adjacent layers in the forward pass."""
    plan = build_plan(rules)
    cap = cap if cap is not None else score_cap(rules, 2)
    cells = [int(layer_windows(plan, k, cap, int(rules.extra_yatzy_bonus))[1][-1]) for k in range(rules.n_boxes + 1)]
    return 8 * max(a + b for a, b in zip(cells, cells[1:]))


def score_cap(rules: RuleSet, extras: int) -> int:
    """The perfect sheet plus ``extras`` extra yatzy bonuses: where the score windows stop."""
    return int(rules.perfect_score()) + extras * int(rules.extra_yatzy_bonus)


def _figures_path(rules: RuleSet, cache_dir: str | os.PathLike | None) -> Path:
    return cache_path(rules, cache_dir).with_suffix(".figures.json")


def window_storage(rules: RuleSet, cap: int, max_bytes: int, max_disk_bytes: int,
                   scratch_dir: Path) -> tuple[str, Path | None]:
    """Where the score windows of a forward pass go: ("memory", None), ("disk", directory) or
    ("skipped: why", None) when neither limit (nor the free disk space) allows them."""
    need = distribution_bytes(rules, cap)
    if need <= max_bytes:
        return "memory", None
    gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
    if need > max_disk_bytes:
        return (f"skipped: the score windows need {gib(need)}, more than --max-memory "
                f"({gib(max_bytes)}) and --max-disk ({gib(max_disk_bytes)})"), None
    try:
        scratch_dir.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(scratch_dir).free
    except OSError as exc:
        return f"skipped: scratch directory {scratch_dir} unusable ({exc})", None
    if free < need + (2 << 30):
        return (f"skipped: the score windows need {gib(need)} of disk in {scratch_dir} "
                f"(plus 2 GiB to spare), {gib(free)} free"), None
    return "disk", scratch_dir


def exact_distribution(rules: RuleSet, cache_dir: str | os.PathLike | None = None, *,
                       max_bytes: int = 3 << 30, max_disk_bytes: int = 64 << 30,
                       scratch_dir: str | os.PathLike | None = None, use_cache: bool = True,
                       progress: bool = False) -> Figures:
    """Exact figures of optimal play by a forward pass of the state and score distribution.

    Moments (mean, std) and the bonus probability are always exact; percentiles need the score
    distribution. Its two largest adjacent layers of score windows stay in memory up to
    ``max_bytes``; beyond that they go to memory-mapped files in ``scratch_dir`` (default: the
    cache directory) up to ``max_disk_bytes`` and the free space there; beyond both the
    distribution is skipped (percentiles None, ``storage`` says why). Scores above a cap (the
    perfect sheet plus two extra bonuses, raised until it clears the 99th percentile) share one
    cell, which leaves the percentiles exact. The figures are cached beside the value table.
    """
    t0 = time.perf_counter()
    sol = solve(rules, cache_dir, use_cache=use_cache)
    fpath = _figures_path(rules, cache_dir)
    scratch = Path(scratch_dir) if scratch_dir is not None else fpath.parent
    extras = 2
    storage, where = window_storage(rules, score_cap(rules, extras), max_bytes, max_disk_bytes, scratch)
    if use_cache:
        try:
            cached = json.loads(fpath.read_text())
            # figures without percentiles are reused only while the limits still forbid them
            if (cached.get("format") == FORMAT and cached.get("digest") == rules.digest
                    and (cached["percentiles"] is not None or storage.startswith("skipped"))):
                dist = cached.get("distribution")
                return Figures(rules.name, rules.digest, sol.expected_score, cached["forward_mean"], cached["std"],
                               cached["p_bonus"], cached["percentiles"], sol.states,
                               time.perf_counter() - t0, sol.seconds, True,
                               None if dist is None else np.array(dist, dtype=np.float64),
                               cached.get("storage", storage))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    while True:
        cap = score_cap(rules, extras)
        if extras > 2:
            storage, where = window_storage(rules, cap, max_bytes, max_disk_bytes, scratch)
        want = not storage.startswith("skipped")
        if storage.startswith("skipped"):
            log.warning("%s: percentiles not computed, %s", rules.name, storage[len("skipped: "):])
        elif storage == "disk":
            log.warning("%s: the score distribution needs %.1f GiB, more than --max-memory: its working set "
                        "goes to memory-mapped files in %s (maxi: about half an hour)",
                        rules.name, distribution_bytes(rules, cap) / 2**30, where)
        try:
            mean, m2, p_bonus, dist = _forward(sol, cap, want, n_threads(), scratch=where, progress=progress)
        except OSError as exc:
            if where is None:
                raise
            storage, where = f"skipped: the scratch files in {where} could not be made ({exc})", None
            log.warning("%s: percentiles not computed, %s; computing the moments only", rules.name,
                        storage[len("skipped: "):])
            mean, m2, p_bonus, dist = _forward(sol, cap, False, n_threads(), progress=progress)
        if dist is None or not rules.extra_yatzy_bonus or np.cumsum(dist)[-2] >= 0.995:
            break
        extras *= 2
    var = max(m2 - mean * mean, 0.0)
    fig = Figures(rules.name, rules.digest, sol.expected_score, mean, math.sqrt(var), p_bonus,
                  percentiles_of(dist) if dist is not None else None, sol.states,
                  time.perf_counter() - t0, sol.seconds, sol.cached, dist, storage)
    if use_cache:
        try:
            payload = {"format": FORMAT, "digest": rules.digest, "forward_mean": mean, "std": fig.std,
                       "p_bonus": p_bonus, "percentiles": fig.percentiles, "storage": storage,
                       "distribution": None if dist is None else dist.tolist()}
            fpath.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=fpath.name + ".", suffix=".tmp", dir=fpath.parent)
            with os.fdopen(fd, "w") as fh:
                json.dump(payload, fh)
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, fpath)
        except OSError as exc:
            log.warning("cannot write solver figures %s: %s", fpath, exc)
    return fig


# ---------------------------------------------------------------------------------------------
# one-turn odds


def one_turn_odds(rules: RuleSet) -> dict[str, float]:
    """For every lower box: P(its requirement is met within one turn), keeps maximising that probability.

    The requirement is the box's context-free score being non-zero (an empty sheet: no joker; a
    box needing the key box counts its combination).
    """
    d = rules.dice
    out = {}
    for b, box in enumerate(rules.boxes):
        if box.is_upper:
            continue
        tf = (rules.table_first[:, b] > 0).astype(np.float64)
        tl = (rules.table[:, b] > 0).astype(np.float64)
        v_first = turn_policy(d, tf, tl, rules.rolls_per_turn - 1)[0]
        out[box.name] = min(1.0, float(d.roll_prob @ v_first))  # a sure box may sum to 1 + 1e-15
    return out

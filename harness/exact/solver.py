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
(maxi: 32.5 GiB) in memory-mapped files under ``--scratch-dir``, unlinked as they are
mapped, up to ``--max-disk`` and the free space; beyond both only the moments are computed.

The module's neighbours: :mod:`harness.exact.plan` lays out the states (:class:`Plan`,
:func:`build_plan`, the dice tables, :class:`Solution`), :mod:`harness.exact.threads` runs blocks on
the cores, :mod:`harness.exact.forward` holds the forward pass and its :class:`Figures`; their public
names are importable from here as before. This module keeps what works on a value table as a
whole: its file cache (save, load, checksum stamps), the solve, the keep policy, the exact figures'
cache and the one-turn odds.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from harness.exact.kernels import solver as K
from harness.exact.forward import (
    Chunk,
    ChunkObserver,
    Figures,
    OutcomeFill,
    PassSetup,
    distribution_bytes,
    forward_pass,
    layer_chunks,
    layer_windows,
    optimal_fill,
    outcome_codes,
    percentiles_of,
    score_cap,
    scratch_zeros,
    window_storage,
)
from harness.util.sums import dot
from harness.exact.plan import _PLANS, MAX_BOXES, Plan, Solution, build_plan, dice_tables
from harness.exact.threads import n_threads, run_blocks, split_range
from harness.util.cache import default_cache_dir
from harness.util import jit, progress
from harness.util.jit import nb
from harness.game.rules import RuleSet, load_rules
from harness.game.scoring import context
from harness.game.turn import turn_policy

# the names above that this module does not use itself are its public face for the modules that
# import them from here (the layout, the threads and the forward pass have modules of their own)
__all__ = [
    "Chunk",
    "ChunkObserver",
    "Figures",
    "FORMAT",
    "MAX_BOXES",
    "OutcomeFill",
    "PassSetup",
    "POLICY_MAX_BYTES",
    "Plan",
    "Solution",
    "build_plan",
    "cache_path",
    "clear_memo",
    "default_cache_dir",
    "dice_tables",
    "distribution_bytes",
    "exact_distribution",
    "forward_pass",
    "is_solved",
    "layer_chunks",
    "layer_windows",
    "load_table",
    "load_table_header",
    "n_threads",
    "one_turn_odds",
    "optimal_fill",
    "outcome_codes",
    "percentiles_of",
    "policy_shape",
    "policy_table",
    "run_blocks",
    "save_table",
    "score_cap",
    "scratch_zeros",
    "solve",
    "solve_values",
    "split_range",
    "window_storage",
]

log = logging.getLogger(__name__)

#: Version of the solver's file format and state layout; bump when either changes.
FORMAT = 1
_MAGIC = "yatzy-harness-solver"
_HEADER = 4096


# ---------------------------------------------------------------------------------------------
# the value table's file cache


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
    header = {
        "magic": _MAGIC,
        "format": FORMAT,
        "digest": rules.digest,
        "dtype": str(values.dtype),
        "shape": list(values.shape),
        "crc32": _crc(values),
        **meta,
    }
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


def load_table(
    path: Path, rules: RuleSet, shape: int | tuple[int, ...], dtype: Any = np.float64, *, mmap: bool = False
) -> tuple[np.ndarray, dict[str, Any]] | None:
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
                raise ValueError(
                    f"shape/dtype {header.get('shape')}/{header.get('dtype')} != {list(shape)}/{dtype.name}"
                )
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


# ---------------------------------------------------------------------------------------------
# solving


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
        progress.say(
            progress.fit(
                f"solving {rules.name}'s value table once ({plan.n_states:,} states, "
                f"{8 * plan.n_states / 2**20:,.0f} MiB)",
                tail="; later runs load it",
            )
        )
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
    _BOXES.clear()
    _PLANS.clear()


def is_solved(rules: RuleSet, cache_dir: str | os.PathLike | None = None) -> bool:
    """Whether :func:`solve` would answer from memory or the disk cache (no fresh solve)."""
    path = cache_path(rules, cache_dir)
    return (rules.digest, str(path)) in _MEMO or path.is_file() or shipped_path(rules).is_file()


#: Value tables shipped with the package (checksummed like the cache's files, named like them):
#: the small built-in rule sets, whose solve takes a fraction of a second but whose first solve
#: on a machine compiles the solver's kernels for 7 s or more (the README's levels example plays
#: ``forced``). tests/test_solver.py checks each against a fresh solve, bit for bit.
SHIPPED = Path(__file__).resolve().parent / "tables"
SHIPPED_RULES = ("forced", "generala")


def shipped_path(rules: RuleSet) -> Path:
    """Where the package would hold ``rules``' value table (it may not)."""
    return SHIPPED / f"{rules.name}-{rules.digest[:40]}-v{FORMAT}.bin"


def write_shipped(name: str) -> Path:
    """Solve the built-in rule set ``name`` afresh and write its table into the package
    (after a change that moves a shipped rule set's digest or values)."""
    rules = load_rules(name)
    sol = solve(rules, use_cache=False)
    path = shipped_path(rules)
    for old in SHIPPED.glob(f"{name}-*.bin"):
        old.unlink()
    save_table(path, rules, np.ascontiguousarray(sol.values), {"rules": name, "expected_score": sol.expected_score})
    return path


def solve(rules: RuleSet, cache_dir: str | os.PathLike | None = None, *, use_cache: bool = True) -> Solution:
    """The solved table of ``rules``: from this process's memory, the disk cache, the package
    (:data:`SHIPPED_RULES`), or a fresh solve.

    A fresh solve or a shipped table is written to the cache (a cache directory that cannot be
    written only logs a warning). ``use_cache=False`` ignores and does not write the disk cache,
    nor read the package's tables.
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
    if loaded is None and use_cache and shipped_path(rules).is_file():
        shipped = load_table(shipped_path(rules), rules, plan.n_states)
        if shipped is not None:
            try:
                meta = {k: v for k, v in shipped[1].items() if k in ("rules", "expected_score")}
                save_table(path, rules, shipped[0], {**meta, "shipped": True})
                loaded = load_table(path, rules, plan.n_states, mmap=True)
            except OSError as exc:
                log.warning("cannot write solver cache %s: %s", path, exc)
            if loaded is None:
                loaded = shipped
    if loaded is not None:
        values, header = loaded
        sol = Solution(
            rules,
            plan,
            values,
            float(values[0]) + plan.bonus0,
            float(header.get("seconds", time.perf_counter() - t0)),
            True,
            path,
        )
    else:
        values = solve_values(rules, plan)
        seconds = time.perf_counter() - t0
        sol = Solution(rules, plan, values, float(values[0]) + plan.bonus0, seconds, False, path if use_cache else None)
        if use_cache:
            try:
                save_table(
                    path,
                    rules,
                    values,
                    {"rules": rules.name, "seconds": round(seconds, 3), "expected_score": sol.expected_score},
                )
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
_BOXES: dict[tuple[str, str], np.ndarray] = {}


def policy_shape(sol: Solution) -> tuple[int, int, int]:
    """(states, rerolls, rolls) of :func:`policy_table`."""
    return sol.states, sol.rules.rolls_per_turn - 1, sol.rules.dice.n_rolls


def boxes_shape(sol: Solution) -> tuple[int, int, int]:
    """(states, 2 with servida else 1, rolls) of :func:`box_table`."""
    return sol.states, 2 if sol.rules.has_servida else 1, sol.rules.dice.n_rolls


def _decisions_fit(sol: Solution) -> bool:
    """Whether the T=0 decision tables are made for ``sol``: a turn has a reroll and the keeps'
    and boxes' tables together take at most :data:`POLICY_MAX_BYTES` (scandinavian: 672 + 336 MiB)."""
    keeps, boxes = policy_shape(sol), boxes_shape(sol)
    return keeps[1] > 0 and int(np.prod(keeps)) + int(np.prod(boxes)) <= POLICY_MAX_BYTES


def _decision_paths(sol: Solution) -> tuple[Path | None, Path | None]:
    if sol.path is None:
        return None, None
    return sol.path.with_suffix(".policy.bin"), sol.path.with_suffix(".boxes.bin")


def policy_table(sol: Solution, *, compute: bool = True) -> np.ndarray | None:
    """The T=0 keep of every state, reroll stage and roll: (states, rerolls, rolls) uint8, the keep's
    position among the roll's sub-keeps (``dice.sub_keep[dice.sub_ptr[roll] + code]``), stage j
    (rerolls left) at row j - 1. The same keeps as the bot's per-state caches, to the last tie.

    From this process's memory, else from the disk cache beside the value table (checked like the
    table, memory-mapped: forked workers and other runs share its pages), else computed when
    ``compute`` (about a solve's time, with :func:`box_table`'s boxes; both written to the cache).
    None when the decision tables would exceed :data:`POLICY_MAX_BYTES`, a turn has no reroll, or
    it is neither cached nor to be computed.
    """
    return _decision_table(sol, 0, _POLICY, policy_shape, compute)


def box_table(sol: Solution, *, compute: bool = True) -> np.ndarray | None:
    """The T=0 box of every state and roll: (states, F, rolls) uint8, F = 2 with servida (index 1:
    the dice were made on the turn's first roll), else 1. The boxes of the bot's
    :func:`harness.exact.kernels.solver.choose_boxes`, to the last tie (the first strict maximum).
    Cached and computed like :func:`policy_table`, with it (the same pass makes both)."""
    return _decision_table(sol, 1, _BOXES, boxes_shape, compute)


def _decision_table(
    sol: Solution,
    which: int,
    memo: dict[tuple[str, str], np.ndarray],
    shape: Callable[[Solution], tuple[int, ...]],
    compute: bool,
) -> np.ndarray | None:
    """:func:`policy_table` (``which`` 0) or :func:`box_table` (1): from this process's ``memo``, the
    cache's file (memory-mapped), or the one pass that builds both."""
    if not _decisions_fit(sol):
        return None
    path = _decision_paths(sol)[which]
    key = (sol.rules.digest, str(path))
    hit = memo.get(key)
    if hit is not None:
        return hit
    loaded = load_table(path, sol.rules, shape(sol), np.uint8, mmap=True) if path is not None else None
    if loaded is not None:
        memo[key] = loaded[0]
        return loaded[0]
    if not compute:
        return None
    _build_decisions(sol)
    return memo[key]


def _build_decisions(sol: Solution) -> None:
    """Work out the keeps and boxes of every state (two threads), keep them in memory and write
    them to the cache."""
    t0 = time.perf_counter()
    plan, rules = sol.plan, sol.rules
    codes = np.zeros(policy_shape(sol), dtype=np.uint8)
    boxes = np.zeros(boxes_shape(sol), dtype=np.uint8)
    ctx = context(rules)
    threads = n_threads()
    # about 10 us of CPU a state on the idle development machine (BENCHMARKS.md, "Exact solver")
    secs = 10e-6 * sol.states / threads * progress.load_factor()
    if secs > 2:
        progress.say(
            progress.fit(
                f"working out {rules.name}'s decision tables once ({(codes.nbytes + boxes.nbytes) / 2**20:,.0f} MiB)",
                tail=f", about {secs:.0f} s; later runs load them",
            )
        )

    def run(a: int, b: int) -> None:
        K.policy_items(ctx, plan.layout, plan.dice, sol.values, plan.item_mask, plan.item_flag, a, b, codes, boxes)

    n_items = len(plan.item_mask)
    run_blocks(run, split_range(0, n_items, 16 * threads if n_items > 256 else 1), threads)
    log.info("decision tables of %s: %d states in %.1f s", rules.name, sol.states, time.perf_counter() - t0)
    for table, path, what, memo in zip(
        (codes, boxes), _decision_paths(sol), ("keep policy", "box policy"), (_POLICY, _BOXES)
    ):
        if path is not None:
            try:
                save_table(path, rules, table, {"rules": rules.name, "what": what})
            except OSError as exc:
                log.warning("cannot write solver cache %s: %s", path, exc)
        table.setflags(write=False)
        memo[(rules.digest, str(path))] = table


# ---------------------------------------------------------------------------------------------
# exact figures of the optimal policy (the forward pass: harness.exact.forward)


def _forward(
    sol: Solution,
    cap: int,
    want_dist: bool,
    threads: int,
    rows_per_chunk: int = 8192,
    scratch: Path | None = None,
    progress: bool = False,
) -> tuple[float, float, float, np.ndarray | None]:
    """The forward pass of the optimal policy (see :func:`forward_pass`)."""
    return forward_pass(
        sol.rules,
        sol.plan,
        optimal_fill(sol, threads),
        cap,
        want_dist,
        threads,
        PassSetup(rows_per_chunk, scratch, progress),
    )


def _figures_path(rules: RuleSet, cache_dir: str | os.PathLike | None) -> Path:
    return cache_path(rules, cache_dir).with_suffix(".figures.json")


#: About how long :func:`_warm_forward` takes on a quiet development machine, seconds: _best_sub,
#: the pass's own kernels, a wait for the parent's turn_values, then forward_items (it ended 14 s
#: after the fork at load 1.7, benchmarks/BENCHMARKS.md, "First use with more helpers").
FORWARD_HELPER_SECONDS = 13.0


def _warm_forward() -> None:
    """In a helper process of a first :func:`exact_distribution`: compile the forward pass's
    kernels into numba's cache by the pass of Forced Yatzy's shipped table (150 states; the
    kernels' argument types do not depend on the rule set) while the parent solves: a first
    ``solve scandinavian`` waited 9.9 s, then 8.3 s, the two one after the other."""
    progress.enable(False)  # the parent speaks for both
    rules = load_rules("forced")
    plan = build_plan(rules)
    loaded = load_table(shipped_path(rules), rules, plan.n_states)
    if loaded is None:
        return
    values = loaded[0]
    values.setflags(write=False)  # as a solved table is: the kernels' signature says readonly
    if not jit.in_cache(K._best_sub):
        # first the solve's _best_sub (and its _chains: 2.7 s of CPU), by the types turn_values
        # passes it: the parent, compiling stop_values meanwhile, then loads it from the cache
        f2, i2, i = np.zeros((1, 1)), np.zeros((1, 1), np.int32), np.int64(0)
        K._best_sub.compile(tuple(nb.typeof(a) for a in (plan.dice, i, f2, i, f2, i2, f2, i, i2, i, i)))
    cap = score_cap(rules, 2)
    try:  # then the pass's own kernels (layer_windows, push_part), on turns that lead nowhere
        forward_pass(rules, plan, lambda *_: None, cap, True, 1, PassSetup())
    except AssertionError:  # it lost the probability, as it must: no turn had an outcome
        pass
    # forward_items plans a turn with the solve's own turn_values and stop_values (8 s of CPU of
    # its 16): load them once the parent has compiled them rather than compile them twice
    t0 = time.monotonic()
    while not (jit.in_cache(K.turn_values) and jit.in_cache(K.stop_values)) and time.monotonic() - t0 < 120:
        time.sleep(0.2)
    _forward(Solution(rules, plan, values, 0.0, 0.0, True), cap, True, 1)


def exact_distribution(
    rules: RuleSet,
    cache_dir: str | os.PathLike | None = None,
    *,
    max_bytes: int = 3 << 30,
    max_disk_bytes: int = 64 << 30,
    scratch_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    progress: bool = False,
) -> Figures:
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
    if not (use_cache and is_solved(rules, cache_dir)) and not jit.in_cache(K.forward_items):
        # a first solve: the forward pass's kernels compile on the other core meanwhile
        jit.fork_helper(_warm_forward, FORWARD_HELPER_SECONDS, "the forward pass's kernels")
    sol = solve(rules, cache_dir, use_cache=use_cache)
    fpath = _figures_path(rules, cache_dir)
    scratch = Path(scratch_dir) if scratch_dir is not None else fpath.parent
    extras = 2
    storage, where = window_storage(rules, score_cap(rules, extras), max_bytes, max_disk_bytes, scratch)
    if use_cache:
        try:
            cached = json.loads(fpath.read_text())
            # figures without percentiles are reused only while the limits still forbid them
            if (
                cached.get("format") == FORMAT
                and cached.get("digest") == rules.digest
                and (cached["percentiles"] is not None or storage.startswith("skipped"))
            ):
                dist = cached.get("distribution")
                return Figures(
                    rules.name,
                    rules.digest,
                    sol.expected_score,
                    cached["forward_mean"],
                    cached["std"],
                    cached["p_bonus"],
                    cached["percentiles"],
                    sol.states,
                    time.perf_counter() - t0,
                    sol.seconds,
                    True,
                    None if dist is None else np.array(dist, dtype=np.float64),
                    cached.get("storage", storage),
                )
        except (OSError, ValueError, KeyError, TypeError):
            pass
    while True:
        cap = score_cap(rules, extras)
        if extras > 2:
            storage, where = window_storage(rules, cap, max_bytes, max_disk_bytes, scratch)
        want = not storage.startswith("skipped")
        if storage.startswith("skipped"):
            log.warning("%s: percentiles not computed, %s", rules.name, storage[len("skipped: ") :])
        elif storage == "disk":
            log.warning(
                "%s: the score distribution needs %.1f GiB, more than --max-memory: its working set "
                "goes to memory-mapped files in %s (maxi: about half an hour)",
                rules.name,
                distribution_bytes(rules, cap) / 2**30,
                where,
            )
        jit.await_helper()  # its forward pass's kernels then load from numba's cache
        try:
            mean, m2, p_bonus, dist = _forward(sol, cap, want, n_threads(), scratch=where, progress=progress)
        except OSError as exc:
            if where is None:
                raise
            storage, where = f"skipped: the scratch files in {where} could not be made ({exc})", None
            log.warning(
                "%s: percentiles not computed, %s; computing the moments only", rules.name, storage[len("skipped: ") :]
            )
            mean, m2, p_bonus, dist = _forward(sol, cap, False, n_threads(), progress=progress)
        if dist is None or not rules.extra_yatzy_bonus or np.cumsum(dist)[-2] >= 0.995:
            break
        extras *= 2
    var = max(m2 - mean * mean, 0.0)
    fig = Figures(
        rules.name,
        rules.digest,
        sol.expected_score,
        mean,
        math.sqrt(var),
        p_bonus,
        percentiles_of(dist) if dist is not None else None,
        sol.states,
        time.perf_counter() - t0,
        sol.seconds,
        sol.cached,
        dist,
        storage,
    )
    if use_cache:
        try:
            payload = {
                "format": FORMAT,
                "digest": rules.digest,
                "forward_mean": mean,
                "std": fig.std,
                "p_bonus": p_bonus,
                "percentiles": fig.percentiles,
                "storage": storage,
                "distribution": None if dist is None else dist.tolist(),
            }
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
        out[box.name] = min(1.0, dot(d.roll_prob, v_first))  # a sure box may sum to 1 + 1e-15
    return out

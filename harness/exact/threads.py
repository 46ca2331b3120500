"""The solver's threads: how many (:func:`n_threads`: the usable cores, one in a forked worker),
a range cut into blocks (:func:`split_range`) and the blocks run on a pool shared by every solve
and forward pass (:func:`run_blocks`; the kernels release the GIL)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_IN_CHILD = False
_POOL: ThreadPoolExecutor | None = None
_POOL_THREADS = 0  # the threads _POOL was made with


def _mark_child() -> None:
    global _IN_CHILD, _POOL, _POOL_THREADS
    _IN_CHILD = True
    _POOL, _POOL_THREADS = None, 0  # its threads did not survive the fork


# a forked worker shares the cores with its siblings: it solves on one thread
os.register_at_fork(after_in_child=_mark_child)


def n_threads() -> int:
    """Threads for the solve and the forward pass: the usable cores (1 in a forked worker;
    ``$YATZY_HARNESS_THREADS`` where set, as on a Dask worker: :mod:`harness.jobs.cluster`)."""
    if _IN_CHILD:
        return 1
    env = os.environ.get("YATZY_HARNESS_THREADS")  # a Dask worker's threads (harness.jobs.cluster.THREADS_ENV)
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

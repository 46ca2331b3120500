"""Kernels compiled ahead of a run's need: a forked helper process compiles every bot's kernels
and the game loop's into numba's cache while the run sets up (:func:`kernel_helper`), and a
lineup's warm-up game seats a stand-in for an external engine (:func:`warm_up_seats`)."""

from __future__ import annotations

import functools
import multiprocessing
from typing import Any, Callable, Sequence

import numpy as np

from harness.game.loop import play
from harness.game.registry import make
from harness.play.runconfig import ResolvedRun
from harness.util import jit, progress

__all__ = ["BOTS_HELPER_SECONDS", "compile_in_background", "kernel_helper", "warm_kernels", "warm_up_seats"]


#: About how long a helper compiles the built-in bots' kernels alone on an idle development machine
#: (random, timeout, greedy: 2.2 s of CPU measured, benchmarks/BENCHMARKS.md "First run"), seconds.
BOTS_HELPER_SECONDS = 2.5


def kernel_helper(resolved: ResolvedRun, bots_only: bool = False) -> Any:
    """A forked process that compiles every bot's kernels and the engine's into numba's cache
    (:meth:`Strategy.warm_kernels`, then, unless ``bots_only``, one game of each lineup, an external
    engine's seat taken by the time-out bot), or None where processes cannot be forked."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return None
    proc = ctx.Process(target=warm_kernels, args=(resolved, bots_only), name="kernel-helper", daemon=True)
    proc.start()
    return proc


def compile_in_background(work: Callable[[], None]) -> Any:
    """A forked process running ``work`` (kernels compiled into numba's cache, :meth:`Strategy.
    background_kernels`) that nobody waits for (:func:`harness.util.jit.fork_helper`, not
    registered): the run's workers take what it compiles once it is cached; a daemon, so it ends
    with the run if the run ends first. None, and nothing started, where no helper may be forked."""
    return jit.fork_helper(functools.partial(_quietly, work), 0.0, "kernels for later runs", register=False)


def _quietly(work: Callable[[], None]) -> None:
    progress.enable(False)  # the run's own lines are the parent's
    work()


def warm_kernels(resolved: ResolvedRun, bots_only: bool) -> None:
    progress.enable(False)  # the parent speaks for both
    for s in resolved.strategies.values():
        s.warm_kernels()
    if bots_only:
        return
    for labels in dict.fromkeys(resolved.lineups):
        play(resolved.rules, warm_up_seats(resolved, labels), np.arange(1, dtype=np.int64), resolved.config.seed)


def warm_up_seats(resolved: ResolvedRun, labels: Sequence[str]) -> list[Any]:
    """A lineup's bots for a game that only compiles kernels: an external engine has none, so the
    time-out bot sits in for it (its decisions, and so its faults, all belong to the chunks)."""
    stand_in = make("timeout", resolved.rules) if any(resolved.strategies[x].refereed for x in labels) else None
    return [stand_in if resolved.strategies[x].refereed else resolved.strategies[x] for x in labels]

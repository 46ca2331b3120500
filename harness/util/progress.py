"""Progress on stderr: how the library shows how far a long step has come, and what a first run does.

Bars are off unless the caller asks (``quiet=False``); the commands ask when stderr is a terminal
and no ``--quiet`` was given (:func:`harness.commands.options.quiet`). One look for every bar: it
redraws at most 10 times a second, fits the terminal's width and is erased when done.

Steps that take seconds only the first time (compiling the numba kernels, solving a rule set's
table) speak for themselves once the command line has switched :func:`enable` on (a terminal, no
``--quiet``, no ``--json``): :func:`compiling` draws a ticking bar with the step's estimated
length whenever numba compiles a kernel (:mod:`harness.util.jit` reports every compile), and the
solver draws a bar over its layers (:func:`enabled`). Library callers see nothing unless they
enable it too.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm


def bar(total: float | None, desc: str, unit: str, *, quiet: bool = True, **kw: Any) -> tqdm:
    """A progress bar of ``total`` ``unit`` (None: a count without an end); ``quiet``: none."""
    # imported here: the modules that may draw a bar (the solver, the records' reader) are loaded by
    # commands that draw none, and tqdm takes ~0.015 s to import (a review's start-up)
    from tqdm import tqdm

    if not quiet and _sizeless_terminal():
        # a terminal that reports no size (a bare pseudo-terminal): tqdm would draw nothing at all
        kw.setdefault("ncols", 100)
        kw.setdefault("nrows", 24)
    b = tqdm(total=total, desc=desc, unit=unit, disable=quiet, dynamic_ncols="ncols" not in kw, leave=False, **kw)
    if not quiet:
        _Ticker(b).start()
    return b


def _sizeless_terminal() -> bool:
    """stderr is a terminal that reports 0 columns (a stream without a descriptor is none)."""
    try:
        return sys.stderr.isatty() and os.get_terminal_size(sys.stderr.fileno()).columns == 0
    except (OSError, ValueError):
        return False


class _Ticker(threading.Thread):
    """Redraws a bar every second while it is open: a step slower than that (one layer of a forward
    pass) still shows its time going, so a run is never silent for long."""

    def __init__(self, b: tqdm) -> None:
        super().__init__(daemon=True, name="progress-tick")
        self.b = b

    def run(self) -> None:
        while True:
            time.sleep(1.0)
            if self.b.disable or getattr(self.b, "last_print_t", None) is None:
                return
            try:
                self.b.refresh()
            except (AttributeError, ValueError, OSError):  # closed meanwhile
                return


_ENABLED = False


def enable(on: bool = True) -> None:
    """Let the library's first-run steps speak on stderr (the command line's switch)."""
    global _ENABLED
    _ENABLED = bool(on)


def enabled() -> bool:
    """Whether first-run steps and the solver's layers draw on stderr (:func:`enable`)."""
    return _ENABLED


def say(line: str) -> None:
    """One line on stderr when enabled (above any bar that is drawn)."""
    if _ENABLED:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)


#: What compiling each kernel module is (a short name: the line must fit 80 columns), and about
#: how many seconds of CPU its kernels take to compile when a command first needs them, measured
#: on the idle development machine (``benchmarks/BENCHMARKS.md``, "First run"); announced times
#: are scaled by :func:`load_factor`. A kernel of its own (``module.function``) where one
#: module's kernels are compiled at different moments and take very different times.
KERNELS: dict[str, tuple[str, float]] = {
    "harness.exact.kernels.solver": ("solver", 8.0),
    "harness.exact.kernels.solver.layer_windows": ("exact evaluation", 0.5),
    # an evaluation compiles sheet_scores first (1.6 s) and a bot's policy right after: its
    # figure stands for both, so the line's estimate is right from the start
    "harness.exact.kernels.policy": ("exact evaluation", 7.0),
    "harness.exact.kernels.policy.soft_policy": ("exact evaluation", 5.5),
    "harness.exact.kernels.policy.hard_policy": ("exact evaluation", 4.0),
    "harness.exact.kernels.policy.policy_outcomes": ("exact evaluation", 8.0),
    "harness.exact.kernels.target": ("target tables", 25.0),
    "harness.decisions.kernels": ("analysis", 8.0),
    "harness.players.fit.kernels": ("player models", 8.0),
    "harness.game.loop_kernels": ("engine", 1.5),
    "harness.game.scoring": ("scoring", 1.0),
    "harness.game.turn": ("turn planner", 1.0),
    "strategies.kernels": ("bots", 0.8),
    "harness.game.pace": ("bonus pace", 1.0),
}

#: The width a line announcing a wait may take: an 80-column terminal's, less the cursor's column.
WIDTH = 79


def fit(line: str, width: int = WIDTH, tail: str = "") -> str:
    """``line + tail`` in ``width`` characters, ``line`` cut (an ellipsis at the cut) where it is
    too long, so that a terminal never wraps it and ``tail`` (the ticking seconds) always shows."""
    room = width - len(tail)
    return (line if len(line) <= room else line[: max(room - 3, 0)] + "...") + tail


def load_factor() -> float:
    """How many times longer a CPU-bound step takes now than on an idle machine: the run queue
    (1-minute load average) per core, at least 1; 1 where the load cannot be read."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except (OSError, AttributeError):
        return 1.0


class _Compiling:
    """A ticking bar while numba compiles: what is compiled, seconds so far and about how many.

    :func:`compiling` is told of every compile's start and end (nested compiles count once); the
    bar starts at the first, names the kernel module of the outermost compile, ticks every half
    second from its own thread, and closes half a second after the last compile ended, with a line
    saying what was compiled and that later runs load it from the cache."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.what: list[str] = []
        self.keys: list[str] = []  # the KERNELS entries counted in the estimate
        self.estimate = 0.0
        self.t0 = 0.0
        self.idle_since: float | None = None
        self.thread: threading.Thread | None = None

    def start(self, module: str, name: str = "") -> None:
        with self.lock:
            self.depth += 1
            self.idle_since = None
            if self.depth > 1:
                return
            key = f"{module}.{name}" if f"{module}.{name}" in KERNELS else module
            label, seconds = KERNELS.get(key, ("kernels", 1.0))
            if label not in self.what:
                self.what.append(label)
            if key not in self.keys:
                self.keys.append(key)
                self.estimate += seconds * load_factor()
            if self.thread is None:
                self.t0 = time.monotonic()
                self.thread = threading.Thread(target=self._tick, daemon=True, name="compiling")
                self.thread.start()

    def end(self) -> None:
        with self.lock:
            self.depth = max(self.depth - 1, 0)
            if self.depth == 0:
                self.idle_since = time.monotonic()

    def _tick(self) -> None:
        b = bar(None, "", "s", quiet=False, bar_format="{desc}")
        try:
            while True:
                with self.lock:
                    done = self.idle_since is not None and time.monotonic() - self.idle_since > 0.5
                    what = ", ".join(self.what)
                    est = self.estimate
                    if done:
                        self.thread = None
                        self.what, self.keys, self.estimate = [], [], 0.0
                if done:
                    break
                spent = time.monotonic() - self.t0
                more = f"about {max(est, spent):.0f} s" if spent < est * 1.3 else "a little longer"
                b.set_description_str(fit(f"compiling kernels once ({what})", tail=f": {spent:.0f} s of {more}"))
                time.sleep(0.5)
        finally:
            b.close()
        say(fit(f"compiled kernels ({what})", tail=f" in {time.monotonic() - self.t0:.1f} s; later runs load them"))


_COMPILING = _Compiling()


def compiling(module: str, started: bool, name: str = "") -> None:
    """numba starts (``started``) or ends compiling kernel ``name`` of ``module`` (:mod:`harness.util.jit`)."""
    if not _ENABLED:
        return
    if started:
        _COMPILING.start(module, name)
    else:
        _COMPILING.end()


__all__ = ["bar", "enable", "enabled", "say", "compiling", "fit", "load_factor", "KERNELS"]

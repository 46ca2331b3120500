"""numba, as every kernel module of the harness imports it (``from harness.util.jit import nb``).

The first kernel a process compiles or loads starts numba's CPU target, whose array library
(``numba.np.arraymath``) checks at import that scipy's BLAS is there: ``import
scipy.linalg.cython_blas``. Python imports the package ``scipy.linalg`` first, all of it (its
decompositions, its array-API layer, which imports numpy.f2py): about a quarter of a second, a
sixth of a one-game ``review``, for a check. The harness's kernels call no BLAS, and numba only
needs that one extension module (it reads its ``__pyx_capi__`` table when a kernel calls
``np.dot`` and the like). So before numba starts, :func:`_load_scipy_blas` loads the extension
module on its own, from scipy's ``linalg`` folder, under its full name: numba's check finds it
imported (about 25 ms). A later ``import scipy.linalg`` imports the package as usual, and
:class:`_BindBlas` gives it the ``cython_blas`` attribute an import of the submodule would have
set. If scipy is missing, or laid out otherwise, nothing happens and numba runs its own check.

Kept because it is measured to matter to a command's start-up: the README's `run` never imports
scipy.linalg otherwise. Seven paired runs of a warm ``python -c "import sys, tempfile;
sys.argv=['yatzy-harness', 'run', '--games', '200', '--seats', 'greedy,random', '--out',
tempfile.mkdtemp() + '/r']; from harness.cli import entry; sys.exit(entry())"`` against the same
command with ``import scipy.linalg;`` first (what numba's own check imports), 2026-12-06 on the
2-core machine under load: CPU 1.54 s against 1.70 s median (x0.89 pair by pair), wall x0.82, peak
memory 190 against 204 MiB.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import time as _time
from types import ModuleType
from typing import Any

_BLAS = "scipy.linalg.cython_blas"


class _BindBlas(importlib.abc.MetaPathFinder):
    """Once, when ``scipy.linalg`` is first imported: its spec from the other finders, whose loader
    sets ``scipy.linalg.cython_blas`` to the module loaded here once the package has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "scipy.linalg":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if _BLAS in sys.modules:
                module.cython_blas = sys.modules[_BLAS]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _load_scipy_blas() -> None:
    if _BLAS in sys.modules or "scipy.linalg" in sys.modules:
        return
    try:
        scipy = importlib.util.find_spec("scipy")
        if scipy is None or not scipy.submodule_search_locations:
            return
        folders = [f"{p}/linalg" for p in scipy.submodule_search_locations]
        spec = importlib.machinery.PathFinder.find_spec("cython_blas", folders)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return
        spec = importlib.machinery.ModuleSpec(
            _BLAS, importlib.machinery.ExtensionFileLoader(_BLAS, spec.origin), origin=spec.origin
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - any failure leaves numba's own check to run
        return
    sys.modules[_BLAS] = module
    sys.meta_path.insert(0, _BindBlas())


_load_scipy_blas()

import numba as nb  # noqa: E402
from numba.core import event as _event  # noqa: E402

from harness.util import progress as _progress  # noqa: E402


class _CompileWatch(_event.Listener):
    """Tells :func:`harness.util.progress.compiling` of every kernel numba compiles (a cache miss: a kernel
    loaded from numba's cache fires nothing), so a first run says what it is doing."""

    def on_start(self, event: _event.Event) -> None:
        d = event.data.get("dispatcher") if isinstance(event.data, dict) else None
        f = getattr(d, "py_func", None)
        _progress.compiling(getattr(f, "__module__", ""), True, getattr(f, "__name__", ""))

    def on_end(self, event: _event.Event) -> None:
        _progress.compiling("", False)


_event.register("numba:compile", _CompileWatch())


def _plain_numba_errors() -> None:
    """numba's coloured error messages call ``colorama.init()`` the first time a message is
    formatted (overload resolution formats some inside an ordinary compile), which registers an
    exit hook that writes a colour reset (ESC [0m) on stdout: a stray byte after the last line
    of every first run, in a terminal and in a log file (issue 52). The harness prints numba's
    errors as plain text anyway, so numba gets a plain scheme before it makes its own."""
    try:
        from numba.core import errors
    except ImportError:  # pragma: no cover - numba's layout changed: leave it as it is
        return
    if not hasattr(errors, "_termcolor_inst") or not hasattr(errors, "_DummyColorScheme"):
        return

    class _Plain(errors._DummyColorScheme):
        def code(self, msg: str) -> str:
            return msg

        errmsg = filename = indicate = highlight = reset = code

    errors._termcolor_inst = _Plain()
    # modules that took numba's scheme when they were imported (numba's own import does it):
    # ir's formats the source line of every constant numba fails to infer, in an ordinary compile
    for name in (
        "numba.core.ir",
        "numba.core.typeinfer",
        "numba.core.typing.typeof",
        "numba.core.compiler_machinery",
        "numba.core.types.functions",
    ):
        mod = sys.modules.get(name)
        if mod is not None and hasattr(mod, "_termcolor"):
            mod._termcolor = errors._termcolor_inst


_plain_numba_errors()

#: A process compiling kernels into numba's cache while this one does other work (the runner's
#: kernel helper during a first solve); :func:`await_helper` joins it.
_HELPER: Any = None


#: About how long the runner's kernel helper compiles on an idle development machine (the solver
#: bot's keep kernel, the engine's and the bots'; benchmarks/BENCHMARKS.md, "First run"), seconds.
HELPER_SECONDS = 12.0
_HELPER_T0 = 0.0
_HELPER_SECONDS = HELPER_SECONDS
_HELPER_WHAT = "the bots' kernels"


def set_helper(proc: Any, seconds: float = HELPER_SECONDS, what: str = "the bots' kernels") -> None:
    """Register a started kernel-compiling process (a ``multiprocessing.Process``), or None, with
    about how long it compiles on an idle machine (scaled by the load when announced) and what it
    compiles (said while a caller waits for it)."""
    global _HELPER, _HELPER_T0, _HELPER_SECONDS, _HELPER_WHAT
    _HELPER = proc
    _HELPER_T0 = _time.monotonic()
    _HELPER_SECONDS = seconds * _progress.load_factor()
    _HELPER_WHAT = what


def fork_helper(target: Any, seconds: float, what: str, *, register: bool = True) -> Any:
    """Start a forked process that runs ``target`` (compiling kernels into numba's cache while this
    process does other work) and register it (:func:`set_helper`; unless ``register``: the caller
    then registers it when it needs what it compiles); the process, or None, and nothing started,
    where a helper is registered already or none may be forked: only a command's own main thread
    forks one (a fork while another thread holds a lock, numba's compiler lock in a service or a
    sweep's threads, could leave the helper waiting forever), a daemonic process (a pool's or
    Dask's worker) may not start children, and some platforms cannot fork."""
    if _HELPER is not None:
        return None
    import multiprocessing
    import threading

    if threading.current_thread() is not threading.main_thread() or multiprocessing.current_process().daemon:
        return None
    try:
        proc = multiprocessing.get_context("fork").Process(target=target, name="kernel-helper", daemon=True)
        proc.start()
    except (ValueError, OSError, AssertionError):  # no fork here: the caller compiles them itself
        return None
    if register:
        set_helper(proc, seconds, what)
    return proc


def core_free() -> bool:
    """Whether a core is likely free for a helper: the 1-minute load average at most the cores
    less half of one (True where it cannot be read)."""
    try:
        import os

        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 0.5
    except (OSError, AttributeError):
        return True


def has_helper() -> bool:
    """Whether a kernel helper is registered and not yet awaited (:func:`set_helper`)."""
    return _HELPER is not None


def await_helper() -> None:
    """Before compiling what a kernel helper compiles: wait for it (its kernels then load from the
    cache), with a ticking line on stderr while it works (:mod:`harness.util.progress`)."""
    global _HELPER
    proc, _HELPER = _HELPER, None
    if proc is None:
        return
    proc.join(0.5)
    if proc.is_alive():
        t0 = _time.monotonic()
        with _progress.bar(None, "", "s", quiet=not _progress.enabled(), bar_format="{desc}") as b:
            while proc.is_alive():
                now = _time.monotonic()
                if now - _HELPER_T0 > max(120.0, 10 * _HELPER_SECONDS):
                    # far past its estimate (stuck?): this process compiles what it needs itself
                    proc.terminate()
                    break
                left = _HELPER_SECONDS - (now - _HELPER_T0)
                more = f"about {left:.0f} s more" if left >= 1 else "nearly done"
                b.set_description_str(
                    _progress.fit(f"compiling {_HELPER_WHAT} in a helper, once", tail=f": {now - t0:.0f} s, {more}")
                )
                proc.join(0.5)


def in_cache(kernel: Any) -> bool:
    """Whether numba's on-disk cache holds a compiled ``kernel`` (a dispatcher) for its current
    source; False when it cannot tell (numba's cache layout is private, and may change)."""
    try:
        return bool(kernel._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - any failure means "do not count on it"
        return False


__all__ = ["nb", "set_helper", "fork_helper", "core_free", "has_helper", "await_helper", "in_cache"]

"""Executors that play chunks: in this process, forked local processes, or a Dask cluster.

Each backend is a ``concurrent.futures.Executor`` plus the number of chunks it plays at once
(to bound the chunks submitted ahead) and an ``abort()`` that stops it promptly.

- ``local`` with 1 worker: in this process, no pool (simplest to debug, same results).
- ``local`` with W > 1: ``ProcessPoolExecutor`` with an explicit *fork* context, so workers
  inherit the parent's prepared bots, solver tables and compiled numba kernels (spawn would
  recompile for seconds per worker), and the ``multiprocessing-logging`` handler (which needs fork).
  Workers ignore SIGINT (the parent handles Ctrl-C) and die with the parent (PR_SET_PDEATHSIG).
- ``dask``: ``distributed.Client(address)``, a ``LocalCluster`` of W single-threaded worker
  processes when no address is given, or a threaded client in this process for ``inprocess``.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import multiprocessing_logging

from harness.util.address import parse_scheduler
from harness.util.cache import CACHE_ENV, default_cache_dir
from harness.util.errors import RunFailed, UserError

#: A scheduler address that means "a Dask client with threads in this process" (tests, debugging).
INPROCESS = "inprocess"

log = logging.getLogger("harness.play.runner")

LOG_FORMAT = "%(asctime)s %(levelname)s %(processName)s[%(process)d] %(name)s: %(message)s"


def cpu_count() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class InProcessExecutor(cf.Executor):
    """Runs each call at submit time in this process; the future is already done."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        f: cf.Future = cf.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except Exception as exc:  # KeyboardInterrupt propagates: Ctrl-C stops the run at once
            f.set_exception(exc)
        return f


@dataclass
class Backend:
    """An executor, how many chunks it runs at once, what it is (for the log), and how to stop it."""

    executor: cf.Executor
    slots: int
    description: str
    abort: Callable[[], None] = field(default=lambda: None)
    #: the worker threads the cluster has now (Dask; None: workers that cannot all go away unnoticed)
    alive: Callable[[], int] | None = None


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent may have turned SIGTERM into Ctrl-C
    try:  # die with the parent, even when it is SIGKILLed (Linux)
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Held:
    """Executors kept open across runs (:func:`held`): by (backend, workers, scheduler)."""

    def __init__(self) -> None:
        self.stacks: dict[tuple[Any, ...], contextlib.ExitStack] = {}
        self.open: dict[tuple[Any, ...], Backend] = {}


_HELD = _Held()


@contextlib.contextmanager
def held(backend: str, workers: int, scheduler: str | None = None) -> Iterator[None]:
    """Inside, every :func:`open_backend` of the same backend, workers and scheduler gets one
    executor, started by the first and shut down on exit: a sequence of runs (a calibration's
    evaluations) plays on the same worker processes. A local pool forks at its first chunk, so its
    workers inherit what the first run prepared; later runs' bots are made in the workers."""
    key = (backend, workers or cpu_count(), scheduler)
    if key in _HELD.stacks:
        yield
        return
    _HELD.stacks[key] = contextlib.ExitStack()
    try:
        yield
    finally:
        _HELD.open.pop(key, None)
        _HELD.stacks.pop(key).close()


@contextlib.contextmanager
def open_backend(backend: str, workers: int, scheduler: str | None) -> Iterator[Backend]:
    """Start the executor for ``backend`` (``workers`` 0 = every core) and shut it down after (inside
    :func:`held`, the held one: started once, kept)."""
    key = (backend, workers or cpu_count(), scheduler)
    stack = _HELD.stacks.get(key)
    if stack is None:
        with _open(backend, workers, scheduler) as be:
            yield be
        return
    if key not in _HELD.open:
        be = stack.enter_context(_open(backend, workers, scheduler))

        def abort(stop: Callable[[], None] = be.abort) -> None:  # a stopped run: the next one starts afresh
            _HELD.open.pop(key, None)
            stop()

        _HELD.open[key] = Backend(be.executor, be.slots, be.description + ", kept across runs", abort)
    yield _HELD.open[key]


@contextlib.contextmanager
def _open(backend: str, workers: int, scheduler: str | None) -> Iterator[Backend]:
    n = workers or cpu_count()
    if backend == "local" and n == 1:
        yield Backend(InProcessExecutor(), 1, "local, in this process")
        return
    if backend == "local":
        ctx = multiprocessing.get_context("fork")
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init)

        def abort() -> None:
            # terminate first: shutdown alone would wait for the chunks being played
            for p in list(getattr(pool, "_processes", {}).values()):
                if p.is_alive():
                    p.terminate()
            pool.shutdown(wait=False, cancel_futures=True)

        try:
            yield Backend(pool, n, f"local, {n} forked processes", abort)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    yield from _dask(n, scheduler)


#: Seconds to connect to a scheduler, then to wait for its greeting (:func:`check_scheduler`).
CONNECT_SECONDS = 3.0
GREETING_SECONDS = 5.0


def check_scheduler(address: str) -> None:
    """Refuse, in one line and within :data:`CONNECT_SECONDS` + :data:`GREETING_SECONDS`, an address
    that is malformed, refuses connections, or is not a Dask scheduler. A Dask server writes its
    handshake as a connection opens (a message starting with its length, 8 bytes); an HTTP
    server, say, writes nothing until asked, and Dask's own client would wait on it for minutes."""
    scheme, host, port = parse_scheduler(address)
    where = f"the Dask scheduler at {address}"
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_SECONDS)
    except ConnectionRefusedError:
        raise UserError(f"cannot reach {where}: connection refused (is the scheduler running, on that port?)") from None
    except TimeoutError:
        raise UserError(f"cannot reach {where}: no connection in {CONNECT_SECONDS:g} s") from None
    except OSError as exc:
        raise UserError(f"cannot reach {where}: {exc.strerror or exc}") from None
    with sock:
        if scheme == "tls":
            return  # the TLS handshake comes first: the client's own time-out covers the rest
        sock.settimeout(GREETING_SECONDS)
        head = b""
        try:
            while len(head) < 8:
                got = sock.recv(8 - len(head))
                if not got:
                    break
                head += got
        except TimeoutError:
            pass
        except OSError:
            head = b""
    size = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
    if not 0 < size < 1 << 24:
        said = f"it sent {head[:8]!r} first" if head else f"it sent nothing in {GREETING_SECONDS:g} s"
        raise UserError(f"{address} is not a Dask scheduler ({said}; a Dask scheduler greets at once)")


def dask_client(scheduler: str) -> tuple[Any, Any]:
    """(the ``distributed`` module, a client of the scheduler at ``scheduler``): one line naming the
    extra to install, a malformed address, or a scheduler that cannot be reached or is not one
    (:func:`check_scheduler`). The runner's and the exact tasks' way in."""
    distributed = require_distributed()
    check_scheduler(scheduler)
    try:
        return distributed, distributed.Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None


def require_distributed() -> Any:
    """The ``distributed`` module, or one line naming the extra that installs it."""
    try:
        import distributed  # an optional dependency (the dask extra): only for --backend dask
    except ImportError:
        raise UserError("backend dask needs dask[distributed]: pip install 'yatzy-harness[dask]'") from None
    return distributed


#: Tries to start a LocalCluster whose worker processes die while it starts them.
CLUSTER_TRIES = 3


def local_cluster(distributed: Any, **kwargs: Any) -> Any:
    """A ``distributed.LocalCluster(**kwargs)``, started again (up to :data:`CLUSTER_TRIES` times)
    when a worker process dies while the nannies start them ("Nanny failed to start worker
    process"); one line when it keeps failing."""
    for attempt in range(CLUSTER_TRIES):
        try:
            return distributed.LocalCluster(**kwargs)
        except RuntimeError as exc:
            if attempt == CLUSTER_TRIES - 1:
                raise RunFailed(
                    f"the local Dask cluster could not start its workers ({exc}, {CLUSTER_TRIES} tries); "
                    f"nothing was played or evaluated yet: run the same command again"
                ) from None
            log.warning("a Dask worker died while the cluster started (%s); starting it again", exc)
    raise AssertionError("unreachable")


def _dask(n: int, scheduler: str | None) -> Iterator[Backend]:
    distributed = require_distributed()

    cluster = None
    if scheduler == INPROCESS:
        client = distributed.Client(processes=False, n_workers=1, threads_per_worker=n, dashboard_address=None)
        what = f"dask, in this process ({n} threads)"
    elif scheduler:
        _, client = dask_client(scheduler)
        what = f"dask scheduler {scheduler}"
    else:
        # the workers it starts find the job's solver cache (harness.util.cache: not inherited by spawn)
        cluster = local_cluster(
            distributed,
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={CACHE_ENV: str(default_cache_dir())},
        )
        client = distributed.Client(cluster)
        what = f"dask LocalCluster of {n} processes"
    if scheduler != INPROCESS:
        # Dask's own log forwarding: warnings and errors logged in worker tasks (a failing bot's
        # game and traceback) are re-emitted by the same logger here, so they reach run.log
        try:
            client.forward_logging(level=logging.WARNING)
        except AttributeError:  # distributed < 2023.2
            log.warning("this Dask version cannot forward worker logs; see the workers' own logs")
    try:
        slots = max(1, sum(client.nthreads().values()))
        executor = client.get_executor(pure=False)
        yield Backend(
            executor,
            slots,
            f"{what}, {slots} threads",
            lambda: executor.shutdown(wait=False),
            lambda: sum(client.nthreads().values()),
        )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class _WorkersQueued(multiprocessing_logging.MultiProcessingHandler):
    """``multiprocessing_logging``'s wrapper, but only a worker's record travels its queue (and the
    parent's receiving thread): one logged in the parent is handled there and then, by the thread
    that logs it. Queued, the runner's "interrupted" warning was written by the receiving thread
    while the runner closed its progress bar, onto the end of the bar's line (issue 37); handled at
    once, it reaches the console handler while the bar is still drawn, which writes it above."""

    def __init__(self, name: str, sub_handler: logging.Handler) -> None:
        super().__init__(name, sub_handler)
        self._parent = os.getpid()

    def emit(self, record: logging.LogRecord) -> None:
        if os.getpid() != self._parent:  # a forked worker: to the parent through the queue
            super().emit(record)
            return
        with self.sub_handler.lock or contextlib.nullcontext():
            self.sub_handler.emit(record)  # filtered already: the wrapper shares its filters


@contextlib.contextmanager
def run_logging(log_path: Path, forked_workers: bool) -> Iterator[None]:
    """Log to ``log_path`` (and wherever the root logger already logs) for the duration of a run.

    With forked workers, the root handlers are wrapped (:class:`_WorkersQueued`) so a record a
    worker emits travels to the parent's handlers; unwrapped again afterwards. The wrapper's
    own ``close()`` would close the handler it wraps (pytest's, the console's), so it is stopped
    by hand: mark it closed and let its receiving thread drain the queue.
    """
    root = logging.getLogger()
    ours = logging.getLogger("harness")
    old_level = ours.level
    if ours.getEffectiveLevel() > logging.INFO:
        ours.setLevel(logging.INFO)
    fh = logging.FileHandler(log_path, encoding="utf-8")
    fh.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(fh)
    wrapped = False
    if forked_workers:
        if multiprocessing.get_start_method(allow_none=True) in (None, "fork"):
            for i, h in enumerate(list(root.handlers)):
                root.removeHandler(h)
                root.addHandler(_WorkersQueued(f"mp-handler-{i}", h))
            wrapped = True
        else:
            log.warning(
                "multiprocessing start method is %s, not fork: worker log records stay in the workers' stderr",
                multiprocessing.get_start_method(),
            )
    try:
        yield
    finally:
        if wrapped:
            for h in list(root.handlers):
                if isinstance(h, multiprocessing_logging.MultiProcessingHandler):
                    root.removeHandler(h)
                    root.addHandler(h.sub_handler)
                    h._is_closed = True
                    h._receive_thread.join(5.0)
        root.removeHandler(fh)
        fh.close()
        ours.setLevel(old_level)

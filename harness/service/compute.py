"""The expensive lane in a process of its own: large bodies are read, planned and worked out there.

With both lanes as threads of one process, a cheap level's p99 beside one 10,000-position batch a
second was 24-31 ms against 5-6 ms alone (BENCHMARKS.md, "A cheap level beside expensive work"),
although the decision kernels release the GIL: orjson parses the batch's body (9-14 ms) and numpy
reads its nested lists (about 14 ms) holding the GIL, each one stall for every cheap request in
flight. So a server process keeps the cheap lane and hands every expensive request (estimated over
``--cheap-ms``) and every body over :data:`LARGE_BODY` bytes, unparsed, to a *compute process*
forked from it once warm: the body's bytes go over a socket pair, the answer's JSON comes back.

The compute process shares the warm tables, kernels and caches copy-on-write and holds the
expensive lane (its admission, queue cap and deadlines: :mod:`harness.service.lanes`, the budget
being what is left of the request's). It ignores the signals an operator sends the server and
ends when the server's end of the socket closes, after the work it holds. One that dies is forked
again at once; the requests it held get 503 ``compute_lost``. One that works far past a request's
deadline (a block of positions cannot take seconds, so something is broken) is killed as a
backstop: the refusals before any work are what keep oversized requests off it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import gc
import logging
import multiprocessing
import multiprocessing.util  # its exit handler (joining children) runs after _close_all
import os
import pickle
import signal
import socket
import struct
import threading
import time
import weakref
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from typing import Any, Callable

import orjson

from harness.play.protocol import messages as msgs
from harness.service.front import REQUEST_ID
from harness.service.lanes import Busy, Lanes
from harness.service.locks import after_fork
from harness.service.serve import RequestError, Service

log = logging.getLogger("harness.serve")

#: Bodies over this many bytes go to the compute process unparsed (a batch of about 700 positions).
LARGE_BODY = 64 << 10
#: Seconds past a request's deadline after which its compute process is killed (a backstop).
GRACE = 5.0
_HEAD = struct.Struct("!I")
_FORK = multiprocessing.get_context("fork")


def to_json(obj: Any) -> bytes:
    """An answer's JSON, as every route writes it."""
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY)


@dataclass(frozen=True)
class Ask:
    """A request handed to the compute process: its route, defaults, body and absolute deadline
    (``time.monotonic()``, the same clock in every process of the machine)."""

    key: int
    route: str
    level: str | None
    bot: str | None
    body: bytes
    deadline: float
    request_id: str


@dataclass(frozen=True)
class Answer:
    """The compute process's reply: the answer's JSON (200), or a refusal's status, id and message."""

    key: int
    status: int = 200
    body: bytes = b""
    error: str = ""
    message: str = ""
    retry_after: int | None = None
    served: str | None = None
    positions: int = 0

    @classmethod
    def refusal(cls, key: int, exc: RequestError) -> Answer:
        return cls(key, exc.status, error=exc.error, message=str(exc), retry_after=getattr(exc, "retry_after", None))

    @classmethod
    def internal(cls, key: int) -> Answer:
        """A fault of ours (logged with its traceback where it happened): a 500 without one."""
        return cls(key, 500, error="internal", message="internal error; the server's log has the details")

    def raise_refusal(self) -> None:
        """Raise the refusal this answer carries (nothing for a 200)."""
        if self.status == 200:
            return
        if self.retry_after is not None:
            raise Busy(self.error, self.message, self.retry_after)
        raise RequestError(self.status, self.error, self.message)


# -- the compute process ------------------------------------------------------------------------


def _send(sock: socket.socket, obj: Any, lock: threading.Lock) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    with lock:
        sock.sendall(_HEAD.pack(len(data)))
        sock.sendall(data)


def _recv(sock: socket.socket) -> Any:
    """The next object on ``sock``; None once the other end has closed it."""
    head = _read(sock, _HEAD.size)
    if head is None:
        return None
    data = _read(sock, _HEAD.unpack(head)[0])
    return None if data is None else pickle.loads(data)


def _read(sock: socket.socket, n: int) -> bytearray | None:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return buf


def _serve_asks(sock: socket.socket, service: Service, lanes: Lanes) -> None:
    """The compute process's loop: read each request, plan and admit it on the expensive lane (or
    refuse it at once), work it out on the lane's threads, send the answer; until the socket closes."""
    lock = threading.Lock()
    while (ask := _recv(sock)) is not None:
        REQUEST_ID.set(ask.request_id)
        try:
            msg = msgs.loads(ask.body)
        except ValueError as exc:
            _send(sock, Answer(ask.key, 400, error="bad_json", message=f"the body is not JSON: {exc}"), lock)
            continue
        try:
            plan = service.plan(msg, route=ask.route, level=ask.level, bot=ask.bot)
            if plan is None:  # hello, newgame, ping: no work
                _send(sock, Answer(ask.key, body=to_json(service.handle(msg, level=ask.level, bot=ask.bot))), lock)
                continue
            served, estimate, n = plan
            lane = lanes.admit(estimate, ask.deadline - time.monotonic())
            urgent = lane is lanes.cheap
        except RequestError as exc:
            _send(sock, Answer.refusal(ask.key, exc), lock)
            continue
        except Exception:  # a fault of ours: this request's 500, and the process goes on
            log.exception("internal error serving %s", ask.route)
            _send(sock, Answer.internal(ask.key), lock)
            continue

        def work(ask: Ask = ask, msg: Any = msg, served: str = served, n: int = n, urgent: bool = urgent) -> None:
            try:
                out = service.compute(
                    msg, route=ask.route, level=ask.level, bot=ask.bot, deadline=ask.deadline, urgent=urgent
                )
                answer = Answer(ask.key, body=to_json(out), served=served, positions=n)
            except RequestError as exc:
                answer = Answer.refusal(ask.key, exc)
            except Exception:
                log.exception("internal error serving %s", ask.route)
                answer = Answer.internal(ask.key)
            _send(sock, answer, lock)

        lanes.submit(lane, estimate, contextvars.copy_context(), work)
    lanes.close(wait=True)


def _become_compute(sock: socket.socket, service: Service, lanes: Callable[[], Lanes]) -> None:
    """What a forked compute process runs: it keeps only its socket and stdio (no client connection
    or listening socket of the server stays open in it), fresh locks, and no say in the signals."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(sig, signal.SIG_IGN)
    fd = sock.fileno()
    os.closerange(3, fd)
    os.closerange(fd + 1, 1 << 16)
    after_fork()
    gc.freeze()  # what it shares with the server stays unwalked and unwritten by its collector
    _serve_asks(sock, service, lanes())


# -- the server's side --------------------------------------------------------------------------


@dataclass(eq=False)
class _Child:
    """One compute process, seen from the server process: its socket, and the answers it owes."""

    proc: BaseProcess
    sock: socket.socket
    service: Service
    pending: dict[int, asyncio.Future[Answer]] = field(default_factory=dict)
    writer: asyncio.StreamWriter | None = None
    loop: asyncio.AbstractEventLoop | None = None
    connecting: asyncio.Lock | None = None
    retired: bool = False
    gone: bool = False


class Compute:
    """The server process's compute process: :meth:`start` forks one from the warm service (a new
    one after a reload; the one before finishes what it holds, then ends); :meth:`ask` hands it a
    request and awaits its answer. ``lanes`` makes the compute process's lanes."""

    def __init__(self, lanes: Callable[[], Lanes]) -> None:
        self.lanes = lanes
        self.current: _Child | None = None
        self._keys = iter(range(1 << 62))

    @property
    def held(self) -> int:
        """Requests the compute process holds (queued or running)."""
        return len(self.current.pending) if self.current is not None else 0

    def start(self, service: Service) -> None:
        """Fork a compute process serving ``service`` and make it the current one."""
        ours, theirs = socket.socketpair()
        proc = _FORK.Process(target=_become_compute, args=(theirs, service, self.lanes), name="compute")
        proc.start()  # forked: it shares the warm service, and never returns into the server's frames
        theirs.close()
        old, self.current = self.current, _Child(proc, ours, service)
        _CHILDREN.add(self.current)
        if old is not None:
            self._retire(old)

    def stop(self) -> None:
        """End the current compute process, the server being stopped (its requests drained): its
        socket closes now, so it ends after the work it holds, if any."""
        child, self.current = self.current, None
        if child is not None:
            _close(child)

    async def ask(self, route: str, level: str | None, bot: str | None, body: bytes, deadline: float) -> Answer:
        """The compute process's answer to a request (a refusal is an answer too); 503
        ``compute_lost`` when it died holding it, 503 ``deadline`` when it overran it by ``GRACE``."""
        child = self.current
        if child is None or child.gone:
            raise Busy("compute_lost", "the server's compute process is restarting", 1)
        writer = await self._connect(child)
        key = next(self._keys)
        fut: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        child.pending[key] = fut
        data = pickle.dumps(Ask(key, route, level, bot, body, deadline, REQUEST_ID.get()), pickle.HIGHEST_PROTOCOL)
        try:
            writer.write(_HEAD.pack(len(data)))
            writer.write(data)
            await writer.drain()
            return await asyncio.wait_for(asyncio.shield(fut), max(deadline - time.monotonic(), 0.0) + GRACE)
        except TimeoutError:
            log.error("compute process %d ran %g s past a request's deadline: killed", child.proc.pid, GRACE)
            self._kill(child)
            raise RequestError(
                503, "deadline", "the request passed its compute budget before it was done; send smaller batches"
            ) from None
        except (ConnectionError, OSError):
            raise Busy("compute_lost", "the server's compute process ended while holding this request", 1) from None
        finally:
            child.pending.pop(key, None)

    async def _connect(self, child: _Child) -> asyncio.StreamWriter:
        """The child's socket as streams of this event loop, and the task reading its answers."""
        if child.writer is not None:
            return child.writer
        if child.connecting is None:
            child.connecting = asyncio.Lock()
        async with child.connecting:
            if child.writer is None:
                reader, writer = await asyncio.open_unix_connection(sock=child.sock)
                child.loop = asyncio.get_running_loop()
                child.loop.create_task(self._answers(child, reader))
                child.writer = writer
        return child.writer

    async def _answers(self, child: _Child, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                head = await reader.readexactly(_HEAD.size)
                answer: Answer = pickle.loads(await reader.readexactly(_HEAD.unpack(head)[0]))
                fut = child.pending.pop(answer.key, None)
                if fut is not None and not fut.done():
                    fut.set_result(answer)
                if child.retired and not child.pending:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self._ended(child)

    def _ended(self, child: _Child) -> None:
        """The child's socket is done with: close it, answer what it held, reap the process, and
        fork another when it was the current one (it died)."""
        _close(child)
        for fut in child.pending.values():
            if not fut.done():
                fut.set_exception(
                    Busy("compute_lost", "the server's compute process ended while holding this request", 1)
                )
        child.pending.clear()
        if child is self.current:
            log.error("compute process %d ended; forking another", child.proc.pid)
            try:
                self.start(child.service)
            except OSError as exc:
                log.error("cannot fork a compute process (%s): the expensive lane runs on threads", exc)
                self.current = None

    def _retire(self, child: _Child) -> None:
        """No more requests for ``child``: its socket closes once it has answered what it holds
        (from any thread: the socket's streams belong to the event loop that opened them)."""
        child.retired = True
        loop = child.loop
        if loop is None:  # never asked anything: no event loop owns its socket
            _close(child)
        elif _in(loop):
            self._close_if_idle(child)
        else:
            loop.call_soon_threadsafe(self._close_if_idle, child)

    def _close_if_idle(self, child: _Child) -> None:
        if not child.pending and child.writer is not None:
            child.writer.close()  # the reading task sees the end, then reaps (_ended)

    def _kill(self, child: _Child) -> None:
        try:
            child.proc.kill()
        except (ProcessLookupError, ValueError):
            pass


def _close(child: _Child) -> None:
    """Close the server's end of ``child``'s socket at once (from the event loop's thread, or once
    no loop runs): the compute process sees the end and exits."""
    child.retired = child.gone = True
    if child.writer is not None and child.loop is not None and _in(child.loop):
        child.writer.close()  # stops the loop reading it, before the socket goes
    child.sock.close()
    threading.Thread(target=child.proc.join, name="reap", daemon=True).start()


_CHILDREN: weakref.WeakSet[_Child] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At the server's exit, before multiprocessing joins its children: every compute process's
    socket closed, so none waits for a server that waits for it."""
    for child in list(_CHILDREN):
        _close(child)


def _in(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False

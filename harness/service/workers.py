"""Several server processes on one port, forked after warm-up so they share its memory.

uvicorn's own ``--workers`` spawns fresh interpreters, each loading the tables and filling its
caches again (545-555 MiB a worker). Here one process binds the port, answers it while it warms
up (``/health`` 200, ``/ready`` 503, a single uvicorn server), and once every table and kernel is
warm stops that server and forks the workers: each starts with the warm tables, kernels and
decision caches of the parent, shared copy-on-write, and serves the same listening socket. The
parent serves nothing after that; it supervises: SIGTERM or SIGINT drains the workers, SIGHUP
prepares the new levels file in the parent and replaces the workers with a new generation forked
from it (the old ones drain their requests), and a worker that dies is forked again.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from typing import Any, Callable

from harness.service.app import ServeApp, make_service
from harness.service.auth import read_tokens

log = logging.getLogger("harness.serve")


def _stop_accepting(srv: Any) -> None:
    """SIGUSR1 in a worker: its uvicorn server stops accepting connections (the listening socket
    stays open for the other processes), on its event loop; it keeps serving those it has."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_soon_threadsafe(lambda: [s.close() for s in getattr(srv, "servers", [])])


class WorkerDone(BaseException):
    """Raised in a forked worker once it has served: ``code`` is the exit status its caller gives
    the process (with ``os._exit``, past every clean-up of the parent's frames)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """The listening socket every process of the server shares (IPv4, or IPv6 for an address with ':')."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


class Forked:
    """The parent of ``workers`` forked server processes. ``server`` makes a uvicorn server for an
    app (the command's settings: protocol, limits, logging); ``after_fork`` runs in each worker
    before it serves (prometheus-client's bookkeeping, for one)."""

    def __init__(
        self,
        served: ServeApp,
        sock: socket.socket,
        workers: int,
        server: Callable[[Any], Any],
        on_exit: Callable[[int], None] | None = None,
    ) -> None:
        self.served, self.sock, self.workers, self.server = served, sock, workers, server
        self.on_exit = on_exit
        self.pids: list[int] = []
        self._signal: int | None = None

    def warm_up(self) -> bool:
        """Serve the port with this process until every table and kernel is warm: True then; False
        when the server was stopped (SIGTERM) or its warm-up failed first."""
        srv = self.server(self.served.app)
        done = self.served.on_ready

        def ready() -> None:
            if done is not None:
                done()
            srv.should_exit = True  # the workers take over the port

        self.served.on_ready = ready
        self.served.conf = self.served.conf | {"sighup": False, "forks_workers": True}
        srv.run(sockets=[self.sock.dup()])
        self.served.on_ready = done
        return self.served.ready

    def fork(self) -> int:
        """Fork a worker: the parent gets its pid; the worker serves until it is stopped, then raises
        :class:`WorkerDone`, which its caller turns into the process's exit (never running the
        parent's clean-up: the worker's copy of the supervisor loop must not go on)."""
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)  # uvicorn sets its own
                signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the parent reloads, for every worker
                self.served.renew()
                srv = self.server(self.served.app)
                signal.signal(signal.SIGUSR1, lambda *_: _stop_accepting(srv))
                srv.run(sockets=[self.sock.dup()])
            except Exception:  # a worker reports and exits; the parent forks another
                log.exception("worker %d failed", os.getpid())
                code = 1
            raise WorkerDone(code)
        return pid

    def run(self) -> None:
        """Fork the workers and supervise them until SIGTERM or SIGINT."""
        for one in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(one, self._note)
        self.pids = [self.fork() for _ in range(self.workers)]
        while True:
            sig, self._signal = self._signal, None
            if sig in (signal.SIGTERM, signal.SIGINT):
                self._stop(self.pids)
                return
            if sig == signal.SIGHUP:
                self._reload()
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid and pid in self.pids:
                if self.on_exit is not None:
                    self.on_exit(pid)
                log.error("worker %d exited (status %d); forking another", pid, status)
                self.pids[self.pids.index(pid)] = self.fork()
            elif pid and self.on_exit is not None:
                self.on_exit(pid)
            time.sleep(0.1)

    def _note(self, sig: int, frame: Any) -> None:
        self._signal = sig

    def _reload(self) -> None:
        """Prepare the levels and token files again here, fork a new generation from them, then
        drain the old one: no request is refused on the way (both generations accept meanwhile)."""
        try:
            new = make_service(self.served.conf)
            tokens = read_tokens(self.served.conf["token_file"]) if self.served.conf.get("token_file") else ()
            new.prepare()
        except Exception as exc:
            log.error("reload failed, the files in service stay: %s", exc)
            self.served.metrics.reloads.labels("failed").inc()
            return
        self.served.service, self.served.tokens = new, tokens
        self.served.metrics.reloads.labels("ok").inc()
        old, self.pids = self.pids, [self.fork() for _ in range(self.workers)]
        time.sleep(0.5)  # the new generation's servers listening before the old ones stop accepting
        for pid in old:  # no new connection for the old generation ...
            try:
                os.kill(pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass
        time.sleep(1.0)  # ... whose requests accepted meanwhile are read, then answered while it drains
        self._stop(old)
        log.info("reloaded: levels sha256 %s, workers %s", new.levels_sha256, self.pids)

    def _stop(self, pids: list[int]) -> None:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            if self.on_exit is not None:
                self.on_exit(pid)

"""The same messages as HTTP POST bodies: one request, one JSON reply, over a kept-alive connection.

An engine behind a URL answers every message POSTed to it (``hello``, ``newgame``, ``decide``,
``ping``) with the reply the stdio transport would print. There is no process to restart: a
refused or dropped connection is a crash (the next request connects again), no reply before the
deadline a time fault (the connection is dropped: a late reply must not answer a later request).
"""

from __future__ import annotations

import http.client
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from harness.util.errors import UserError
from harness.play.protocol.stdio import MAX_LINE, EngineDied, EngineFlood


class HttpTimeout(RuntimeError):
    """No reply before the deadline."""


class HttpRejected(RuntimeError):
    """The server answered with a status other than 200 (4xx: it refused the request)."""


def check_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with its query) of an engine URL, or a :class:`UserError` naming what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"engine url must be http://HOST[:PORT]/PATH, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UserError(f"engine url {url!r} has a bad port") from None
    return parts.scheme, parts.hostname, port, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class HttpEngine:
    """An engine at a URL; :meth:`exchange` POSTs one message and returns the reply's body."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url
        self.scheme, self.host, self.port, self.path = check_url(url)
        self.token = token
        self.conn: http.client.HTTPConnection | None = None

    def _connect(self, timeout: float) -> http.client.HTTPConnection:
        if self.conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            self.conn = cls(self.host, self.port, timeout=timeout)
        else:
            self.conn.timeout = timeout
            if self.conn.sock is not None:
                self.conn.sock.settimeout(timeout)
        return self.conn

    def exchange(self, body: bytes, deadline: float) -> bytes:
        """POST ``body``; the reply's body. :class:`HttpTimeout` past ``deadline``; :class:`EngineDied`
        when the connection fails or the server fails (5xx); :class:`HttpRejected` on a 4xx; :class:`EngineFlood` past the size cap."""
        wait = max(deadline - time.monotonic(), 0.001)
        headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (0, 1):  # a kept-alive connection the server closed: reconnect once
            conn = self._connect(wait)
            try:
                conn.request("POST", self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read(MAX_LINE + 1)
            except TimeoutError:
                self.close()
                raise HttpTimeout(f"no reply from {self.url} in time") from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if attempt == 0:
                    continue
                raise EngineDied(f"{self.url} closed the connection: {exc}") from None
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise EngineDied(f"cannot reach {self.url}: {exc}") from None
            if len(data) > MAX_LINE:
                self.close()
                raise EngineFlood(f"{self.url} replied with over {MAX_LINE >> 20} MiB")
            if resp.status != 200:
                text = data[:200].decode(errors="replace").strip()
                if resp.status >= 500:
                    raise EngineDied(f"{self.url} replied HTTP {resp.status}: {text}")
                raise HttpRejected(f"{self.url} replied HTTP {resp.status}: {text}")
            return data
        raise EngineDied(f"cannot reach {self.url}")

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (the operating system's pick)."""

    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def launch_server(
    args: list[str], *, env: dict[str, str] | None = None, timeout: float = 300.0, stderr: int | None = None
) -> tuple[Any, str]:
    """Start ``yatzy-harness serve ARGS --port P`` (this interpreter, a free port P) and wait until its
    ``/ready`` answers 200 (tables loaded and warmed): (the process, its base URL). The caller
    stops it (SIGTERM drains it). :class:`EngineDied` when it exits or is not ready in ``timeout``."""
    import subprocess
    import sys

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", *args, "--port", str(port)], env=env, stderr=stderr
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EngineDied(f"serve exited with status {proc.returncode} before it was ready")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        try:
            conn.request("GET", "/ready")
            if conn.getresponse().status == 200:
                return proc, url
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.2)
    proc.kill()
    raise EngineDied(f"serve was not ready in {timeout:g} s")

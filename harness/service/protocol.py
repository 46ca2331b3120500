"""uvicorn's h11 protocol with a deadline for each request's head, which uvicorn itself lacks.

uvicorn closes a kept-alive connection ``timeout_keep_alive`` seconds after a response, but the
timer stops at the first byte received and never starts on a new connection: a client that opens
a connection and sends nothing, or sends a header line every few seconds, holds it forever. Here a
connection must send a whole request head within ``timeout_keep_alive`` seconds of opening and of
each response; otherwise it is closed. That one deadline is the idle keep-alive timeout and the
header-read deadline at once (``serve --idle-timeout``). The body has its own deadline, in the app.

It subclasses :class:`uvicorn.protocols.http.h11_impl.H11Protocol` and uses three of its
attributes (``conn``, ``transport``, ``loop``) and two of its methods: a uvicorn release that
changes them breaks ``tests/test_serve_production.py``'s idle and slow-header tests, and
:func:`check` refuses to start rather than serve without the deadline.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class HeadDeadlineProtocol(H11Protocol):
    """An h11 connection closed when no whole request head arrives in ``timeout_keep_alive`` s."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.timeout_keep_alive, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        # IDLE: the client has not finished a request's head since the timer started
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def check() -> None:
    """Raise if this uvicorn's h11 protocol lacks what :class:`HeadDeadlineProtocol` relies on."""
    for name in ("connection_made", "on_response_complete", "connection_lost"):
        if not callable(getattr(H11Protocol, name, None)):
            raise RuntimeError(f"uvicorn's H11Protocol has no {name}(): serve's connection deadline needs it")

"""The ASGI layer in front of every route: the request id, the token, the access log and the metrics.

Pure ASGI (no Starlette middleware class): it runs on every request, a single decision's included.
A request's id is its ``X-Request-ID`` when that is a short token of safe characters, else a new
one; it is on the response and, through :data:`REQUEST_ID`, on every log line written while the
request is served. Every route but ``/health`` and ``/ready`` needs the token when the server has
one (``/openapi.json``, ``/docs`` and ``/metrics`` too); the answer to a bad or missing
``Authorization`` header, whatever its bytes, is a 401.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid
from typing import Any, Awaitable, Callable

import orjson

from harness.service.auth import authorised
from harness.service.metrics import Metrics

#: The id of the request being served, for log lines (``-`` outside a request).
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
#: Routes an orchestrator probes without a token.
OPEN = ("/health", "/ready")
_GOOD_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")

access_log = logging.getLogger("harness.serve.access")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (what a log format's ``%(request_id)s`` prints)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class Front:
    """Wraps the app: ``tokens()`` the valid tokens now (reloadable), ``headers()`` the provenance
    headers of a response the app did not make (a 401); ``access`` logs one JSON line a request."""

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        *,
        tokens: Callable[[], tuple[bytes, ...]],
        headers: Callable[[], dict[str, str]],
        metrics: Metrics,
        access: bool = False,
    ) -> None:
        self.app, self.tokens, self.headers, self.metrics, self.access = app, tokens, headers, metrics, access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        raw = dict(scope["headers"]).get(b"x-request-id", b"")
        rid = raw.decode("ascii") if _GOOD_ID.fullmatch(raw) else uuid.uuid4().hex
        token = REQUEST_ID.set(rid)
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        status = [500]
        rid_header = (b"x-request-id", rid.encode("ascii"))

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message["headers"] = [*message.get("headers", []), rid_header]
            await send(message)

        path = scope.get("path", "")
        try:
            if path not in OPEN and not authorised(scope["headers"], self.tokens()):
                await self._unauthorised(send_with_id)
                state["error"] = "unauthorised"
            else:
                await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)
            self._record(scope, state, status[0], time.perf_counter() - t0, rid)

    async def _unauthorised(self, send: Send) -> None:
        body = orjson.dumps(
            {"error": {"id": "unauthorised", "message": "this server needs Authorization: Bearer TOKEN"}}
        )
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers().items()]
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _record(self, scope: Scope, state: dict[str, Any], status: int, seconds: float, rid: str) -> None:
        m = self.metrics
        route = m.route(scope.get("path", ""))
        served = state.get("served", "-")
        m.requests.labels(route, str(status)).inc()
        m.seconds.labels(route, served).observe(seconds)
        if state.get("error"):
            m.refused.labels(state["error"]).inc()
        if self.access:
            client = scope.get("client")
            access_log.info(
                json.dumps(
                    {
                        "time": round(time.time(), 3),
                        "request_id": rid,
                        "client": client[0] if client else None,
                        "method": scope.get("method"),
                        "path": scope.get("path"),
                        "status": status,
                        "ms": round(seconds * 1000, 2),
                        "served": served,
                        "error": state.get("error"),
                        "levels_sha256": state.get("levels_sha256"),
                    },
                    separators=(",", ":"),
                )
            )

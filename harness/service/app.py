"""``yatzy-harness serve``: the harness's levels and bots over HTTP, an ASGI app on Starlette.

Starlette (under uvicorn) rather than FastAPI: every body is read by the protocol's own reader
(:func:`harness.play.protocol.messages.read_positions`, the code path the referee's answers take
too), so a pydantic model would parse each batch a second time for nothing; the OpenAPI document
is built from the protocol's JSON Schema instead, and ``/docs`` renders it as one self-contained
page (no script or style sheet fetched from anywhere).

What it promises (docs/production.md): the port answers at once and the tables warm in the
background (``/health`` 200 while the process lives, ``/ready`` 503 until every served player is
warm); a request is refused before any work when its estimated cost does not fit its budget, and
stops at its deadline (:mod:`harness.service.lanes`); cheap and expensive work run on separate
threads; a body must arrive within ``body_timeout`` seconds (a JSON 408); every refusal is a 4xx or
503 with a one-line JSON error ``{"error": {"id": ..., "message": ...}}``, an internal fault a
logged 500 without a traceback; SIGHUP reloads the levels file (and the token file) in the
background and swaps the service at once, each answer's ``X-Levels-SHA256`` naming the file it
came from. The token, the request id, the access log and the metrics are :mod:`harness.service.front`'s.
"""

from __future__ import annotations

import gc
import html
import json
import logging
import os
import signal
import threading
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from harness.play.protocol import PROTOCOL
from harness.play.protocol import messages as msgs
from harness.service.auth import read_tokens
from harness.service.compute import LARGE_BODY, Compute, to_json
from harness.service.front import Front
from harness.service.lanes import CHEAP_SECONDS, QUEUE, Busy, Lane, Lanes
from harness.service.metrics import CONTENT_TYPE, Metrics
from harness.service.serve import DEFAULT_BOTS, RequestError, Service
from harness.util.errors import UserError

log = logging.getLogger("harness.serve")

#: Largest request body (bytes): a batch of 10,000 positions is about 2 MB.
MAX_BODY = 8 << 20
#: A request's compute budget (seconds): refused at once when its estimated cost is over it,
#: stopped when its work passes it.
COMPUTE_TIMEOUT = 10.0
#: A request estimated at most this many seconds of work (a single decision) is worked out on the
#: event loop itself: a hop to a lane's thread and back costs more, and waits for the GIL twice.
INLINE_SECONDS = 0.001
#: Seconds a client has to send a request's whole body once its head has arrived.
BODY_TIMEOUT = 10.0


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(to_json(obj), status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
    """The one-line JSON error of every refused request (never a traceback)."""
    return json_response({"error": {"id": error, "message": " ".join(str(message).split())[:500]}}, status, headers)


def version_of_harness() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("yatzy-harness")
    except PackageNotFoundError:
        return "unknown"


def settle_heap() -> None:
    """Collect, then freeze what is left (the warm service's objects) out of the garbage collector's
    reach: a full collection walked them all, 0.2 s at a time on this machine, and stalled every
    request in flight (the p99 of clients that open a connection per request, BENCHMARKS.md); it also
    no longer writes to their pages, which forked workers share copy-on-write. Objects frozen by a
    reload before are thawed first, so the service a reload replaces can still be collected."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def make_service(conf: dict[str, Any]) -> Service:
    """The service a configuration describes (levels file, rule sets, bots, batch cap), not prepared."""
    return Service(
        conf.get("levels"),
        tuple(conf.get("rules", ())),
        bots=tuple(conf.get("bots") or DEFAULT_BOTS),
        max_batch=int(conf.get("max_batch", 10_000)),
        version=version_of_harness(),
    )


class ServeApp:
    """The app's state: the service (swapped whole by a reload), the tokens, the limits, the lanes;
    ``app`` is the ASGI application. ``progress`` and ``on_ready`` hear the warm-up's steps."""

    def __init__(
        self,
        conf: dict[str, Any],
        service: Service | None = None,
        *,
        progress: Callable[[str], None] | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.conf = conf
        self.service = service if service is not None else make_service(conf)
        self.tokens = read_tokens(conf["token_file"]) if conf.get("token_file") else ()
        self.max_body = int(conf.get("max_body", MAX_BODY))
        self.timeout = float(conf.get("timeout", COMPUTE_TIMEOUT))
        self.body_timeout = float(conf.get("body_timeout", BODY_TIMEOUT))
        self.inline = float(conf.get("inline_ms", INLINE_SECONDS * 1000)) / 1000
        self.lanes = self._lanes()
        self.compute: Compute | None = None
        self.metrics = Metrics()
        self.progress, self.on_ready = progress, on_ready
        self.ready = False
        self.failed: str | None = None
        self._reloading = threading.Lock()
        routes = Starlette(
            routes=[
                Route("/decide", self.decide, methods=["POST"]),
                Route("/advise", self.advise, methods=["POST"]),
                Route("/levels", self.levels, methods=["GET"]),
                Route("/health", self.health, methods=["GET"]),
                Route("/ready", self.ready_route, methods=["GET"]),
                Route("/metrics", self.metrics_route, methods=["GET"]),
                Route("/openapi.json", self.openapi, methods=["GET"]),
                Route("/docs", self.docs, methods=["GET"]),
            ],
            exception_handlers={HTTPException: self._http_error, Exception: self._internal},
            lifespan=self._lifespan,
        )
        self.app = Front(
            routes,
            tokens=lambda: self.tokens,
            headers=lambda: self._headers(self.service),
            metrics=self.metrics,
            access=bool(conf.get("access_log")),
        )

    def _lanes(self) -> Lanes:
        c = self.conf
        return Lanes(
            cheap_threads=int(c.get("cheap_threads", 1)),
            expensive_threads=int(c.get("expensive_threads", 1)),
            queue=int(c.get("queue", QUEUE)),
            cheap_seconds=float(c.get("cheap_ms", CHEAP_SECONDS * 1000)) / 1000,
        )

    def renew(self) -> None:
        """New lanes for a forked worker (a fork keeps no thread of its parent), its own compute
        process and its own ready gauge."""
        self.lanes = self._lanes()
        self.compute = None
        self.start_compute()
        self.metrics.ready.set(1 if self.ready else 0)

    def start_compute(self) -> None:
        """Fork the compute process (the expensive lane, :mod:`harness.service.compute`) from the
        warm service, or a new one from a reloaded service; the expensive lane stays on this
        process's threads when the configuration asks so or a fork fails."""
        if not self.conf.get("expensive_process"):
            return
        if self.compute is None:
            self.compute = Compute(self._lanes)
        try:
            self.compute.start(self.service)
        except OSError as exc:
            log.error("cannot fork a compute process (%s): the expensive lane runs on threads", exc)
            self.compute = None

    # -- start-up, reload ----------------------------------------------------------------------

    def warm(self) -> None:
        """Prepare the service (tables, kernels, costs); the server is ready after it."""
        self.service.prepare(progress=self.progress)
        settle_heap()
        if not self.conf.get("forks_workers"):  # else each forked worker starts its own
            self.start_compute()
        self.ready = True
        self.metrics.ready.set(1)
        if self.on_ready is not None:
            self.on_ready()
        else:
            log.info("ready: every served table and kernel is warm")

    def _warm_in_background(self) -> None:
        try:
            self.warm()
        except Exception as exc:  # a server that cannot warm up is not alive: /health says so
            self.failed = str(exc) or type(exc).__name__
            log.error("warm-up failed: %s", self.failed, exc_info=not isinstance(exc, UserError))

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """The port answers at once; warm-up runs on a thread of its own (``/ready`` says when it is
        done), unless the configuration asks to warm before serving (worker processes: see the command)."""
        if not self.ready:
            if self.conf.get("warm_before_serving"):
                await anyio.to_thread.run_sync(self.warm)
            else:
                threading.Thread(target=self._warm_in_background, name="warm-up", daemon=True).start()
        if self.conf.get("sighup", True) and threading.current_thread() is threading.main_thread():
            try:  # SIGHUP: reload the levels file (uvicorn's own signals are SIGINT and SIGTERM)
                import asyncio

                asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.reload)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            yield
        finally:
            self.lanes.close()
            if self.compute is not None:
                self.compute.stop()

    def reload(self) -> bool:
        """Load the levels file (and the token file) again on a thread and swap them in once warm;
        False when a reload is already under way. A file that fails keeps the one in service."""
        if not self._reloading.acquire(blocking=False):
            log.warning("reload: one is under way already")
            return False
        threading.Thread(target=self._reload, name="reload", daemon=True).start()
        return True

    def _reload(self) -> None:
        try:
            new = make_service(self.conf)
            tokens = read_tokens(self.conf["token_file"]) if self.conf.get("token_file") else ()
            new.prepare()
            if self.compute is not None:  # the new levels' compute process first, then the swap
                self.compute.start(new)
            self.service, self.tokens = new, tokens  # each answer uses the service it started with
            settle_heap()
            self.metrics.reloads.labels("ok").inc()
            log.info("reloaded: levels sha256 %s", new.levels_sha256)
        except Exception as exc:
            self.metrics.reloads.labels("failed").inc()
            log.error("reload failed, the files in service stay: %s", exc, exc_info=not isinstance(exc, UserError))
        finally:
            self._reloading.release()

    # -- plumbing -------------------------------------------------------------------------------

    def _headers(self, service: Service) -> dict[str, str]:
        """Every response's provenance (errors' too): the harness's version, the levels file's sha256."""
        return {"X-Yatzy-Harness": service.version or "unknown", "X-Levels-SHA256": service.levels_sha256 or "none"}

    def _error(
        self,
        request: Request,
        status: int,
        error: str,
        message: str,
        service: Service | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        request.state.error = error
        return error_response(status, error, message, self._headers(service or self.service) | (headers or {}))

    def _refused(self, request: Request, exc: RequestError, service: Service) -> Response:
        """A refusal's answer; a :class:`Busy` one says when to retry."""
        retry = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Busy) else None
        return self._error(request, exc.status, exc.error, str(exc), service, retry)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        ids = {404: "not_found", 405: "method_not_allowed"}
        return self._error(request, exc.status_code, ids.get(exc.status_code, "http_error"), exc.detail)

    async def _internal(self, request: Request, exc: Exception) -> Response:
        log.error("internal error serving %s %s", request.method, request.url.path, exc_info=exc)
        return self._error(request, 500, "internal", "internal error; the server's log has the details")

    async def _body(self, request: Request) -> bytes:
        """The request's body, read up to the cap (413) within ``body_timeout`` seconds (408)."""
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            raise RequestError(413, "too_large", f"a request body holds at most {self.max_body:,} bytes")
        chunks, size = [], 0
        try:
            with anyio.fail_after(self.body_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > self.max_body:
                        raise RequestError(413, "too_large", f"a request body holds at most {self.max_body:,} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            log.warning("body not received in %g s (%d bytes of it): 408", self.body_timeout, size)
            raise RequestError(408, "body_timeout", f"the body did not arrive within {self.body_timeout:g} s") from None
        except ClientDisconnect:
            log.warning("client left before sending its whole body (%d bytes of it)", size)
            raise RequestError(400, "client_left", "the client left before sending its body") from None
        return b"".join(chunks)

    async def _serve(self, request: Request, route: str) -> Response:
        service = self.service  # the one that answers, whatever a reload swaps in meanwhile
        request.state.levels_sha256 = service.levels_sha256
        if not self.ready:
            return self._error(
                request,
                503,
                "starting",
                "the server is warming up its tables (GET /ready)",
                service,
                {"Retry-After": "5"},
            )
        level = request.query_params.get("level")
        bot = request.query_params.get("bot")
        compute = self.compute
        try:
            raw = await self._body(request)
            deadline = time.monotonic() + self.timeout
            if compute is not None and len(raw) > LARGE_BODY:  # read and worked out by the compute process
                return await self._hand_over(request, compute, route, level, bot, raw, deadline)
            try:
                body = msgs.loads(raw)
            except ValueError as exc:
                raise RequestError(400, "bad_json", f"the body is not JSON: {exc}") from None
            plan = service.plan(body, route=route, level=level, bot=bot)
            if plan is None:
                out = service.handle(body, level=level, bot=bot)  # hello, newgame, ping: no work
            else:
                served, estimate, n = plan
                if compute is not None and self.lanes.pick(estimate) is not self.lanes.cheap:
                    return await self._hand_over(request, compute, route, level, bot, raw, deadline)
                request.state.served = served
                if estimate <= self.inline:  # a single decision: no hop to a thread and back
                    if estimate > self.timeout:
                        self.lanes.admit(estimate, self.timeout)  # its refusal
                    out = service.compute(body, route=route, level=level, bot=bot, deadline=deadline, urgent=True)
                    self.metrics.positions.labels(served).inc(n)
                    return json_response(out, headers=self._headers(service))
                lane = self.lanes.admit(estimate, self.timeout)
                self._lane_gauge(lane)
                urgent = lane is self.lanes.cheap
                try:
                    out = await self.lanes.run(
                        lane,
                        estimate,
                        lambda: service.compute(
                            body, route=route, level=level, bot=bot, deadline=deadline, urgent=urgent
                        ),
                    )
                finally:
                    self._lane_gauge(lane)
                self.metrics.positions.labels(served).inc(n)
        except RequestError as exc:
            return self._refused(request, exc, service)
        return json_response(out, headers=self._headers(service))

    async def _hand_over(
        self,
        request: Request,
        compute: Compute,
        route: str,
        level: str | None,
        bot: str | None,
        raw: bytes,
        deadline: float,
    ) -> Response:
        """A request the compute process reads, plans, admits and works out (the expensive lane)."""
        service = compute.current.service if compute.current is not None else self.service
        request.state.levels_sha256 = service.levels_sha256
        held = self.metrics.held.labels("expensive")
        held.set(compute.held + 1)
        try:
            answer = await compute.ask(route, level, bot, raw, deadline)
            if answer.served is not None:
                request.state.served = answer.served
            answer.raise_refusal()
        except RequestError as exc:
            return self._refused(request, exc, service)
        finally:
            held.set(compute.held)
        if answer.served is not None:
            self.metrics.positions.labels(answer.served).inc(answer.positions)
        return Response(answer.body, media_type="application/json", headers=self._headers(service))

    def _lane_gauge(self, lane: Lane) -> None:
        self.metrics.held.labels(lane.name).set(lane.held)

    # -- routes ---------------------------------------------------------------------------------

    async def decide(self, request: Request) -> Response:
        return await self._serve(request, "decide")

    async def advise(self, request: Request) -> Response:
        return await self._serve(request, "advise")

    async def levels(self, request: Request) -> Response:
        s = self.service
        return json_response(
            {
                "levels": [
                    {"name": lv.name, "spec": lv.spec, "rules": lv.rules, "settings": dict(lv.settings)}
                    for lv in s.levels.values()
                ],
                "elsewhere": [
                    {
                        "name": lv.name,
                        "spec": lv.spec,
                        "rules": lv.rules,
                        "served": "by the external engine's own program, not this server",
                    }
                    for lv in s.elsewhere.values()
                ],
                "bots": s.served_bots(),
                "rules": s.served_rules(),
                "provenance": s.provenance(),
            },
            headers=self._headers(s),
        )

    async def health(self, request: Request) -> Response:
        """200 while the process lives and can serve (warming up or ready); 503 once warm-up failed."""
        s = self.service
        status = "failed" if self.failed else "ok" if self.ready else "starting"
        body = {
            "status": status,
            "protocol": PROTOCOL,
            "provenance": s.provenance(),
            "rules": s.served_rules(),
            "levels": list(s.levels),
            "pid": os.getpid(),
        }
        if self.failed:
            body["error"] = self.failed
        return json_response(body, 503 if self.failed else 200, headers=self._headers(s))

    async def ready_route(self, request: Request) -> Response:
        """200 once every served table and kernel is warm; 503 before (and after a failed warm-up)."""
        status = "failed" if self.failed else "ready" if self.ready else "starting"
        return json_response({"status": status}, 200 if status == "ready" else 503, headers=self._headers(self.service))

    async def metrics_route(self, request: Request) -> Response:
        return Response(self.metrics.exposition(), media_type=CONTENT_TYPE)

    async def openapi(self, request: Request) -> Response:
        return json_response(openapi_document(self.service))

    async def docs(self, request: Request) -> Response:
        return HTMLResponse(docs_page(openapi_document(self.service)))


def openapi_document(service: Service) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the API, its schemas taken from the protocol's JSON Schema."""
    schema = msgs.schema()
    defs = dict(schema["$defs"].items())
    ref = {k: {"$ref": f"#/components/schemas/{k}"} for k in defs}
    text = json.dumps(defs).replace("#/$defs/", "#/components/schemas/")
    defs = json.loads(text)
    error = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["id", "message"],
                "properties": {"id": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    }
    defs["Error"] = error
    errors = {
        str(code): {
            "description": what,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code, what in (
            (400, "not JSON, or not a message"),
            (401, "a token is needed"),
            (413, "body or batch too large"),
            (408, "the body did not arrive in time"),
            (422, "a rule set, level, bot or position the server does not serve"),
            (503, "starting, over its budget, or the server is busy (Retry-After)"),
        )
    }
    decide_body = {"oneOf": [ref["decide"], ref["hello"], ref["newgame"], ref["ping"]]}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "yatzy-harness serve",
            "version": service.version or "unknown",
            "description": "The harness's tuned levels and built-in bots, over the engine protocol "
            f"{PROTOCOL} (docs/engines.md). A decide request may name 'level' or 'bot'; "
            "?level= or ?bot= sets the default, so the URL can be an engine:url= entrant.",
        },
        "paths": {
            "/decide": {
                "post": {
                    "summary": "Decisions for a batch of positions (or any protocol message: hello, newgame, ping)",
                    "parameters": [
                        {"name": "level", "in": "query", "schema": {"type": "string"}},
                        {"name": "bot", "in": "query", "schema": {"type": "string"}},
                    ],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": decide_body}}},
                    "responses": {
                        "200": {
                            "description": "the answer",
                            "content": {
                                "application/json": {
                                    "schema": {"oneOf": [ref["answer"], ref["hello_reply"], ref["ready"], ref["pong"]]}
                                }
                            },
                        },
                        **errors,
                    },
                }
            },
            "/advise": {
                "post": {
                    "summary": "Every option's exact value and regret at each position (as `yatzy-harness advise`)",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": ref["decide"]}}},
                    "responses": {
                        "200": {"description": "per position: the decision, its value, every option"},
                        **errors,
                    },
                }
            },
            "/levels": {
                "get": {
                    "summary": "The served levels, bots and rule sets",
                    "responses": {"200": {"description": "levels"}},
                }
            },
            "/health": {
                "get": {
                    "summary": "Alive (200) from the start, warming up or ready; 503 once warm-up failed",
                    "responses": {"200": {"description": "alive"}, "503": {"description": "failed"}},
                }
            },
            "/ready": {
                "get": {
                    "summary": "Ready (200) once every served table and kernel is warm; 503 before",
                    "responses": {"200": {"description": "ready"}, "503": {"description": "starting"}},
                }
            },
            "/metrics": {
                "get": {
                    "summary": "The server's metrics, in the Prometheus text format",
                    "responses": {"200": {"description": "metrics"}},
                }
            },
        },
        "components": {"schemas": defs, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
    }


def docs_page(doc: dict[str, Any]) -> str:
    """``/docs``: the OpenAPI document as one page (inline style, no script, nothing fetched)."""
    e = html.escape
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{e(doc['info']['title'])}"
        "</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
        "code,pre{font:13px ui-monospace,monospace;background:#f4f4f4}pre{padding:.6rem;overflow:auto}"
        "h2{border-top:1px solid #ddd;padding-top:1rem}.m{font-weight:bold;color:#06c}</style></head><body>",
        f"<h1>{e(doc['info']['title'])} {e(doc['info']['version'])}</h1><p>{e(doc['info']['description'])}</p>",
        "<p>Machine-readable: <a href='/openapi.json'>/openapi.json</a> (OpenAPI 3.1).</p>",
    ]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            parts.append(
                f"<h2><span class='m'>{method.upper()}</span> <code>{e(path)}</code></h2><p>"
                f"{e(op.get('summary', ''))}</p>"
            )
            if "parameters" in op:
                parts.append(
                    "<p>Query: " + ", ".join(f"<code>{e(p['name'])}</code>" for p in op["parameters"]) + "</p>"
                )
            codes = ", ".join(f"{c} {e(r.get('description', ''))}" for c, r in op.get("responses", {}).items())
            parts.append(f"<p>Responses: {codes}</p>")
    parts.append("<h2>Schemas</h2>")
    for name, sch in doc["components"]["schemas"].items():
        parts.append(
            f"<h3 id='{e(name)}'>{e(name)}</h3>"
            + (f"<p>{e(sch['description'])}</p>" if "description" in sch else "")
            + f"<pre>{e(json.dumps(sch, indent=1))}</pre>"
        )
    parts.append("</body></html>")
    return "".join(parts)


def build(conf: dict[str, Any], **kwargs: Any) -> ServeApp:
    """The app of a configuration: a bad levels file, rule set, bot or token file is a
    :class:`UserError` now, before anything listens."""
    return ServeApp(conf, **kwargs)

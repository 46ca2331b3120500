"""``yatzy-harness serve``: the harness's levels and bots over HTTP, an ASGI app on Starlette.

Starlette (under uvicorn) rather than FastAPI: every body is read by the protocol's own reader
(:func:`harness.play.protocol.messages.read_positions`, the code path the referee's answers take
too), so a pydantic model would parse each batch a second time for nothing; the OpenAPI document
is built from the protocol's JSON Schema instead, and ``/docs`` renders it as one self-contained
page (no script or style sheet fetched from anywhere).

Safe by default: the command binds to 127.0.0.1; with a token file every request but ``/health``
needs ``Authorization: Bearer TOKEN``; bodies are capped; every refused request gets a 4xx with a
one-line JSON error ``{"error": {"id": ..., "message": ...}}``, an internal fault a logged 500
without a traceback; the work runs on a worker thread with a compute timeout, off the event loop.
"""

from __future__ import annotations

import html
import json
import logging
import os
import secrets
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable

import anyio
import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from harness.play.protocol import PROTOCOL
from harness.play.protocol import messages as msgs
from harness.service.serve import DEFAULT_BOTS, RequestError, Service

log = logging.getLogger("harness.serve")

#: Largest request body (bytes): a batch of 10,000 positions is about 2 MB.
MAX_BODY = 8 << 20
#: Longest a request may compute (seconds) before it gets a 503.
COMPUTE_TIMEOUT = 10.0


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json", headers=headers)


def error_response(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
    """The one-line JSON error of every refused request (never a traceback)."""
    return json_response({"error": {"id": error, "message": " ".join(str(message).split())[:500]}}, status, headers)


class ServeApp:
    """The app's state: the service, the token, the limits; ``app`` is the Starlette application."""

    def __init__(self, service: Service, *, token: str | None = None, max_body: int = MAX_BODY,
                 compute_timeout: float = COMPUTE_TIMEOUT, threads: int = 1) -> None:
        self.service, self.token, self.max_body, self.timeout = service, token, max_body, compute_timeout
        self.limiter = anyio.CapacityLimiter(threads)
        self.ready = False
        self.app = Starlette(routes=[
            Route("/decide", self.decide, methods=["POST"]),
            Route("/advise", self.advise, methods=["POST"]),
            Route("/levels", self.levels, methods=["GET"]),
            Route("/health", self.health, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/docs", self.docs, methods=["GET"]),
        ], exception_handlers={HTTPException: self._http_error, Exception: self._internal},
            lifespan=self._lifespan)

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Ready only once every table is loaded and every bot warmed (off the event loop)."""
        await anyio.to_thread.run_sync(self.service.prepare)
        self.ready = True
        log.info("serving: tables loaded and warmed")
        yield

    # -- plumbing -------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        """Every response's provenance (errors' too): the harness's version, the levels file's sha256."""
        s = self.service
        return {"X-Yatzy-Harness": s.version or "unknown", "X-Levels-SHA256": s.levels_sha256 or "none"}

    def _error(self, status: int, error: str, message: str) -> Response:
        return error_response(status, error, message, self._headers())

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        ids = {404: "not_found", 405: "method_not_allowed"}
        return self._error(exc.status_code, ids.get(exc.status_code, "http_error"), exc.detail)

    async def _internal(self, request: Request, exc: Exception) -> Response:
        log.error("internal error serving %s %s", request.method, request.url.path, exc_info=exc)
        return self._error(500, "internal", "internal error; the server's log has the details")

    def _authorised(self, request: Request) -> bool:
        if not self.token:
            return True
        got = request.headers.get("authorization", "")
        return got.startswith("Bearer ") and secrets.compare_digest(got[7:].strip(), self.token)

    async def _body(self, request: Request) -> Any:
        """The request's JSON body, read up to the cap (a :class:`RequestError` past it)."""
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            raise RequestError(413, "too_large", f"a request body holds at most {self.max_body:,} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                raise RequestError(413, "too_large", f"a request body holds at most {self.max_body:,} bytes")
            chunks.append(chunk)
        try:
            return msgs.loads(b"".join(chunks))
        except ValueError as exc:
            raise RequestError(400, "bad_json", f"the body is not JSON: {exc}") from None

    async def _serve(self, request: Request, work: Callable[[Any], dict[str, Any]]) -> Response:
        if not self._authorised(request):
            return self._error(401, "unauthorised", "this server needs Authorization: Bearer TOKEN")
        if not self.ready:
            return self._error(503, "starting", "the server is loading its tables")
        try:
            body = await self._body(request)
            with anyio.fail_after(self.timeout):
                out = await anyio.to_thread.run_sync(work, body, limiter=self.limiter)
        except RequestError as exc:
            return self._error(exc.status, exc.error, str(exc))
        except TimeoutError:
            return self._error(503, "timeout", f"the request took over {self.timeout:g} s to compute; "
                                               f"send smaller batches")
        return json_response(out, headers=self._headers())

    # -- routes ---------------------------------------------------------------------------------

    async def decide(self, request: Request) -> Response:
        level = request.query_params.get("level")
        bot = request.query_params.get("bot")
        return await self._serve(request, lambda body: self.service.handle(body, level=level, bot=bot))

    async def advise(self, request: Request) -> Response:
        return await self._serve(request, self.service.advise)

    async def levels(self, request: Request) -> Response:
        if not self._authorised(request):
            return self._error(401, "unauthorised", "this server needs Authorization: Bearer TOKEN")
        s = self.service
        return json_response({"levels": [{"name": lv.name, "spec": lv.spec, "rules": lv.rules,
                                          "settings": dict(lv.settings)} for lv in s.levels.values()],
                              "bots": s.served_bots(), "rules": s.served_rules(), "provenance": s.provenance()},
                             headers=self._headers())

    async def health(self, request: Request) -> Response:
        s = self.service
        body = {"status": "ok" if self.ready else "starting", "protocol": PROTOCOL, "provenance": s.provenance(),
                "rules": s.served_rules(), "levels": list(s.levels), "pid": os.getpid()}
        return json_response(body, 200 if self.ready else 503, headers=self._headers())

    async def openapi(self, request: Request) -> Response:
        return json_response(openapi_document(self.service))

    async def docs(self, request: Request) -> Response:
        return HTMLResponse(docs_page(openapi_document(self.service)))


def openapi_document(service: Service) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the API, its schemas taken from the protocol's JSON Schema."""
    schema = msgs.schema()
    defs = {k: v for k, v in schema["$defs"].items()}
    ref = {k: {"$ref": f"#/components/schemas/{k}"} for k in defs}
    text = json.dumps(defs).replace("#/$defs/", "#/components/schemas/")
    defs = json.loads(text)
    error = {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["id", "message"],
        "properties": {"id": {"type": "string"}, "message": {"type": "string"}}}}}
    defs["Error"] = error
    errors = {str(code): {"description": what, "content": {"application/json": {"schema": {
        "$ref": "#/components/schemas/Error"}}}} for code, what in (
        (400, "not JSON, or not a message"), (401, "a token is needed"), (413, "body or batch too large"),
        (422, "a rule set, level, bot or position the server does not serve"), (503, "starting, or over the "
                                                                                       "compute timeout"))}
    decide_body = {"oneOf": [ref["decide"], ref["hello"], ref["newgame"], ref["ping"]]}
    return {
        "openapi": "3.1.0",
        "info": {"title": "yatzy-harness serve", "version": service.version or "unknown",
                 "description": "The harness's tuned levels and built-in bots, over the engine protocol "
                                f"{PROTOCOL} (docs/engines.md). A decide request may name 'level' or 'bot'; "
                                "?level= or ?bot= sets the default, so the URL can be an engine:url= entrant."},
        "paths": {
            "/decide": {"post": {
                "summary": "Decisions for a batch of positions (or any protocol message: hello, newgame, ping)",
                "parameters": [{"name": "level", "in": "query", "schema": {"type": "string"}},
                               {"name": "bot", "in": "query", "schema": {"type": "string"}}],
                "requestBody": {"required": True, "content": {"application/json": {"schema": decide_body}}},
                "responses": {"200": {"description": "the answer", "content": {"application/json": {
                    "schema": {"oneOf": [ref["answer"], ref["hello_reply"], ref["ready"], ref["pong"]]}}}},
                    **errors}}},
            "/advise": {"post": {
                "summary": "Every option's exact value and regret at each position (as `yatzy-harness advise`)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": ref["decide"]}}},
                "responses": {"200": {"description": "per position: the decision, its value, every option"},
                              **errors}}},
            "/levels": {"get": {"summary": "The served levels, bots and rule sets",
                                "responses": {"200": {"description": "levels"}}}},
            "/health": {"get": {"summary": "Ready (200) once the tables are loaded and warmed; 503 before",
                                "responses": {"200": {"description": "ready"}, "503": {"description": "starting"}}}},
        },
        "components": {"schemas": defs,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


def docs_page(doc: dict[str, Any]) -> str:
    """``/docs``: the OpenAPI document as one page (inline style, no script, nothing fetched)."""
    e = html.escape
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{e(doc['info']['title'])}"
             "</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
             "code,pre{font:13px ui-monospace,monospace;background:#f4f4f4}pre{padding:.6rem;overflow:auto}"
             "h2{border-top:1px solid #ddd;padding-top:1rem}.m{font-weight:bold;color:#06c}</style></head><body>",
             f"<h1>{e(doc['info']['title'])} {e(doc['info']['version'])}</h1><p>{e(doc['info']['description'])}</p>",
             "<p>Machine-readable: <a href='/openapi.json'>/openapi.json</a> (OpenAPI 3.1).</p>"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            parts.append(f"<h2><span class='m'>{method.upper()}</span> <code>{e(path)}</code></h2><p>"
                         f"{e(op.get('summary', ''))}</p>")
            if "parameters" in op:
                parts.append("<p>Query: " + ", ".join(f"<code>{e(p['name'])}</code>" for p in op["parameters"])
                             + "</p>")
            codes = ", ".join(f"{c} {e(r.get('description', ''))}" for c, r in op.get("responses", {}).items())
            parts.append(f"<p>Responses: {codes}</p>")
    parts.append("<h2>Schemas</h2>")
    for name, sch in doc["components"]["schemas"].items():
        parts.append(f"<h3 id='{e(name)}'>{e(name)}</h3>"
                     + (f"<p>{e(sch['description'])}</p>" if "description" in sch else "")
                     + f"<pre>{e(json.dumps(sch, indent=1))}</pre>")
    parts.append("</body></html>")
    return "".join(parts)


def factory() -> Starlette:
    """The app of a uvicorn worker process (``serve --workers N``): configured by the environment
    variable the command sets (levels file, rule sets, limits, token file)."""
    conf = json.loads(os.environ["YATZY_SERVE_CONFIG"])
    return build(conf).app


def build(conf: dict[str, Any]) -> ServeApp:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("yatzy-harness")
    except PackageNotFoundError:
        ver = "unknown"
    service = Service(conf.get("levels"), tuple(conf.get("rules", ())), bots=tuple(conf.get("bots") or DEFAULT_BOTS),
                      max_batch=int(conf.get("max_batch", 10_000)), version=ver)
    token = None
    if conf.get("token_file"):
        with open(conf["token_file"]) as f:
            token = f.read().strip()
    return ServeApp(service, token=token, max_body=int(conf.get("max_body", MAX_BODY)),
                    compute_timeout=float(conf.get("timeout", COMPUTE_TIMEOUT)))


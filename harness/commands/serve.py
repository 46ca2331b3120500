"""``yatzy-harness serve``: the tuned levels and built-in bots over HTTP (:mod:`harness.service.app`)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from typing import Any

from harness.commands.options import describe, number_arg
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Serve the difficulty levels of a levels file (the levels.json that calibrate --levels\n"
        "writes) and the built-in bots over HTTP: POST /decide (the engine protocol's batches;\n"
        "?level=NAME makes the URL an engine:url= entrant), POST /advise, GET /levels,\n"
        "GET /health, /ready, /metrics, /openapi.json and /docs. The port answers at once; the\n"
        "tables are solved or loaded and the kernels compiled in the background (/ready says\n"
        "when). Binds to 127.0.0.1 unless --host says otherwise. Every limit and its default:\n"
        'docs/production.md. Needs the serve extra: pip install -e ".[serve]".',
        "yatzy-harness serve --levels results/levels-exact/levels.json",
        "yatzy-harness serve --rules scandinavian,yahtzee --bot solver --bot greedy --port 8100",
        "yatzy-harness serve --levels levels.json --host 0.0.0.0 --token-file token.txt --workers 2",
    )
    p.add_argument(
        "--levels",
        metavar="FILE",
        help="the levels to serve (levels.json of calibrate --levels); SIGHUP loads it again",
    )
    p.add_argument(
        "--rules",
        help="rule sets to serve besides the levels' (comma-separated built-in names; "
        "default: the levels', else scandinavian)",
    )
    p.add_argument(
        "--bot",
        action="append",
        metavar="SPEC",
        help="a built-in bot to serve on every served rule set (repeatable; default: greedy and "
        "solver); a request naming any other bot gets 422 not_served",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument(
        "--port",
        type=number_arg(minimum=1, inclusive=True, integer=True, maximum=65535),
        default=8000,
        help="port (default 8000)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="require Authorization: Bearer TOKEN on every route but /health and /ready; the file "
        "holds one token a line, each at least 16 bytes (several: rotation; SIGHUP reads it again)",
    )
    p.add_argument(
        "--workers",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=1,
        help="server processes (default 1); forked once the tables are warm, so they share them copy-on-write",
    )
    p.add_argument(
        "--max-batch",
        type=number_arg(minimum=1, inclusive=True, integer=True, maximum=100_000),
        default=10_000,
        help="most positions in one request (default 10,000)",
    )
    p.add_argument(
        "--max-body",
        type=number_arg(minimum=1024, inclusive=True, integer=True),
        default=8 << 20,
        help="largest request body in bytes (default 8 MiB)",
    )
    p.add_argument(
        "--timeout",
        type=number_arg(minimum=0.0),
        default=10.0,
        help="a request's compute budget in seconds: refused at once (503) when its estimated cost "
        "is over it, stopped (503) when its work passes it (default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=number_arg(minimum=0.0),
        default=10.0,
        help="seconds a client has to send a request's body (408 after; default 10)",
    )
    p.add_argument(
        "--idle-timeout",
        type=number_arg(minimum=0.0),
        default=5.0,
        help="seconds a connection may go without sending a whole request head, after it opens or "
        "after an answer, before it is closed (default 5)",
    )
    p.add_argument(
        "--queue",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=64,
        help="requests each lane holds, queued and running, before 503 queue_full (default 64)",
    )
    p.add_argument(
        "--cheap-ms",
        type=number_arg(minimum=0.0),
        default=20.0,
        help="requests estimated at most this many ms of work run on the cheap lane (default 20)",
    )
    p.add_argument(
        "--inline-ms",
        type=number_arg(minimum=0.0, inclusive=True),
        default=1.0,
        help="requests estimated at most this many ms of work (single decisions) are worked out on "
        "the event loop itself, with no hop to a lane's thread (default 1; 0: none)",
    )
    p.add_argument(
        "--expensive-lane",
        choices=("process", "threads"),
        default="process",
        help="where expensive requests and bodies over 64 KiB are read and worked out: a compute "
        "process forked from each warm server process, off the cheap lane's GIL (default), or "
        "threads of the server process",
    )
    p.add_argument(
        "--max-connections",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=1000,
        help="open connections and requests uvicorn holds before answering 503 itself (default 1000)",
    )
    p.add_argument("--access-log", action="store_true", help="log one JSON line a request on stderr")
    p.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="ADDR",
        help="an address whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable; "
        "default: none, the client is the socket's peer)",
    )


def log_config(access: bool) -> dict[str, Any]:
    """uvicorn's logging: the harness's lines with the request's id, access lines as bare JSON."""
    rid = {"()": "harness.service.front.RequestIdFilter"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"rid": rid},
        "formatters": {
            "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
            "json": {"format": "%(message)s"},
        },
        "handlers": {
            "line": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "line",
                "filters": ["rid"],
            },
            "json": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "json"},
        },
        "loggers": {
            "harness.serve": {"handlers": ["line"], "level": "INFO", "propagate": False},
            "harness.serve.access": {
                "handlers": ["json"],
                "level": "INFO" if access else "WARNING",
                "propagate": False,
            },
            "uvicorn.error": {"handlers": ["line"], "level": "WARNING", "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def run(args: argparse.Namespace) -> int:
    try:  # the serve extra: only this command needs an ASGI server
        import uvicorn
    except ImportError:
        raise UserError(
            'serve needs the serve extra: pip install -e ".[serve]" (starlette, uvicorn, prometheus-client)'
        ) from None
    metrics_dir = None
    if args.workers > 1:
        # the workers' metrics are summed from a shared directory, which prometheus-client reads from
        # the environment when it is first imported (the workers inherit this process's import)
        metrics_dir = tempfile.mkdtemp(prefix="yatzy-serve-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    try:
        return _serve(args, uvicorn)
    finally:
        if metrics_dir:
            shutil.rmtree(metrics_dir, ignore_errors=True)


def _serve(args: argparse.Namespace, uvicorn: Any) -> int:
    from harness.service.app import build
    from harness.service.protocol import HeadDeadlineProtocol, check
    from harness.util.specs import split_specs

    check()
    conf = {
        "levels": os.path.abspath(args.levels) if args.levels else None,
        "rules": split_specs(args.rules) if args.rules else [],
        "bots": args.bot or [],
        "token_file": os.path.abspath(args.token_file) if args.token_file else None,
        "max_batch": int(args.max_batch),
        "max_body": int(args.max_body),
        "timeout": float(args.timeout),
        "body_timeout": float(args.body_timeout),
        "queue": int(args.queue),
        "cheap_ms": float(args.cheap_ms),
        "access_log": bool(args.access_log),
        "expensive_process": args.expensive_lane == "process",
        "inline_ms": float(args.inline_ms),
    }
    where = f"http://{args.host}:{args.port}"
    say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    names = lambda served: ", ".join(served.service.levels) or "the built-in bots"  # noqa: E731
    common = dict(
        http=HeadDeadlineProtocol,
        timeout_keep_alive=args.idle_timeout,
        limit_concurrency=int(args.max_connections),
        timeout_graceful_shutdown=30,
        server_header=False,
        proxy_headers=bool(args.trusted_proxy),
        forwarded_allow_ips=args.trusted_proxy or None,
        log_config=log_config(bool(args.access_log)),
    )
    workers = int(args.workers)
    served = build(
        conf,
        progress=lambda s: say(f"loading {s}"),
        on_ready=lambda: say(
            f"ready: serving {names(served)} on {where}" + (f" ({workers} workers)" if workers > 1 else "")
        ),
    )
    # bad levels, rule sets, bots or token: one line above, before anything listens
    served.service.kernel_helper()  # a first start: the bots' kernels compile while a table is solved
    say(f"listening on {where}, warming up (GET /ready: 200 once warm; docs: {where}/docs; Ctrl-C stops)")
    if workers == 1:
        uvicorn.run(served.app, host=args.host, port=int(args.port), **common)
        return 0
    from harness.service.workers import Forked, WorkerDone, bind
    from prometheus_client import multiprocess

    def server(app: Any) -> Any:
        return uvicorn.Server(uvicorn.Config(app, **common))

    try:
        sock = bind(args.host, int(args.port))
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    forked = Forked(served, sock, workers, server, on_exit=multiprocess.mark_process_dead)
    if not forked.warm_up():  # this process answers the port until the tables are warm, then forks the workers
        if served.failed:
            raise UserError(f"warm-up failed: {served.failed}")
        return 0
    try:
        forked.run()
    except WorkerDone as done:  # in a worker: exit here, past the parent's clean-up
        os._exit(done.code)
    return 0

"""``yatzy-harness serve``: the tuned levels and built-in bots over HTTP (:mod:`harness.service.app`)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.commands.options import describe, number_arg
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(p, "Serve the difficulty levels of a levels file (the levels.json that calibrate --levels\n"
                "writes) and the built-in bots over HTTP: POST /decide (the engine protocol's batches;\n"
                "?level=NAME makes the URL an engine:url= entrant), POST /advise, GET /levels,\n"
                "GET /health, /openapi.json and /docs. Tables are solved or loaded before the first\n"
                "request. Binds to 127.0.0.1 unless --host says otherwise. Needs the serve extra:\n"
                "pip install -e \".[serve]\".",
             "yatzy-harness serve --levels results/levels-exact/levels.json",
             "yatzy-harness serve --rules scandinavian,yahtzee --port 8100",
             "yatzy-harness serve --levels levels.json --host 0.0.0.0 --token-file token.txt --workers 2")
    p.add_argument("--levels", metavar="FILE", help="the levels to serve (levels.json of calibrate --levels)")
    p.add_argument("--rules", help="rule sets to serve besides the levels' (comma-separated built-in names; "
                                   "default: the levels', else scandinavian)")
    p.add_argument("--bot", action="append", metavar="SPEC",
                   help="a built-in bot to serve on every served rule set (repeatable; default: greedy and "
                        "solver); a request naming any other bot gets 422 not_served")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=number_arg(minimum=1, inclusive=True, integer=True, maximum=65535), default=8000,
                   help="port (default 8000)")
    p.add_argument("--token-file", metavar="FILE",
                   help="require Authorization: Bearer TOKEN (the file's content) on every request but /health")
    p.add_argument("--workers", type=number_arg(minimum=1, inclusive=True, integer=True), default=1,
                   help="server processes (default 1); each loads the tables from the cache")
    p.add_argument("--max-batch", type=number_arg(minimum=1, inclusive=True, integer=True, maximum=100_000),
                   default=10_000, help="most positions in one request (default 10,000)")
    p.add_argument("--max-body", type=number_arg(minimum=1024, inclusive=True, integer=True), default=8 << 20,
                   help="largest request body in bytes (default 8 MiB)")
    p.add_argument("--timeout", type=number_arg(minimum=0.0), default=10.0,
                   help="seconds a request may compute before it gets a 503 (default 10)")


def run(args: argparse.Namespace) -> int:
    try:  # the serve extra: only this command needs an ASGI server
        import uvicorn
    except ImportError:
        raise UserError("serve needs the serve extra: pip install -e \".[serve]\" (starlette and uvicorn)") from None
    from harness.service.app import build
    from harness.util.specs import split_specs

    if args.token_file and not os.path.isfile(args.token_file):
        raise UserError(f"--token-file {args.token_file}: no such file")
    conf = {"levels": args.levels, "rules": split_specs(args.rules) if args.rules else [], "bots": args.bot or [],
            "token_file": os.path.abspath(args.token_file) if args.token_file else None,
            "max_batch": int(args.max_batch), "max_body": int(args.max_body), "timeout": float(args.timeout)}
    served = build(conf)  # bad levels, rule sets or token: one line now, before anything listens
    # solve what is missing here, with its progress, before any worker starts (they load the cache)
    served.service.prepare(progress=lambda s: print(f"loading {s}", file=sys.stderr))
    served.ready = True
    where = f"http://{args.host}:{args.port}"
    print(f"serving {', '.join(served.service.levels) or 'the built-in bots'} on {where} "
          f"(docs: {where}/docs; Ctrl-C stops)", file=sys.stderr)
    log_level = "warning"
    if args.workers > 1:
        os.environ["YATZY_SERVE_CONFIG"] = json.dumps(conf)
        uvicorn.run("harness.service.app:factory", factory=True, host=args.host, port=int(args.port),
                    workers=int(args.workers), log_level=log_level, timeout_graceful_shutdown=30)
    else:
        uvicorn.run(served.app, host=args.host, port=int(args.port), log_level=log_level,
                    timeout_graceful_shutdown=30)
    return 0

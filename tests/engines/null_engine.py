"""A null engine: reads every request and answers the first legal option at once (stdlib only).

Keeps every die (stops) at a keep decision and writes the first box the rules allow at a box
decision. The benchmark of the protocol's own cost (benchmarks/bench_protocol.py) and the
referee's tests use it; misbehaving variants are in ``misbehave.py``.
"""

import json
import sys

HELLO = {
    "type": "hello",
    "protocol": "yatzy-engine/1",
    "name": "null",
    "author": "yatzy-harness tests",
    "version": "1",
    "rules": ["*"],
    "options": [],
}


def answer(msg):
    kind = msg["kind"]
    if kind == "keep":
        choice = msg["dice"]
    else:
        choice = [next(b for b, v in enumerate(row) if v >= 0) for row in msg["options"]]
    return {"type": "answer", "id": msg["id"], "game": msg["game"], kind: choice}


def main():
    # --max-batch N: announce it in the hello, and refuse a bigger batch (the referee must split)
    most = int(sys.argv[sys.argv.index("--max-batch") + 1]) if "--max-batch" in sys.argv else None
    if most:
        HELLO["max_batch"] = most
    # --declare NAME: declare a float option NAME with two values that should play differently,
    # and ignore it (engine check must fail the option row)
    if "--declare" in sys.argv:
        HELLO["options"] = [
            {
                "name": sys.argv[sys.argv.index("--declare") + 1],
                "type": "float",
                "default": 0,
                "min": 0,
                "max": 1,
                "differ": [0, 1],
            }
        ]
    out = sys.stdout
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            t = msg.get("type")
        except (ValueError, AttributeError):
            msg, t = {}, None
        if t == "hello":
            reply = HELLO
        elif t == "newgame":
            reply = {"type": "ready", "id": msg.get("id")}
        elif t == "ping":
            reply = {"type": "pong", "id": msg.get("id")}
        elif t == "quit":
            return
        elif t == "decide" and most and len(msg.get("game", ())) > most:
            reply = {"type": "error", "id": msg.get("id"), "message": f"at most {most} positions a request"}
        elif t == "decide":
            try:
                reply = answer(msg)
            except (KeyError, TypeError, ValueError, StopIteration) as exc:
                reply = {"type": "error", "id": msg.get("id"), "message": f"bad decide request: {exc!r}"}
        else:
            reply = {"type": "error", "id": msg.get("id"), "message": f"unknown message type {t!r}"}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()

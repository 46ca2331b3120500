"""A test engine that plays exactly the built-in ``solver:temperature=T``, with T its option ``temperature``.

It speaks yatzy-engine/1 on stdin/stdout and answers with the harness's own serving code: every
request is read back into the positions the in-process bot would see (``harness.service.serve.views``)
and the bot ``solver:temperature=T`` answers them, so the engine's play is the built-in dial's,
decision for decision (its draws come from each position's key, seat, turn and step, as in
process). The option is read from every ``newgame``, so a calibration's values reach it without a
restart. ``calibrate --strategy engine:cmd="python tests/engines/solver_dial.py" --param
opt.temperature`` therefore measures the same responses as ``calibrate --strategy solver --param
temperature`` (tests/test_own_bot.py).

``--rules FILE`` also plays the rule set of a TOML file (a newgame naming it by its name).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))  # this checkout's harness

from harness.game.registry import make  # noqa: E402
from harness.game.rules import load_rules  # noqa: E402
from harness.play.protocol import PROTOCOL  # noqa: E402
from harness.play.protocol import messages as msgs  # noqa: E402
from harness.service.serve import _first_column, views  # noqa: E402

HELLO = {
    "type": "hello",
    "protocol": PROTOCOL,
    "name": "solver-dial",
    "author": "yatzy-harness tests",
    "version": "1",
    "rules": ["*"],
    "max_batch": 100_000,
    "options": [
        {
            "name": "temperature",
            "type": "float",
            "default": 0,
            "min": 0,
            "max": 100,
            "differ": [0, 5],
            "description": "the solver's softmax temperature, points",
        }
    ],
}


class Dial:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.rules = None
        self.bot = None
        self.made: dict[tuple, object] = {}

    def newgame(self, msg: dict) -> dict:
        ref = msg.get("rules") or {}
        name = ref.get("name")
        rules = load_rules(self.files.get(name, name), dict(ref.get("overrides") or {}))
        options = msg.get("options") or {}
        unknown = set(options) - {"temperature"}
        if unknown:
            raise ValueError(f"unknown option {sorted(unknown)[0]!r} (options: temperature)")
        t = float(options.get("temperature", 0.0))
        key = (rules.digest, t)
        if key not in self.made:  # each (rules, temperature) made and its table loaded once
            bot = make(f"solver:temperature={t!r}", rules)
            bot.prepare()
            self.made[key] = (rules, bot)
        self.rules, self.bot = self.made[key]
        return {"type": "ready", "id": msg.get("id")}

    def decide(self, msg: dict) -> dict:
        if self.bot is None:
            raise ValueError("decide before newgame")
        pos = msgs.read_positions(msg, self.rules)
        choice = [None] * len(pos)
        for idx, view in views(pos, _first_column(msg, pos)):
            got = self.bot.keep(view) if pos.kind == "keep" else self.bot.choose(view)
            for i, c in zip(idx.tolist(), got.tolist()):
                choice[i] = msgs.codec(self.rules).keep_text[c] if pos.kind == "keep" else int(c)
        return {"type": "answer", "id": msg["id"], "game": msg["game"], pos.kind: choice}


def main() -> None:
    files = {}
    if "--rules" in sys.argv:
        path = sys.argv[sys.argv.index("--rules") + 1]
        files[load_rules(path).name] = path
    dial = Dial(files)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        msg: dict = {}
        try:
            msg = json.loads(line)
            t = msg.get("type")
            if t == "quit":
                return
            if t == "hello":
                reply = HELLO
            elif t == "newgame":
                reply = dial.newgame(msg)
            elif t == "ping":
                reply = {"type": "pong", "id": msg.get("id")}
            elif t == "decide":
                reply = dial.decide(msg)
            else:
                raise ValueError(f"unknown message type {t!r}")
        except Exception as exc:  # noqa: BLE001 - every bad request gets an error reply
            reply = {"type": "error", "id": msg.get("id") if isinstance(msg, dict) else None, "message": str(exc)[:300]}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()

"""A null engine with one bug on purpose, to prove the referee's rules and the conformance checker.

    python misbehave.py MODE [AT] [MARKER]

Plays like ``null_engine.py`` (keep every die, the first allowed box) except at decide request
number AT (counted from 1 in this process; every request when AT is 0), where MODE happens:

    sleep      sleeps 1.5 s, then answers (late: a time fault)
    hang       never answers again (a stall: the referee kills it)
    exit       exits at once (a crash)
    garbage    prints a line that is not JSON, then its answer
    illegal    answers an illegal option (a filled box; a keep of a face not rolled)
    wronggame  echoes the game keys reversed (an answer for other games)
    flood      writes a line longer than the harness reads, then its answer
    stderr     writes 4 MiB to stderr, then answers
    badjoker   answers the box with the highest score ignoring the rules' allowed options
    random     answers a pseudo-random allowed box, drawn per batch (not per position)
    slow       sleeps 30 ms, then answers (with AT 0: every request; a game's clock runs out)
    hog        allocates 1 GiB, then answers (killed by an address-space cap: a crash)

With MARKER (a path), the bug happens once across restarts: only while MARKER does not exist,
and the engine creates it. Standard library only.
"""

import json
import os
import sys
import time

from null_engine import answer as null_answer  # this script's folder is on sys.path

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
AT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
MARKER = sys.argv[3] if len(sys.argv) > 3 else None
RULES = {}


def due(count):
    if AT and count != AT:
        return False
    if MARKER:
        if os.path.exists(MARKER):
            return False
        open(MARKER, "w").close()
    return True


def write(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    count = 0
    state = 12345
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            t = msg.get("type")
        except (ValueError, AttributeError):
            msg, t = {}, "<unreadable>"
        if t == "hello":
            write(
                {
                    "type": "hello",
                    "protocol": "yatzy-engine/1",
                    "name": f"misbehave-{MODE}",
                    "author": "tests",
                    "version": "1",
                    "rules": ["*"],
                    "options": [],
                }
            )
            continue
        if t == "newgame":
            RULES.clear()
            RULES.update(msg["rules"])
            write({"type": "ready", "id": msg.get("id")})
            continue
        if t == "ping":
            write({"type": "pong", "id": msg.get("id")})
            continue
        if t == "quit":
            return
        if t != "decide":
            write({"type": "error", "id": msg.get("id"), "message": "unknown message"})
            continue
        count += 1
        try:
            reply = null_answer(msg)  # null_engine.answer
        except (KeyError, TypeError, ValueError, StopIteration) as exc:
            write({"type": "error", "id": msg.get("id"), "message": f"bad decide request: {exc!r}"})
            continue
        if due(count):
            kind = msg["kind"]
            if MODE == "sleep":
                time.sleep(1.5)
            elif MODE == "hang":
                while True:
                    time.sleep(3600)
            elif MODE == "exit":
                sys.exit(3)
            elif MODE == "garbage":
                sys.stdout.write("thinking... 42%\n")
            elif MODE == "illegal":
                if kind == "keep":
                    reply["keep"] = ["7" for _ in msg["dice"]]
                else:
                    reply["box"] = [next((b for b, v in enumerate(row) if v < 0), 99) for row in msg["options"]]
            elif MODE == "wronggame":
                reply["game"] = msg["game"][::-1]
                if len(msg["game"]) == 1:
                    reply["game"] = [msg["game"][0] + 1]
            elif MODE == "flood":
                sys.stdout.write("x" * (65 << 20) + "\n")
            elif MODE == "slow":
                time.sleep(0.03)
            elif MODE == "hog":
                hoard = bytearray(1 << 30)
                hoard[-1] = 1
            elif MODE == "stderr":
                sys.stderr.write("e" * (4 << 20))
                sys.stderr.flush()
            elif MODE == "badjoker" and kind == "box":
                # the joker done wrong: with all dice alike and the key box filled, it writes the
                # first open lower box, although the rules force the face's upper box while it is open
                key = [b["name"] for b in RULES["boxes"]].index(RULES["key_box"]) if RULES.get("key_box") else -1
                lower = [b["section"] == "lower" for b in RULES["boxes"]]
                boxes = []
                for i, row in enumerate(msg["options"]):
                    sheet, dice = msg["sheet"][i], msg["dice"][i]
                    pick = next(b for b, v in enumerate(row) if v >= 0)
                    if key >= 0 and sheet[key] >= 0 and len(set(dice)) == 1:
                        pick = next((b for b in range(len(row)) if lower[b] and sheet[b] < 0), pick)
                    boxes.append(pick)
                reply["box"] = boxes
            elif MODE == "random" and kind == "box":
                state = (state * 1103515245 + 12345) % 2**31
                reply["box"] = [
                    [b for b, v in enumerate(row) if v >= 0][state % sum(v >= 0 for v in row)] for row in msg["options"]
                ]
        write(reply)


if __name__ == "__main__":
    main()

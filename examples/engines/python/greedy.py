#!/usr/bin/env python3
"""A greedy Yatzy engine over the yatzy-engine/1 protocol (JSON lines on stdin/stdout).

Plays exactly like the harness's built-in ``greedy`` bot, using only the Python standard library
and numpy (it never imports the harness):

- keeps: for the dice in hand and the rerolls left, the keep that maximises the expected best
  immediate score at the end of this turn (the best allowed box score for the final dice, plus
  any extra bonus, under the sheet's context rules: key box, joker, forced order, servida), worked
  out backwards over the rerolls; ties go to stopping, then to the first keep in the harness's
  sub-keep order;
- boxes: the allowed box with the largest immediate gain (its score, the extra bonus and an upper
  bonus the box completes); ties go to the box with the lowest maximum score.

Everything comes from the ``rules`` of the ``newgame`` message (the score table of every roll
and the context rules), so any rule set of the harness's family works. Plans are cached per
sheet state and worked out for all new states of a batch at once (numpy, vectorised over the
states). Expected values are summed in the harness's order (outcome by outcome, with the same
float64 probabilities) so that exact ties break the same way: this is why no matrix product is
used (BLAS may add in another order).

Run it from its folder: ``python greedy.py``. See ../README.md.
"""

import json
import sys
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

PROTOCOL = "yatzy-engine/1"
HELLO = {
    "type": "hello",
    "protocol": PROTOCOL,
    "name": "greedy-py",
    "author": "yatzy-harness examples",
    "version": "1.0",
    # the rule sets checked game for game against the built-in greedy bot
    "rules": ["scandinavian", "yahtzee", "standard", "forced", "maxi", "generala"],
    "options": [],
}
FACES = 6
#: states planned together (bounds the memory of one vectorised step)
CHUNK = 512


def multisets(size):
    """Every multiset of ``size`` dice as a tuple of sorted faces, in the harness's order."""
    return list(combinations_with_replacement(range(1, FACES + 1), size))


def probability(faces):
    """Probability that throwing len(faces) fair dice gives these faces (as the harness computes it)."""
    ways = factorial(len(faces))
    for f in range(1, FACES + 1):
        ways //= factorial(faces.count(f))
    return ways / FACES ** len(faces)


def text(faces):
    return "".join(map(str, sorted(faces)))


class Game:
    """One rule set (from ``newgame``): dice tables, context rules and the cache of plans."""

    def __init__(self, rules):
        n = self.n = int(rules["dice"])
        self.roll_text = list(rules["rolls"])
        self.roll_index = {s: i for i, s in enumerate(self.roll_text)}
        R = self.R = len(self.roll_text)
        boxes = rules["boxes"]
        NB = self.NB = len(boxes)
        self.box_names = [b["name"] for b in boxes]
        self.table = np.asarray(rules["scores"], dtype=np.int64).reshape(R, NB)
        first = rules.get("scores_first")
        self.table_first = self.table if first is None else np.asarray(first, dtype=np.int64).reshape(R, NB)
        self.servida = not np.array_equal(self.table, self.table_first)
        self.upper_face = np.array([b.get("face") or 0 for b in boxes], dtype=np.int64)
        self.is_upper = self.upper_face > 0
        self.upper_mask = sum(1 << b for b in range(NB) if self.is_upper[b])
        self.requires_key = np.array([bool(b.get("requires_key")) for b in boxes])
        self.joker_value = np.array(
            [-1 if b.get("joker_value") is None else int(b["joker_value"]) for b in boxes], dtype=np.int64
        )
        key = rules.get("key_box")
        self.key_box = self.box_names.index(key) if key is not None else -1
        self.joker = bool(rules.get("joker"))
        self.extra_bonus = int(rules.get("extra_yatzy_bonus") or 0)
        self.forced = bool(rules.get("forced"))
        self.threshold = int(rules["bonus"]["threshold"])
        self.bonus_value = int(rules["bonus"]["value"])
        self.bits = np.int64(1) << np.arange(NB, dtype=np.int64)
        # boxes by their maximum score, stably: the order box ties are broken in
        box_max = np.maximum(np.maximum(self.table.max(axis=0), self.table_first.max(axis=0)), self.joker_value)
        self.cheapest = np.argsort(box_max, kind="stable")

        # all-alike rolls: (roll, face box or -1)
        self.yatzy = []
        for r, s in enumerate(self.roll_text):
            if len(set(s)) == 1:
                face = int(s[0])
                fb = -1
                for b in range(NB):  # the last box of that face, as the harness looks it up
                    if self.upper_face[b] == face:
                        fb = b
                self.yatzy.append((r, fb))

        # keeps: every multiset of 0..n dice, by size, in the harness's order
        keeps = [k for size in range(n + 1) for k in multisets(size)]
        self.K = len(keeps)
        self.keep_text = np.array([text(k) for k in keeps], dtype=object)
        keep_index = {k: i for i, k in enumerate(keeps)}
        # reroll transitions, grouped by the number of dice rerolled: (first keep, last keep + 1,
        # (keeps, outcomes) roll indices, (outcomes,) probabilities), outcomes in the harness's order
        self.groups = []
        start = 0
        for size in range(n + 1):
            ks = multisets(size)
            outs = multisets(n - size)
            rolls = np.array([[self.roll_index[text(k + o)] for o in outs] for k in ks], dtype=np.int64)
            probs = np.array([probability(o) for o in outs], dtype=np.float64)
            self.groups.append((start, start + len(ks), rolls, probs))
            start += len(ks)
        # each roll's proper sub-keeps in keep order (the whole roll, i.e. stopping, is handled
        # apart), padded with index K (a column of -inf)
        subs = []
        self.roll_as_keep = np.empty(R, dtype=np.int64)
        for r, s in enumerate(self.roll_text):
            faces = tuple(int(c) for c in s)
            self.roll_as_keep[r] = keep_index[faces]
            cnt = [faces.count(f) for f in range(1, FACES + 1)]
            subs.append(
                [
                    i
                    for i, k in enumerate(keeps)
                    if len(k) < n and all(k.count(f) <= cnt[f - 1] for f in range(1, FACES + 1))
                ]
            )
        width = max(len(x) for x in subs)
        self.sub = np.full((R, width), self.K, dtype=np.int64)
        for r, x in enumerate(subs):
            self.sub[r, : len(x)] = x
        # the cache: state (filled, flag) -> its plan
        self.plans = {}

    # -- stop values: the best immediate score of every roll in a state (score_options rules) --

    def stop_values(self, filled, flag, first):
        """(S, R) float64 best allowed box score + extra bonus of every roll, for states
        filled (S,) int64 bit masks, flag (S,) bool (the key box holds a non-zero score), on the
        turn's first roll (servida) or not."""
        S, NB = len(filled), self.NB
        tab = self.table_first if first else self.table
        rows = np.broadcast_to(tab, (S,) + tab.shape)
        if self.requires_key.any():
            rows = np.where(self.requires_key[None, None, :] & ~flag[:, None, None], 0, rows)
        open_ = ((1 << NB) - 1) & ~filled
        allowed = (open_ & -open_) if self.forced else open_
        amat = (allowed[:, None] & self.bits[None, :]) != 0  # (S, NB)
        out = np.where(amat[:, None, :], rows, -1).max(axis=2).astype(np.float64)
        if self.key_box >= 0:
            key_filled = ((filled >> self.key_box) & 1) != 0
            for r, fb in self.yatzy:
                row = np.array(rows[:, r, :])
                al = allowed.copy()
                extra = np.where(flag, self.extra_bonus, 0)
                if self.joker:
                    jk = key_filled
                    row = np.where(jk[:, None] & (self.joker_value >= 0)[None, :], self.joker_value[None, :], row)
                    if not self.forced:
                        lower_open = open_ & ~self.upper_mask
                        if fb >= 0:
                            face_open = ((open_ >> fb) & 1) != 0
                            al = np.where(jk & face_open, 1 << fb, np.where(jk & (lower_open != 0), lower_open, al))
                        else:
                            al = np.where(jk & (lower_open != 0), lower_open, al)
                am = (al[:, None] & self.bits[None, :]) != 0
                out[:, r] = np.where(am, row, -1).max(axis=1) + extra
        return out

    # -- the turn's backward pass, vectorised over states --

    def expectations(self, V):
        """(S, K) expected V (S, R) after rerolling the dice each keep does not keep: the sums of
        harness.game.turn.keep_expectations, outcome by outcome in its order."""
        S = V.shape[0]
        ek = np.empty((S, self.K + 1))
        ek[:, self.K] = -np.inf
        for k0, k1, rolls, probs in self.groups:
            acc = np.zeros((S, k1 - k0))
            for j in range(len(probs)):
                acc += probs[j] * V[:, rolls[:, j]]
            ek[:, k0:k1] = acc
        return ek

    def best_keeps(self, stop, ek):
        """(values (S, R), keeps (S, R)): stopping or the first strictly better sub-keep."""
        best = stop.copy()
        arg = np.broadcast_to(self.roll_as_keep, stop.shape).copy()
        for j in range(self.sub.shape[1]):
            col = self.sub[:, j]
            cand = ek[:, col]
            better = cand > best
            best = np.where(better, cand, best)
            arg = np.where(better, col[None, :], arg)
        return best, arg

    def plan_states(self, keys):
        """Make sure every plan (state, rerolls, first) of ``keys`` is cached."""
        need = {}  # state -> the most rerolls asked
        for filled, flag, rerolls, _first in keys:
            st = (filled, flag)
            if need.get(st, 0) < rerolls:
                need[st] = rerolls
        new = [st for st in need if st not in self.plans]
        for i in range(0, len(new), CHUNK):
            part = new[i : i + CHUNK]
            filled = np.array([st[0] for st in part], dtype=np.int64)
            flag = np.array([st[1] for st in part], dtype=bool)
            tl = self.stop_values(filled, flag, False)
            tf = self.stop_values(filled, flag, True) if self.servida else tl
            for s, st in enumerate(part):
                # values[j]: after a reroll with j rerolls left; keeps / first: by rerolls left
                self.plans[st] = {"tl": tl[s], "tf": tf[s], "values": [tl[s]], "keeps": {}, "first": {}}
        # extend every state's pass to the rerolls asked, one level at a time for all at once
        while True:
            todo = [st for st, j in need.items() if len(self.plans[st]["values"]) <= j]
            if not todo:
                break
            todo.sort(key=lambda st: len(self.plans[st]["values"]))
            j0 = len(self.plans[todo[0]]["values"])
            todo = [st for st in todo if len(self.plans[st]["values"]) == j0]
            for i in range(0, len(todo), CHUNK):
                part = [self.plans[st] for st in todo[i : i + CHUNK]]
                V = np.stack([p["values"][-1] for p in part])
                ek = self.expectations(V)
                tl = np.stack([p["tl"] for p in part])
                val, keep = self.best_keeps(tl, ek)
                if self.servida:
                    _, kf = self.best_keeps(np.stack([p["tf"] for p in part]), ek)
                else:
                    kf = keep
                for s, p in enumerate(part):
                    j = len(p["values"])
                    p["values"].append(val[s])
                    p["keeps"][j] = keep[s].astype(np.int16)
                    p["first"][j] = kf[s].astype(np.int16)

    # -- decisions --

    def keep(self, msg, n):
        rolls = np.fromiter((self.roll_index[s] for s in msg["dice"]), dtype=np.int64, count=n)
        sheet = np.asarray(msg["sheet"], dtype=np.int64).reshape(n, self.NB)
        filled = ((sheet >= 0) * self.bits[None, :]).sum(axis=1)
        flag = sheet[:, self.key_box] > 0 if self.key_box >= 0 else np.zeros(n, dtype=bool)
        left = np.broadcast_to(np.asarray(msg["rolls_left"], dtype=np.int64), (n,))
        first = np.broadcast_to(np.asarray(msg["step"], dtype=np.int64), (n,)) == 1
        code = filled | (flag.astype(np.int64) << 32) | (first.astype(np.int64) << 33) | (left << 34)
        uniq, inv = np.unique(code, return_inverse=True)
        keys = [(c & 0xFFFFFFFF, bool((c >> 32) & 1), c >> 34, bool((c >> 33) & 1)) for c in uniq.tolist()]
        self.plan_states(keys)
        tables = np.stack([self.plans[(f, fl)]["first" if fi else "keeps"][j] for f, fl, j, fi in keys])
        return self.keep_text[tables[inv.reshape(-1), rolls]].tolist()

    def box(self, msg, n):
        opts = np.asarray(msg["options"], dtype=np.int64).reshape(n, self.NB)
        extra = np.broadcast_to(np.asarray(msg["extra"], dtype=np.int64), (n,))
        sheet = np.asarray(msg["sheet"], dtype=np.int64).reshape(n, self.NB)
        upper = np.where((sheet >= 0) & self.is_upper[None, :], sheet, 0).sum(axis=1)
        T = self.threshold
        crosses = self.is_upper[None, :] & (upper < T)[:, None] & (upper[:, None] + opts >= T)
        gain = opts + extra[:, None] + np.where(crosses, self.bonus_value, 0)
        gain = np.where(opts >= 0, gain, np.iinfo(np.int64).min)
        order = self.cheapest
        return order[np.argmax(gain[:, order], axis=1)].tolist()


class Engine:
    def __init__(self):
        self.game = None

    def handle(self, msg):
        t = msg.get("type")
        if t == "hello":
            return HELLO
        if t == "newgame":
            self.game = Game(msg["rules"])
            return {"type": "ready", "id": msg.get("id")}
        if t == "ping":
            return {"type": "pong", "id": msg.get("id")}
        if t == "decide":
            if self.game is None:
                raise ValueError("decide before newgame")
            kind = msg.get("kind")
            game = msg["game"]
            n = len(game)
            if kind == "keep":
                choice = self.game.keep(msg, n)
            elif kind == "box":
                choice = self.game.box(msg, n)
            else:
                raise ValueError(f"unknown decision kind {kind!r}")
            return {"type": "answer", "id": msg.get("id"), "game": game, kind: choice}
        raise ValueError(f"unknown message type {t!r}")


def main():
    engine = Engine()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        rid = None
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise ValueError("a message must be a JSON object")
            rid = msg.get("id")
            if msg.get("type") == "quit":
                return
            reply = engine.handle(msg)
        except Exception as exc:  # never crash on bad input: say what is wrong and go on
            reply = {"type": "error", "id": rid, "message": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()

"""The serving side of the engine protocol: the harness's own bots and tuned levels answer requests.

A :class:`Service` holds what it serves, loaded once at start: the rule sets (built-in names with
validated settings, their tables solved or loaded before the first request), the levels of a
levels file (``calibrate --levels`` writes ``levels.json``: each level's bot spec) and the
built-in bots on the allow-list. It answers every protocol message (``hello``, ``newgame``,
``decide``, ``ping``) and ``advise`` requests; the HTTP app (:mod:`harness.service.app`) and
``engine play`` (stdio) both call :meth:`Service.handle`. Nothing in a request names a path or a
file: rule sets by name only, bots from the allow-list, never an ``engine:`` spec.

A level's decisions are the in-process bot's, to the bit: each position is rebuilt as the
:class:`~harness.game.strategy.TurnView` the engine would have shown it, and a randomised level draws
from the position's key, seat, turn and step, so a served game equals the game played in process.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from harness.util.errors import UserError
from harness.play.protocol import PROTOCOL
from harness.decisions.positions import Advisor
from harness.play.protocol import messages as msgs
from harness.play.protocol.check import scenarios
from harness.game.registry import make
from harness.game.rules import RuleSet, builtin_rule_sets, load_rules
from harness.exact.solver import cache_path
from harness.util.specs import parse_spec
from harness.game.strategy import Strategy, TurnView

#: Built-in bots a request may name (``winprob`` reads every seat's sheet, ``engine`` is external).
ALLOWED_BOTS = ("random", "timeout", "greedy", "bonus", "solver")


class RequestError(UserError):
    """A request the service refuses: ``status`` (HTTP), ``error`` (a stable id), the message."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error = status, error


@dataclass(frozen=True)
class Level:
    """A served level: its name, its bot spec and the rule set (name, settings) it was tuned on."""

    name: str
    spec: str
    rules: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: played by an external engine (``calibrate`` tuned its option): served by that engine's own
    #: program, never by the harness, which lists it in ``/levels`` as served elsewhere
    external: bool = False


def load_levels_json(path: str) -> tuple[list[Level], str]:
    """The levels of a ``levels.json`` (``calibrate --levels``) and the file's sha256."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read levels file {path}: {exc.strerror or exc}") from None
    try:
        d = json.loads(data)
    except ValueError as exc:
        raise UserError(f"{path}: not JSON ({exc}); serve takes the levels.json that calibrate --levels writes") \
            from None
    if not isinstance(d, dict) or d.get("format") != "yatzy-levels/1" or not isinstance(d.get("levels"), list):
        raise UserError(f"{path}: not a levels file (format yatzy-levels/1, as calibrate --levels writes)")
    settings = {}
    for item in d.get("settings") or []:
        k, _, v = str(item).partition("=")
        settings[k] = v
    out = []
    for i, lv in enumerate(d["levels"]):
        if not isinstance(lv, dict) or not isinstance(lv.get("name"), str) or not isinstance(lv.get("spec"), str):
            raise UserError(f"{path}: levels[{i}] needs a name and a spec")
        out.append(Level(lv["name"], lv["spec"], str(d.get("rules")), settings,
                         bool(lv.get("external", d.get("external", False)))))
    return out, hashlib.sha256(data).hexdigest()


def served_elsewhere(lv: Level) -> str:
    """Why the harness does not serve an external engine's level, in one line."""
    return (f"level {lv.name} is played by an external engine ({lv.spec}): it is served by that engine's own "
            "program, not by the harness")


class Service:
    """What the server answers with: levels, rule sets and bots, each made and warmed once."""

    def __init__(self, levels_path: str | None = None, rules: tuple[str, ...] = (), *, max_batch: int = 10_000,
                 version: str = "") -> None:
        self.levels: dict[str, Level] = {}
        self.levels_sha256: str | None = None
        if levels_path:
            levels, self.levels_sha256 = load_levels_json(levels_path)
            self.levels = {lv.name: lv for lv in levels if not lv.external}
        #: levels an external engine plays: named in /levels, served by the engine's own program
        self.elsewhere: dict[str, Level] = {lv.name: lv for lv in levels} if levels_path else {}
        for name in self.levels:
            self.elsewhere.pop(name)
        names = list(dict.fromkeys([*rules, *(lv.rules for lv in self.levels.values())])) or ["scandinavian"]
        known = builtin_rule_sets()
        for n in names:
            if n not in known:
                raise UserError(f"serve plays the built-in rule sets ({', '.join(known)}), got {n!r}")
        self.max_batch = max_batch
        self.version = version
        self._rules: dict[tuple[str, str], RuleSet] = {}
        #: a request's rule-set reference (as JSON) -> the served rule set, and each one's provenance
        self._refs: dict[str, RuleSet] = {}
        self._prov: dict[int, dict[str, Any]] = {}
        for lv in self.levels.values():
            self._add_rules(lv.rules, lv.settings)
        for n in names:
            self._add_rules(n, {})
        self._bots: dict[tuple[str, str], Strategy] = {}

    def _add_rules(self, name: str, settings: Mapping[str, Any]) -> RuleSet:
        r = load_rules(name, dict(settings))
        self._rules[(r.name, _settings_key(r.overrides))] = r
        return r

    # -- start-up ------------------------------------------------------------------------------

    def prepare(self, progress: Callable[[str], None] | None = None) -> None:
        """Solve or load every table a served level or bot needs and warm every bot on a sample
        batch, before the first request (the server is ready only after this)."""
        say = progress or (lambda _: None)
        for lv in self.levels.values():
            r = self._rules[(lv.rules, _settings_key(load_rules(lv.rules, dict(lv.settings)).overrides))]
            say(f"level {lv.name}: {lv.spec} on {r.name}")
            self._warm(self.bot(r, lv.spec))
        for r in self._rules.values():
            for name in ("greedy", "solver"):
                say(f"bot {name} on {r.name}")
                self._warm(self.bot(r, name))

    def _warm(self, bot: Strategy) -> None:
        for _, view in scenarios(bot.rules, np.random.default_rng(0))[:3]:
            (bot.choose if view.options is not None else bot.keep)(view)

    # -- what a request may name --------------------------------------------------------------

    def served_rules(self) -> list[dict[str, Any]]:
        return [{"name": r.name, "settings": dict(r.overrides), "digest": r.digest} for r in self._rules.values()]

    def rules_of(self, ref: Any) -> RuleSet:
        """The served rule set a request names (``{"name": ..., "settings": {...}}`` or a name)."""
        try:
            memo = json.dumps(ref, sort_keys=True)
        except (TypeError, ValueError):
            memo = None
        got = self._refs.get(memo) if memo is not None else None
        if got is None:
            got = self._rules_of(ref)
            if memo is not None and len(self._refs) < 1000:
                self._refs[memo] = got
        return got

    def _rules_of(self, ref: Any) -> RuleSet:
        if isinstance(ref, str):
            ref = {"name": ref}
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            raise RequestError(400, "bad_rules", "'rules' must name a rule set: {\"name\": \"scandinavian\"}")
        name, settings = ref["name"], ref.get("settings") or {}
        if not isinstance(settings, dict):
            raise RequestError(400, "bad_rules", "'rules.settings' must be an object of KEY: VALUE")
        if name not in builtin_rule_sets():
            raise RequestError(422, "unknown_rules", f"rule set {name[:40]!r} is not a built-in rule set "
                                                     f"(rule sets are named, never read from a request)")
        try:
            r = load_rules(name, {str(k): v for k, v in settings.items()})
        except UserError as exc:
            raise RequestError(422, "bad_settings", str(exc)) from None
        got = self._rules.get((r.name, _settings_key(r.overrides)))
        if got is None:
            served = ", ".join(f"{x['name']}{_shown(x['settings'])}" for x in self.served_rules())
            raise RequestError(422, "rules_not_served", f"rule set {r.name}{_shown(r.overrides)} is not served "
                                                        f"(served: {served}); start serve with --rules")
        return got

    def spec_of(self, rules: RuleSet, level: Any = None, bot: Any = None) -> str:
        """The bot spec a request asks for: a served level, or a bot of the allow-list."""
        if level is not None and bot is not None:
            raise RequestError(400, "bad_request", "give 'level' or 'bot', not both")
        if level is not None:
            lv = self.levels.get(level) if isinstance(level, str) else None
            if lv is None and isinstance(level, str) and level in self.elsewhere:
                raise RequestError(422, "level_served_elsewhere", served_elsewhere(self.elsewhere[level]))
            if lv is None:
                raise RequestError(422, "unknown_level", f"no level {str(level)[:40]!r} (levels: "
                                                         f"{', '.join(self.levels) or 'none served'})")
            if (lv.rules, _settings_key(load_rules(lv.rules, dict(lv.settings)).overrides)) != \
                    (rules.name, _settings_key(rules.overrides)):
                raise RequestError(422, "level_rules", f"level {lv.name} is tuned for {lv.rules}, the request plays "
                                                       f"{rules.name}{_shown(rules.overrides)}")
            return lv.spec
        if bot is None:
            raise RequestError(400, "bad_request", "name a 'level' (GET /levels) or a 'bot' (e.g. \"greedy\")")
        if not isinstance(bot, str) or len(bot) > 200:
            raise RequestError(400, "bad_request", "'bot' must be a strategy spec such as \"solver:temperature=1\"")
        try:
            name, _ = parse_spec(bot)
        except UserError as exc:
            raise RequestError(422, "bad_bot", str(exc)) from None
        if name not in ALLOWED_BOTS:
            raise RequestError(422, "bot_not_allowed", f"bot {name[:40]!r} is not served (bots: "
                                                       f"{', '.join(ALLOWED_BOTS)})")
        return bot

    def bot(self, rules: RuleSet, spec: str) -> Strategy:
        """The served bot for ``spec`` on ``rules`` (made, prepared and cached on first use)."""
        key = (self.provenance(rules)["rules_digest"], spec)
        got = self._bots.get(key)
        if got is None:
            try:
                got = make(spec, rules)
            except UserError as exc:
                raise RequestError(422, "bad_bot", str(exc)) from None
            if got.sees_table or got.refereed:
                raise RequestError(422, "bot_not_allowed", f"bot {spec[:40]!r} is not served")
            got.prepare()
            self._bots[key] = got
        return got

    # -- messages -------------------------------------------------------------------------------

    def provenance(self, rules: RuleSet | None = None) -> dict[str, Any]:
        """What every reply says it comes from: the harness's version, the levels file's sha256, the
        rule set's digest and its value table (the solver's cache file: digest and table format)."""
        got = self._prov.get(id(rules))
        if got is None:
            got = {"harness": self.version, "levels_sha256": self.levels_sha256,
                   "rules_digest": rules.digest if rules is not None else None,
                   "table": cache_path(rules).name if rules is not None else None}
            if rules is not None:
                self._prov[id(rules)] = got
        return dict(got)

    def handle(self, msg: Any, *, level: str | None = None, bot: str | None = None) -> dict[str, Any]:
        """The reply to one protocol message (``level``/``bot``: the default when it names none)."""
        if not isinstance(msg, dict):
            raise RequestError(400, "bad_request", "a message is a JSON object with a 'type'")
        if "type" not in msg:
            raise RequestError(400, "bad_request", "the message has no 'type' (hello, newgame, decide, ping)")
        t = msg.get("type")
        if t == "hello":
            names = sorted({r.name for r in self._rules.values()})
            who = msg.get("level", level) or msg.get("bot", bot) or "any"
            return {"type": "hello", "protocol": PROTOCOL, "name": f"yatzy-harness {who}", "author": "yatzy-harness",
                    "version": self.version, "rules": names, "options": [], "max_batch": self.max_batch,
                    "provenance": self.provenance()}
        if t == "newgame":
            rules = self.rules_of(_ref_of(msg.get("rules")))
            return {"type": "ready", "id": msg.get("id"), "provenance": self.provenance(rules)}
        if t == "ping":
            return {"type": "pong", "id": msg.get("id")}
        if t == "decide":
            return self.decide(msg, level=level, bot=bot)
        raise RequestError(400, "bad_type", f"unknown message type {str(t)[:40]!r} (hello, newgame, decide, ping)")

    def decide(self, msg: Mapping[str, Any], *, level: str | None = None, bot: str | None = None) -> dict[str, Any]:
        """A ``decide`` request's answer: each position's keep (faces) or box (index), as the level
        or bot plays it in process."""
        rules = self.rules_of(msg.get("rules"))
        spec = self.spec_of(rules, msg.get("level", level if "bot" not in msg else None),
                            msg.get("bot", bot if "level" not in msg and level is None else None))
        strat = self.bot(rules, spec)
        try:
            pos = msgs.read_positions(msg, rules, max_batch=self.max_batch)
        except UserError as exc:
            raise RequestError(413 if "at most" in str(exc) else 422, "bad_positions", str(exc)) from None
        first = _first_column(msg, pos)
        choice = np.empty(len(pos), dtype=np.int64)
        for idx, view in views(pos, first):
            got = strat.choose(view) if pos.kind == "box" else strat.keep(view)
            choice[idx] = np.asarray(got, dtype=np.int64)
        out: dict[str, Any] = {"type": "answer", "id": msg.get("id"), "game": pos.game}
        if pos.kind == "keep":
            out["keep"] = msgs.codec(rules).keep_text[choice].tolist()
        else:
            out["box"] = choice
        out["provenance"] = self.provenance(rules) | {"bot": spec}
        return out

    def advise(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        """Every option's exact value and regret at each position of a request (``advise``)."""
        rules = self.rules_of(msg.get("rules"))
        if rules.saved_rolls or rules.columns > 1:
            raise RequestError(422, "not_exact", "advise needs one column without saved rolls")
        try:
            pos = msgs.read_positions(msg, rules, max_batch=min(self.max_batch, 1000))
        except UserError as exc:
            raise RequestError(422, "bad_positions", str(exc)) from None
        adv = self._advisor(rules)
        first = _first_column(msg, pos)
        extras = msg.get("extras")
        out = []
        names = rules.box_names
        for i in range(len(pos)):
            scores = {names[b]: int(pos.sheet[i, b]) for b in range(rules.n_boxes) if pos.sheet[i, b] >= 0}
            try:
                st = adv.state(scores, int(extras[i]) if isinstance(extras, list) and i < len(extras) else 0)
                p = adv.position(st, int(pos.roll[i]), int(pos.rolls_left[i]), bool(first[i]))
                a = adv.advise(p)
            except (UserError, ValueError, TypeError) as exc:
                raise RequestError(422, "bad_positions", f"position {i}: {exc}") from None
            out.append({"game": int(pos.game[i]), "decision": a.decision, "value": a.value,
                        "options": [o.to_json() for o in a.options]})
        return {"type": "advice", "id": msg.get("id"), "positions": out, "provenance": self.provenance(rules)}

    def _advisor(self, rules: RuleSet) -> Advisor:
        key = (rules.digest, "advisor")
        got = self._bots.get(key)
        if got is None:
            got = self._bots[key] = Advisor(rules)  # type: ignore[assignment]
        return got  # type: ignore[return-value]


def _settings_key(settings: Mapping[str, Any]) -> str:
    return json.dumps(dict(settings), sort_keys=True, default=str)


def _shown(settings: Mapping[str, Any]) -> str:
    return (" (" + ", ".join(f"{k}={v}" for k, v in settings.items()) + ")") if settings else ""


def _ref_of(rules: Any) -> Any:
    """A newgame's full rule-set description as a reference (name and changed settings)."""
    if isinstance(rules, dict) and "name" in rules:
        return {"name": rules["name"], "settings": rules.get("overrides", rules.get("settings", {})) or {}}
    return rules


def _first_column(msg: Mapping[str, Any], pos: msgs.Positions) -> np.ndarray:
    """Whether each position's dice come from the turn's first roll: a keep's step 1; a box's
    ``first`` column (false when absent)."""
    if pos.kind == "keep":
        return pos.step == 1
    raw = msg.get("first")
    if raw is None:
        return np.zeros(len(pos), dtype=bool)
    if not isinstance(raw, list) or len(raw) != len(pos) or not all(isinstance(x, bool) for x in raw):
        raise RequestError(422, "bad_positions", f"'first' must be a list of {len(pos)} booleans")
    return np.array(raw, dtype=bool)


def views(pos: msgs.Positions, first: np.ndarray) -> list[tuple[np.ndarray, TurnView]]:
    """The positions as the engine's views, one per (seat, column, turn, step): the arrays a bot
    sees in process at that decision, so it answers them exactly as it would there."""
    rules = pos.rules
    nb = rules.n_boxes
    key = np.stack([pos.seat, pos.column, pos.turn, pos.step], axis=1)
    if (key == key[0]).all():  # the usual batch: one decision of many games
        group = np.zeros(len(key), dtype=np.int64)
    else:
        _, group = np.unique(key, axis=0, return_inverse=True)
    out = []
    for g in range(int(group.max()) + 1):
        idx = np.flatnonzero(group.reshape(-1) == g)
        i0 = int(idx[0])
        column, turn = int(pos.column[i0]) - 1, int(pos.turn[i0]) - 1
        view = msgs.view_from(rules, pos.sheet[idx], pos.roll[idx], seat=int(pos.seat[i0]), turn=column * nb + turn,
                              column=column, step=msgs.internal_step(pos.kind, int(pos.step[i0])),
                              games=pos.game[idx], keys=pos.keys[idx],
                              rolls_left=pos.rolls_left[idx] if pos.kind == "keep" else np.zeros(len(idx)),
                              first=first[idx], totals=pos.totals[idx])
        if view.allowed is not None and (view.allowed == 0).any():
            raise RequestError(422, "bad_positions", "a box decision on a full sheet")
        out.append((idx, view))
    return out


# ---------------------------------------------------------------------------------------------
# stdio: ``yatzy-harness engine play``


def play_stdio(*, bot: str | None, level: str | None, levels: str | None, stdin: Any = None, stdout: Any = None) -> int:
    """Speak the engine protocol on stdin/stdout as a harness bot (``--bot``) or level (``--level``)."""
    from importlib.metadata import PackageNotFoundError, version

    if (bot is None) == (level is None):
        raise UserError("engine play needs --bot SPEC or --level NAME (with --levels FILE)")
    if level is not None and not levels:
        raise UserError("--level needs --levels FILE (the levels.json that calibrate --levels writes)")
    try:
        ver = version("yatzy-harness")
    except PackageNotFoundError:
        ver = "unknown"
    service = Service(levels, max_batch=msgs.MAX_BATCH, version=ver)
    if level is not None and level in service.elsewhere:
        raise UserError(served_elsewhere(service.elsewhere[level]))
    if bot is not None:
        for r in list(service._rules.values()):
            service.spec_of(r, bot=bot)
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    for line in inp:
        if not line.strip():
            continue
        try:
            msg = msgs.loads(line)
        except ValueError:
            reply: dict[str, Any] = {"type": "error", "id": None, "message": "not JSON"}
        else:
            if isinstance(msg, dict) and msg.get("type") == "quit":
                return 0
            try:
                if isinstance(msg, dict) and msg.get("type") == "newgame":
                    # tables and kernels now, inside the handshake's time: the first decision is in budget
                    rules = _newgame_rules(service, msg)
                    service._warm(service.bot(rules, service.spec_of(rules, level=level, bot=bot)))
                reply = service.handle(msg, level=level, bot=bot)
                if reply.get("type") == "hello" and bot is not None:
                    reply["rules"] = ["*"]  # over stdio a bot plays any built-in rule set, served on newgame
            except RequestError as exc:
                reply = {"type": "error", "id": msg.get("id") if isinstance(msg, dict) else None,
                         "error": exc.error, "message": str(exc)}
        out.write(msgs.dumps(reply) + b"\n")
        out.flush()
    return 0


def _newgame_rules(service: Service, msg: Mapping[str, Any]) -> RuleSet:
    """A newgame's rule set: a built-in rule set the engine plays (served on the fly for stdio)."""
    ref = _ref_of(msg.get("rules"))
    try:
        return service.rules_of(ref)
    except RequestError as exc:
        if exc.error != "rules_not_served":
            raise
        return service._add_rules(ref["name"], ref.get("settings") or {})

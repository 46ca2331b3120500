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

import functools
import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from harness.util.errors import UserError
from harness.play.protocol import PROTOCOL
from harness.decisions.positions import Advisor
from harness.play.protocol import messages as msgs
from harness.play.protocol.check import random_sheets, scenarios, view_of
from harness.game.loop import engine_cached
from harness.game.registry import make
from harness.game.rules import RuleSet, builtin_rule_sets, load_rules
from harness.exact.solver import cache_path
from harness.util import jit, progress as P
from harness.util.specs import parse_spec
from harness.game.strategy import Strategy, TurnView
from harness.service.locks import rules_lock

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
        raise UserError(
            f"{path}: not JSON ({exc}); serve takes the levels.json that calibrate --levels writes"
        ) from None
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
        out.append(
            Level(
                lv["name"],
                lv["spec"],
                str(d.get("rules")),
                settings,
                bool(lv.get("external", d.get("external", False))),
            )
        )
    return out, hashlib.sha256(data).hexdigest()


def served_elsewhere(lv: Level) -> str:
    """Why the harness does not serve an external engine's level, in one line."""
    return (
        f"level {lv.name} is played by an external engine ({lv.spec}): it is served by that engine's own "
        "program, not by the harness"
    )


#: The bots served on every rule set when the command names none (``serve --bot``).
DEFAULT_BOTS = ("greedy", "solver")
#: Positions a request works through between two looks at its deadline: about this many seconds of
#: work each, from the bot's measured cost (and never fewer than MIN_BLOCK positions).
BLOCK_SECONDS = 0.002
MIN_BLOCK = 16


@dataclass(frozen=True)
class Cost:
    """A served player's measured cost: ``fixed`` seconds a request plus ``per_position`` seconds for
    each position (measured at warm-up on fresh random mid-game positions, the worse of keeps and boxes)."""

    fixed: float
    per_position: float

    def of(self, n: int) -> float:
        return self.fixed + self.per_position * max(int(n), 0)

    @property
    def block(self) -> int:
        return max(MIN_BLOCK, int(BLOCK_SECONDS / max(self.per_position, 1e-9)))


@dataclass
class Served:
    """One player of the closed set: a level, or a ``--bot`` spec on a served rule set.

    ``name`` is what metrics and logs call it (a level's name, or ``bot:`` and the bot's canonical
    spec), never a request's own text."""

    name: str
    spec: str
    rules: RuleSet
    bot: Strategy
    cost: Cost = Cost(0.0, 0.0)


def _deciding(service: Service, s: Served) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """A served player's decision, as its cost is measured at warm-up (no deadline)."""

    def decide(msg: Mapping[str, Any]) -> dict[str, Any]:
        return service._decide(s, msg, None)

    return decide


class Service:
    """What the server answers with: a closed set of levels and bots, each made and warmed once.

    The set is fixed here: the levels of ``levels_path`` and each spec of ``bots`` on every served
    rule set. :meth:`prepare` solves or loads every table, compiles every kernel and measures each
    player's cost; after it, no request makes a bot, solves a table or compiles a kernel: a
    request naming anything else is refused (422 ``not_served``)."""

    def __init__(
        self,
        levels_path: str | None = None,
        rules: tuple[str, ...] = (),
        *,
        bots: tuple[str, ...] = DEFAULT_BOTS,
        max_batch: int = 10_000,
        version: str = "",
    ) -> None:
        self.levels: dict[str, Level] = {}
        self.levels_sha256: str | None = None
        self.levels_path = levels_path
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
        self.bot_specs = tuple(bots)
        for spec in self.bot_specs:
            name, _ = parse_spec(spec)
            if name not in ALLOWED_BOTS:
                raise UserError(f"--bot {spec}: serve serves the built-in bots {', '.join(ALLOWED_BOTS)}, not {name!r}")
        self._rules: dict[tuple[str, str], RuleSet] = {}
        #: a request's rule-set reference (as JSON) -> the served rule set, and each one's provenance
        self._refs: dict[str, RuleSet] = {}
        self._prov: dict[int, dict[str, Any]] = {}
        #: (rules digest, canonical spec) -> the served bot; a level's name -> its served player
        self._served: dict[tuple[str, str], Served] = {}
        self._level_served: dict[str, Served] = {}
        self._labels: dict[tuple[str, str], str] = {}
        self._advisors: dict[str, tuple[Advisor, Cost]] = {}
        self._warmed: set[str] = set()
        #: a kernel helper not awaited yet (kernel_helper): its process, the players it compiles
        #: for (their ids) and when it started
        self._helper: tuple[Any, set[int], float] | None = None
        for lv in self.levels.values():
            r = self._add_rules(lv.rules, lv.settings)
            self._level_served[lv.name] = Served(lv.name, lv.spec, r, self._make(r, lv.spec, f"level {lv.name}"))
        for n in names:
            self._add_rules(n, {})
        for r in list(self._rules.values()):
            self._add_bots(r)
        self.prepared = False

    def _make(self, rules: RuleSet, spec: str, what: str) -> Strategy:
        try:
            bot = make(spec, rules)
        except UserError as exc:
            raise UserError(f"{what}: {exc}") from None
        if bot.sees_table or bot.refereed:
            raise UserError(f"{what}: bot {spec!r} cannot be served (it reads every seat's sheet or is external)")
        return bot

    def _add_rules(self, name: str, settings: Mapping[str, Any]) -> RuleSet:
        r = load_rules(name, dict(settings))
        return self._rules.setdefault((r.name, _settings_key(r.overrides)), r)

    def _add_bots(self, rules: RuleSet) -> None:
        for spec in self.bot_specs:
            bot = self._make(rules, spec, f"--bot {spec} on {rules.name}")
            self._served.setdefault((rules.digest, bot.label), Served(f"bot:{bot.label}", bot.label, rules, bot))

    def serve_rules(self, name: str, settings: Mapping[str, Any]) -> RuleSet:
        """Add a rule set to the served set, its bots prepared now (``engine play``'s newgame: a
        stdio engine serves one client, which names its rule set in the handshake)."""
        r = self._add_rules(name, settings)
        if r.digest not in self._warmed:
            self._add_bots(r)
            for s in self.players():
                if s.rules is r:
                    s.bot.prepare()
                    self._warm(s.bot)
            self._warmed.add(r.digest)
        return r

    def players(self) -> list[Served]:
        """Every served player: the levels, then the bots."""
        return [*self._level_served.values(), *self._served.values()]

    # -- start-up ------------------------------------------------------------------------------

    def prepare(self, progress: Callable[[str], None] | None = None, *, measure: bool = True) -> None:
        """Solve or load every table a served level or bot needs, compile its kernels, and measure
        its cost per position (``measure``), before the first request (the server is ready only
        after this). The exact rule sets' advisors (``/advise``) too."""
        say = progress or (lambda _: None)
        said: set[int] = set()
        if self._helper is not None:
            # the tables to solve first, while the helper compiles the bots' kernels (kernel_helper)
            for s in self.players():
                if s.bot.slow_prepare():
                    said.add(id(s))
                    say(_loading(s))
                    s.bot.prepare_policy()
        for s in self.players():
            if self._helper is not None and id(s) in self._helper[1]:
                proc, _, t0 = self._helper
                self._helper = None
                jit.set_helper(proc, max(HELPER_SECONDS - (time.monotonic() - t0), 1.0), "the bots' kernels")
                jit.await_helper()  # they load from numba's cache from here on
            if id(s) not in said:
                say(_loading(s))
            s.bot.prepare()
            self._warm(s.bot)
            if measure:
                s.cost = self._measure(s.rules, _deciding(self, s))
        for r in self._rules.values():
            if r.saved_rolls or r.columns > 1:
                continue
            adv = Advisor(r)
            self._advisors[r.digest] = (adv, Cost(0.0, 0.0))
            cost = self._measure(r, self.advise, sizes=(1, 64)) if measure else Cost(0.0, 0.0)
            self._advisors[r.digest] = (adv, cost)
        self.prepared = True

    def kernel_helper(self) -> bool:
        """A first start: fork a helper (:func:`harness.util.jit.fork_helper`, from the command's
        main thread) that compiles players' kernels into numba's cache on the other core: every
        player's where a table is to be solved (:meth:`prepare` solves first), else the bots' where
        levels are served beside them, nothing is cached and a core is free (the levels are made
        first; it compiles again some kernels the levels share: 10 s of CPU for 4 in this process).
        :meth:`prepare` waits for it before its first player of those (a first ``serve`` of the
        default bots waited 30 s for compiling, one kernel after the other)."""
        players = self.players()
        if not any(s.bot.slow_prepare() for s in players):
            if not (self._level_served and self._served) or engine_cached() or not jit.core_free():
                return False
            players = list(self._served.values())
        proc = jit.fork_helper(lambda: self._warm_kernels(players), HELPER_SECONDS, "", register=False)
        if proc is not None:
            self._helper = (proc, {id(s) for s in players}, time.monotonic())
        return proc is not None

    def _warm_kernels(self, players: list[Served]) -> None:
        P.enable(False)  # the parent speaks for both
        for s in players:
            s.bot.warm_kernels()  # a bot whose set-up solves: its kernels on a table of zeros
            if not s.bot.slow_prepare():
                s.bot.prepare()
            self._warm(s.bot)

    def _warm(self, bot: Strategy) -> None:
        for _, view in scenarios(bot.rules, np.random.default_rng(0))[:3]:
            (bot.choose if view.options is not None else bot.keep)(view)

    def _measure(
        self, rules: RuleSet, work: Callable[[dict[str, Any]], Any], sizes: tuple[int, int] = (1, 512)
    ) -> Cost:
        """A player's cost, the worse of keeps and boxes: ``fixed`` from a one-position request seen
        before (parsing, views, the answer: the request's own overhead), ``per_position`` from
        requests of fresh random mid-game positions, whose states the bot has never met (its
        decision caches cold: the cost of a batch of new games). Medians of three."""
        gen = np.random.default_rng(7)
        fixed, per = 0.0, 0.0
        for kind in ("keep", "box"):
            one = sample_request(rules, kind, sizes[0], gen)
            work(one)
            f = _median_time([lambda: work(one)] * 3)
            bigs = [sample_request(rules, kind, sizes[1], gen) for _ in range(3)]
            big = _median_time([functools.partial(work, m) for m in bigs])
            fixed, per = max(fixed, f), max(per, max(big - f, 0.0) / sizes[1])
        return Cost(fixed, max(per, 1e-7))

    # -- what a request may name --------------------------------------------------------------

    def served_rules(self) -> list[dict[str, Any]]:
        return [{"name": r.name, "settings": dict(r.overrides), "digest": r.digest} for r in self._rules.values()]

    def served_bots(self) -> list[str]:
        return list(dict.fromkeys(s.spec for s in self._served.values()))

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
            raise RequestError(400, "bad_rules", '\'rules\' must name a rule set: {"name": "scandinavian"}')
        name, settings = ref["name"], ref.get("settings") or {}
        if not isinstance(settings, dict):
            raise RequestError(400, "bad_rules", "'rules.settings' must be an object of KEY: VALUE")
        if name not in builtin_rule_sets():
            raise RequestError(
                422,
                "unknown_rules",
                f"rule set {name[:40]!r} is not a built-in rule set (rule sets are named, never read from a request)",
            )
        try:
            r = load_rules(name, {str(k): v for k, v in settings.items()})
        except UserError as exc:
            raise RequestError(422, "bad_settings", str(exc)) from None
        got = self._rules.get((r.name, _settings_key(r.overrides)))
        if got is None:
            served = ", ".join(f"{x['name']}{_shown(x['settings'])}" for x in self.served_rules())
            raise RequestError(
                422,
                "rules_not_served",
                f"rule set {r.name}{_shown(r.overrides)} is not served (served: {served}); start serve with --rules",
            )
        return got

    def served_of(self, rules: RuleSet, level: Any = None, bot: Any = None) -> Served:
        """The served player a request asks for: a level by name, or a served bot by its spec (any
        spelling of the same parameters); 422 ``not_served`` for a bot outside the closed set."""
        if level is not None and bot is not None:
            raise RequestError(400, "bad_request", "give 'level' or 'bot', not both")
        if level is not None:
            lv = self.levels.get(level) if isinstance(level, str) else None
            if lv is None and isinstance(level, str) and level in self.elsewhere:
                raise RequestError(422, "level_served_elsewhere", served_elsewhere(self.elsewhere[level]))
            if lv is None:
                raise RequestError(
                    422,
                    "unknown_level",
                    f"no level {str(level)[:40]!r} (levels: {', '.join(self.levels) or 'none served'})",
                )
            s = self._level_served[lv.name]
            if s.rules is not rules:
                raise RequestError(
                    422,
                    "level_rules",
                    f"level {lv.name} is tuned for {lv.rules}, the request plays {rules.name}{_shown(rules.overrides)}",
                )
            return s
        if bot is None:
            raise RequestError(400, "bad_request", "name a 'level' (GET /levels) or a 'bot' (e.g. \"greedy\")")
        if not isinstance(bot, str) or len(bot) > 200:
            raise RequestError(400, "bad_request", "'bot' must be a strategy spec such as \"solver:temperature=1\"")
        label = self._labels.get((rules.digest, bot))
        if label is None:
            try:
                name, _ = parse_spec(bot)
                # the canonical spelling of an allowed bot (made, never prepared: nothing is solved)
                label = make(bot, rules).label if name in ALLOWED_BOTS else f"\0{name}"
            except UserError as exc:
                raise RequestError(422, "bad_bot", str(exc)) from None
            if len(self._labels) < 1000:
                self._labels[(rules.digest, bot)] = label
        got = self._served.get((rules.digest, label))
        if got is None:
            raise RequestError(
                422,
                "not_served",
                f"bot {bot[:60]!r} is not served on {rules.name} (served bots: "
                f"{', '.join(self.served_bots()) or 'none'}; levels: "
                f"{', '.join(self.levels) or 'none'})",
            )
        return got

    def spec_of(self, rules: RuleSet, level: Any = None, bot: Any = None) -> str:
        """The bot spec a request asks for (a served level's, or a served bot's canonical spec)."""
        return self.served_of(rules, level, bot).spec

    # -- the cost of a request, before it runs ------------------------------------------------

    def plan(
        self, msg: Any, *, route: str, level: str | None = None, bot: str | None = None
    ) -> tuple[str, float, int] | None:
        """(the served player's name, the estimated seconds of work, positions) of a request that
        computes (a ``decide``, or any ``/advise``); None for a message answered at once (``hello``,
        ``ping``, ...). A :class:`RequestError` for what would be refused anyway."""
        if not isinstance(msg, dict):
            return None
        dice = msg.get("dice")
        n = len(dice) if isinstance(dice, list) else 1
        if route == "advise":
            rules = self.rules_of(msg.get("rules"))
            adv = self._advisors.get(rules.digest)
            if adv is None:
                raise RequestError(422, "not_exact", "advise needs one column without saved rolls")
            return f"advise:{rules.name}", adv[1].of(n), n
        if msg.get("type") != "decide":
            return None
        s = self._player_of(msg, level, bot)
        return s.name, s.cost.of(n), n

    def _player_of(self, msg: Mapping[str, Any], level: str | None, bot: str | None) -> Served:
        rules = self.rules_of(msg.get("rules"))
        return self.served_of(
            rules,
            msg.get("level", level if "bot" not in msg else None),
            msg.get("bot", bot if "level" not in msg and level is None else None),
        )

    # -- messages -------------------------------------------------------------------------------

    def provenance(self, rules: RuleSet | None = None) -> dict[str, Any]:
        """What every reply says it comes from: the harness's version, the levels file's sha256, the
        rule set's digest and its value table (the solver's cache file: digest and table format)."""
        got = self._prov.get(id(rules))
        if got is None:
            got = {
                "harness": self.version,
                "levels_sha256": self.levels_sha256,
                "rules_digest": rules.digest if rules is not None else None,
                "table": cache_path(rules).name if rules is not None else None,
            }
            if rules is not None:
                self._prov[id(rules)] = got
        return dict(got)

    def handle(
        self,
        msg: Any,
        *,
        level: str | None = None,
        bot: str | None = None,
        deadline: float | None = None,
        urgent: bool = False,
    ) -> dict[str, Any]:
        """The reply to one protocol message (``level``/``bot``: the default when it names none);
        a ``decide`` stops with 503 ``deadline`` once ``time.monotonic()`` passes ``deadline``, and
        an ``urgent`` one (the cheap lane's) takes its rule set's lock before any other waiting."""
        if not isinstance(msg, dict):
            raise RequestError(400, "bad_request", "a message is a JSON object with a 'type'")
        if "type" not in msg:
            raise RequestError(400, "bad_request", "the message has no 'type' (hello, newgame, decide, ping)")
        t = msg.get("type")
        if t == "hello":
            names = sorted({r.name for r in self._rules.values()})
            who = msg.get("level", level) or msg.get("bot", bot) or "any"
            return {
                "type": "hello",
                "protocol": PROTOCOL,
                "name": f"yatzy-harness {who}",
                "author": "yatzy-harness",
                "version": self.version,
                "rules": names,
                "options": [],
                "max_batch": self.max_batch,
                "provenance": self.provenance(),
            }
        if t == "newgame":
            rules = self.rules_of(_ref_of(msg.get("rules")))
            return {"type": "ready", "id": msg.get("id"), "provenance": self.provenance(rules)}
        if t == "ping":
            return {"type": "pong", "id": msg.get("id")}
        if t == "decide":
            return self._decide(self._player_of(msg, level, bot), msg, deadline, urgent)
        raise RequestError(400, "bad_type", f"unknown message type {str(t)[:40]!r} (hello, newgame, decide, ping)")

    def compute(
        self,
        msg: Any,
        *,
        route: str,
        level: str | None = None,
        bot: str | None = None,
        deadline: float | None = None,
        urgent: bool = False,
    ) -> dict[str, Any]:
        """The answer of a request that :meth:`plan` said computes: ``/advise``'s, or a ``decide``'s."""
        if route == "advise":
            return self.advise(msg, deadline, urgent)
        return self.handle(msg, level=level, bot=bot, deadline=deadline, urgent=urgent)

    def decide(
        self, msg: Mapping[str, Any], *, level: str | None = None, bot: str | None = None, deadline: float | None = None
    ) -> dict[str, Any]:
        """A ``decide`` request's answer: each position's keep (faces) or box (index), as the level
        or bot plays it in process."""
        return self._decide(self._player_of(msg, level, bot), msg, deadline)

    def _decide(
        self, s: Served, msg: Mapping[str, Any], deadline: float | None, urgent: bool = False
    ) -> dict[str, Any]:
        rules, strat = s.rules, s.bot
        try:
            pos = msgs.read_positions(msg, rules, max_batch=self.max_batch)
        except UserError as exc:
            raise RequestError(413 if "at most" in str(exc) else 422, "bad_positions", str(exc)) from None
        first = _first_column(msg, pos)
        choice = np.empty(len(pos), dtype=np.int64)
        lock = rules_lock(rules)
        for idx, view in views(pos, first, block=s.cost.block if deadline is not None else None):
            _check(deadline)
            with lock.hold(urgent):
                got = strat.choose(view) if pos.kind == "box" else strat.keep(view)
            choice[idx] = np.asarray(got, dtype=np.int64)
        out: dict[str, Any] = {"type": "answer", "id": msg.get("id"), "game": pos.game}
        if pos.kind == "keep":
            out["keep"] = msgs.codec(rules).keep_text[choice].tolist()
        else:
            out["box"] = choice
        out["provenance"] = self.provenance(rules) | {"bot": s.spec}
        return out

    def advise(self, msg: Mapping[str, Any], deadline: float | None = None, urgent: bool = False) -> dict[str, Any]:
        """Every option's exact value and regret at each position of a request (``advise``)."""
        if not isinstance(msg, dict):
            raise RequestError(400, "bad_request", "a message is a JSON object with a 'type'")
        rules = self.rules_of(msg.get("rules"))
        got = self._advisors.get(rules.digest)
        if got is None:
            raise RequestError(422, "not_exact", "advise needs one column without saved rolls")
        adv, cost = got
        try:
            pos = msgs.read_positions(msg, rules, max_batch=min(self.max_batch, 1000))
        except UserError as exc:
            raise RequestError(422, "bad_positions", str(exc)) from None
        first = _first_column(msg, pos)
        extras = msg.get("extras")
        out = []
        names = rules.box_names
        lock = rules_lock(rules)
        for i in range(len(pos)):
            if i % cost.block == 0:
                _check(deadline)
            scores = {names[b]: int(pos.sheet[i, b]) for b in range(rules.n_boxes) if pos.sheet[i, b] >= 0}
            try:
                st = adv.state(scores, int(extras[i]) if isinstance(extras, list) and i < len(extras) else 0)
                p = adv.position(st, int(pos.roll[i]), int(pos.rolls_left[i]), bool(first[i]))
                with lock.hold(urgent):  # the advisor's plan cache is one of the rule set's
                    a = adv.advise(p)
            except (UserError, ValueError, TypeError) as exc:
                raise RequestError(422, "bad_positions", f"position {i}: {exc}") from None
            out.append(
                {
                    "game": int(pos.game[i]),
                    "decision": a.decision,
                    "value": a.value,
                    "options": [o.to_json() for o in a.options],
                }
            )
        return {"type": "advice", "id": msg.get("id"), "positions": out, "provenance": self.provenance(rules)}


#: About how long :meth:`Service.kernel_helper` compiles the default bots' kernels (the solver's
#: keeps and boxes, greedy's) on an idle development machine, seconds.
HELPER_SECONDS = 11.0


def _loading(s: Served) -> str:
    return (
        f"level {s.name}: {s.spec} on {s.rules.name}"
        if not s.name.startswith("bot:")
        else f"bot {s.spec} on {s.rules.name}"
    )


def _median_time(works: list[Callable[[], Any]]) -> float:
    """The median of the times ``works`` take, one each."""
    times = []
    for work in works:
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise RequestError(
            503, "deadline", "the request passed its compute budget before it was done; send smaller batches"
        )


def sample_request(rules: RuleSet, kind: str, n: int, gen: np.random.Generator) -> dict[str, Any]:
    """A ``decide`` message (as parsed) of ``n`` random mid-game positions of ``kind`` (keep or box):
    what warm-up times a served player on."""
    k = rules.n_boxes // 2
    sheets = random_sheets(rules, gen, n, k)
    rolls = gen.integers(rules.dice.n_rolls, size=n)
    left = 0 if kind == "box" else rules.rolls_per_turn - 1
    view = view_of(
        rules,
        sheets,
        rolls,
        rolls_left=left,
        first=left == rules.rolls_per_turn - 1,
        games=np.arange(n),
        seed=int(gen.integers(1 << 30)),
    )
    out: dict[str, Any] = msgs.loads(msgs.request(0, view, kind, budget_ms=1.0))
    return out


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
        keep_first: np.ndarray = pos.step == 1
        return keep_first
    raw = msg.get("first")
    if raw is None:
        return np.zeros(len(pos), dtype=bool)
    if not isinstance(raw, list) or len(raw) != len(pos) or not all(isinstance(x, bool) for x in raw):
        raise RequestError(422, "bad_positions", f"'first' must be a list of {len(pos)} booleans")
    return np.array(raw, dtype=bool)


def views(pos: msgs.Positions, first: np.ndarray, block: int | None = None) -> list[tuple[np.ndarray, TurnView]]:
    """The positions as the engine's views, one per (seat, column, turn, step) and at most ``block``
    positions each: the arrays a bot sees in process at that decision, so it answers them exactly
    as it would there (a position's answer depends on it alone, never on its batch)."""
    key = np.stack([pos.seat, pos.column, pos.turn, pos.step], axis=1)
    if (key == key[0]).all():  # the usual batch: one decision of many games
        group = np.zeros(len(key), dtype=np.int64)
    else:
        _, group = np.unique(key, axis=0, return_inverse=True)
    out = []
    parts = [np.flatnonzero(group.reshape(-1) == g) for g in range(int(group.max()) + 1)]
    if block is not None:
        parts = [p[i : i + block] for p in parts for i in range(0, len(p), block)]
    for idx in parts:
        view = msgs.view_from(pos.take(idx), first[idx])
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
    service = Service(levels, bots=(bot,) if bot is not None else (), max_batch=msgs.MAX_BATCH, version=ver)
    if level is not None and level in service.elsewhere:
        raise UserError(served_elsewhere(service.elsewhere[level]))
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
                    service.served_of(rules, level=level, bot=bot)
                reply = service.handle(msg, level=level, bot=bot)
                if reply.get("type") == "hello" and bot is not None:
                    reply["rules"] = ["*"]  # over stdio a bot plays any built-in rule set, served on newgame
            except RequestError as exc:
                reply = {
                    "type": "error",
                    "id": msg.get("id") if isinstance(msg, dict) else None,
                    "error": exc.error,
                    "message": str(exc),
                }
        out.write(msgs.dumps(reply) + b"\n")
        out.flush()
    return 0


def _newgame_rules(service: Service, msg: Mapping[str, Any]) -> RuleSet:
    """A newgame's rule set: a built-in rule set the engine plays (served on the fly for stdio, its
    players prepared in the handshake's time)."""
    ref = _ref_of(msg.get("rules"))
    try:
        rules = service.rules_of(ref)
    except RequestError as exc:
        if exc.error != "rules_not_served":
            raise
        return service.serve_rules(ref["name"], ref.get("settings") or {})
    return service.serve_rules(rules.name, dict(rules.overrides))

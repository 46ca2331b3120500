"""``yatzy-harness engine check``: drive an engine through every kind of decision and say what fails.

For every rule set the engine claims (the built-in ones; ``*`` claims them all), the checker sends
positions of every kind the rules have: keeps at every number of rerolls left (maxi's saved rolls
too), box choices with scratch boxes only, the forced box, the joker after a yatzy (both with the
key box holding its score and scratched), servida on the first roll, the final turn, and full
games against itself. Every answer is read against the harness's own rules (the keep a
sub-multiset of the dice, the box one the rules allow, the games echoed in order, within the
budget). The same positions are then sent again in other batches (one at a time, reversed,
shuffled): every answer must be the same whatever the batch, which a stochastic engine gets by
seeding from each position's key, seat, turn and step. Malformed messages must get an ``error``
reply and leave the engine answering; ``ping`` a ``pong``; ``quit`` must end the process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from harness.game import rng
from harness.game.loop import play
from harness.util.errors import UserError
from harness.play.protocol import PROTOCOL
from harness.play.protocol import messages as msgs
from harness.play.protocol import options as opts
from harness.play.protocol.http import HttpEngine, HttpRejected, HttpTimeout
from harness.play.protocol.referee import EngineStrategy, check_hello
from harness.play.protocol.stdio import EngineDied, EngineFlood, StdioEngine
from harness.game.registry import make
from harness.game.rules import RuleSet, builtin_rule_sets, load_rules
from harness.game.strategy import CHOOSE_STEP, TurnView


@dataclass(frozen=True)
class Row:
    """One check: the rule set it ran on ("" for the protocol's own), its name, pass or fail, detail."""

    rules: str
    check: str
    passed: bool
    detail: str = ""


@dataclass
class CheckReport:
    """What ``engine check`` found: the engine's handshake and one :class:`Row` per check."""

    target: str
    hello: dict[str, Any] | None = None
    rows: list[Row] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if not r.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "passed": self.passed,
            "hello": self.hello,
            "checks": [{"rules": r.rules, "check": r.check, "passed": r.passed, "detail": r.detail} for r in self.rows],
        }


class _Link:
    """A raw connection to the engine (stdio or HTTP): one message out, one reply back, timed."""

    def __init__(self, spec: EngineStrategy) -> None:
        c = spec.conf
        self.conf = c
        if c.url:
            self.client: StdioEngine | HttpEngine = HttpEngine(c.url, spec._token())
        else:
            self.client = StdioEngine(c.argv, cwd=c.cwd, stderr_cap=c.stderr_kb << 10, memory_mb=c.memory_mb)
            self.client.start()
        self.rid = 1000

    @property
    def is_http(self) -> bool:
        return isinstance(self.client, HttpEngine)

    def next_id(self) -> int:
        self.rid += 1
        return self.rid

    def exchange(self, body: bytes, wait: float, want: Any = None) -> tuple[Any, float]:
        """(reply, seconds); reply None when nothing came in ``wait`` seconds. With ``want``, lines
        answering an earlier id are skipped."""
        t0 = time.monotonic()
        deadline = t0 + wait
        if isinstance(self.client, HttpEngine):
            try:
                raw = self.client.exchange(body, deadline)
            except HttpTimeout:
                return None, time.monotonic() - t0
            except HttpRejected as exc:
                return {"type": "error", "message": str(exc)}, time.monotonic() - t0
            return _parse(raw), time.monotonic() - t0
        self.client.send(body)
        while True:
            line = self.client.read_line(deadline)
            if line is None:
                return None, time.monotonic() - t0
            if not line.strip():
                continue
            obj = _parse(line)
            rep = msgs.answer_id(obj)
            if want is not None and isinstance(rep, int) and not isinstance(rep, bool) and rep < want:
                continue
            return obj, time.monotonic() - t0

    def close(self) -> None:
        if isinstance(self.client, StdioEngine):
            self.client.kill()
        else:
            self.client.close()


def _parse(raw: bytes) -> Any:
    try:
        return msgs.loads(raw)
    except ValueError:
        return {"type": "<unreadable>", "line": raw[:80].decode(errors="replace")}


# ---------------------------------------------------------------------------------------------
# positions


#: The game keys' seed of the checker's positions, unless it names another.
CHECK_SEED = 2026


def view_of(
    rules: RuleSet,
    sheets: np.ndarray,
    rolls: np.ndarray,
    *,
    rolls_left: int,
    first: bool | np.ndarray = True,
    seat: int = 0,
    games: np.ndarray | None = None,
    seed: int = CHECK_SEED,
) -> TurnView:
    """A :class:`TurnView` of B positions of one column for the checker, two seats at the table:
    sheets (B, NB) scores with -1 for open boxes (every sheet with the same number of filled boxes),
    rolls (B,) roll indices; ``rolls_left`` 0 makes it a box choice (options from the rules, as the
    engine computes them); ``seed`` the game keys' seed."""
    b = len(sheets)
    n_filled = (sheets >= 0).sum(axis=1)
    assert (n_filled == n_filled[0]).all(), "one turn a batch"
    games = np.arange(b, dtype=np.int64) if games is None else np.asarray(games, dtype=np.int64)
    totals = np.zeros((b, 2), dtype=np.int64)
    totals[:, seat] = np.where(sheets >= 0, sheets, 0).sum(axis=1)
    kind = "keep" if rolls_left > 0 else "box"
    step = (
        max(rules.rolls_per_turn - rolls_left, 1) if kind == "keep" else 0
    )  # the protocol's step: the roll a keep answers
    pos = msgs.Positions(
        rules,
        kind,
        games,
        rng.game_keys(seed, games),
        np.full(b, seat),
        np.ones(b, np.int64),
        np.full(b, int(n_filled[0]) + 1),
        np.full(b, step),
        np.asarray(rolls),
        np.full(b, rolls_left),
        np.asarray(sheets),
        totals,
    )
    return msgs.view_from(pos, np.broadcast_to(np.asarray(first, dtype=bool), (b,)))


def _roll(rules: RuleSet, faces: str) -> int:
    r = msgs.codec(rules).roll_of(faces)
    assert r >= 0, faces
    return r


def random_sheets(rules: RuleSet, gen: np.random.Generator, b: int, n_filled: int) -> np.ndarray:
    """(B, NB) sheets with ``n_filled`` boxes filled by scores the box can take (-1 open)."""
    nb = rules.n_boxes
    out = np.full((b, nb), -1, dtype=np.int16)
    table = rules.table
    for i in range(b):
        boxes = np.arange(n_filled) if rules.forced else gen.choice(nb, size=n_filled, replace=False)
        for bx in boxes:
            out[i, bx] = table[gen.integers(table.shape[0]), bx]
    return out


def scenarios(rules: RuleSet, gen: np.random.Generator) -> list[tuple[str, TurnView]]:
    """(name, view) of every decision kind the rule set has, a few dozen positions each."""
    d, nb = rules.dice, rules.n_boxes
    out: list[tuple[str, TurnView]] = []
    rr = rules.rolls_per_turn - 1
    for k in (0, nb // 2, nb - 1):
        sheets = random_sheets(rules, gen, 24, k)
        rolls = gen.integers(d.n_rolls, size=24)
        for left in range(rr, 0, -1):
            out.append(
                (
                    f"keep, {left} reroll{'s' if left > 1 else ''} left, turn {k + 1}",
                    view_of(rules, sheets, rolls, rolls_left=left, first=left == rr),
                )
            )
        out.append(
            (
                f"box, turn {k + 1}" + (" (the final turn)" if k == nb - 1 else ""),
                view_of(rules, sheets, rolls, rolls_left=0, first=False),
            )
        )
    if rules.saved_rolls:
        sheets = random_sheets(rules, gen, 12, nb // 2)
        out.append(
            (
                "keep with saved rolls (5 rerolls left)",
                view_of(rules, sheets, gen.integers(d.n_rolls, size=12), rolls_left=rr + 3, first=True),
            )
        )
    # scratch: every open box scores 0 with these dice (a 0 must be written somewhere)
    ones = _roll(rules, "1" * (d.n - 1) + "2") if d.n > 1 else _roll(rules, "1")
    zero = rules.table[ones] == 0
    if zero.any() and not rules.forced:
        sheet = np.where(zero, np.int16(-1), rules.table.max(axis=0).astype(np.int16))[None, :]
        if (sheet >= 0).any():
            out.append(
                (
                    "box, scratch only (every open box scores 0)",
                    view_of(rules, np.repeat(sheet, 4, axis=0), np.full(4, ones), rolls_left=0, first=False),
                )
            )
    if rules.key_box >= 0:
        kb = rules.key_box
        alike = [_roll(rules, str(f) * d.n) for f in range(1, 7)]
        for held, what in ((int(rules.table[alike[5], kb]), "holding its score"), (0, "scratched")):
            sheets = np.full((6, nb), -1, dtype=np.int16)
            sheets[:, kb] = held
            out.append(
                (
                    f"box, all alike with the key box {what} (face box open)",
                    view_of(rules, sheets, np.array(alike), rolls_left=0, first=False),
                )
            )
            sheets2 = sheets.copy()
            for i, f in enumerate(range(1, 7)):
                sheets2[i, int(np.flatnonzero(rules.upper_face == f)[0])] = 0
            joker = ": the joker" if rules.joker else ""
            out.append(
                (
                    f"box, all alike with the key box {what} (face box filled{joker})",
                    view_of(rules, sheets2, np.array(alike), rolls_left=0, first=False),
                )
            )
    if rules.has_servida:
        sheets = random_sheets(rules, gen, 24, 2)
        out.append(
            (
                "box on the turn's first roll (servida)",
                view_of(rules, sheets, gen.integers(d.n_rolls, size=24), rolls_left=0, first=True),
            )
        )
    if rules.forced:
        sheets = random_sheets(rules, gen, 24, nb // 3)
        out.append(
            (
                "box, forced order (one box allowed)",
                view_of(rules, sheets, gen.integers(d.n_rolls, size=24), rolls_left=0, first=False),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# the checks


def _kind(view: TurnView) -> str:
    return "box" if view.step == CHOOSE_STEP else "keep"


def _ask(link: _Link, view: TurnView, at: np.ndarray | None, budget_ms: float) -> tuple[np.ndarray | None, str, float]:
    """(choices, problem, seconds) of one decide request for positions ``at`` of ``view``."""
    rid = link.next_id()
    n = len(view) if at is None else len(at)
    body = msgs.request(rid, view, _kind(view), budget_ms=budget_ms * n, at=at)
    wait = (budget_ms * n + link.conf.margin_ms) / 1000
    reply, spent = link.exchange(body, wait + link.conf.stall_ms / 1000, want=rid)
    if reply is None:
        return None, f"no answer within {1000 * (wait + link.conf.stall_ms / 1000):.0f} ms", spent
    try:
        ans = msgs.read_answer(reply, rid, view, _kind(view), at)
    except msgs.Unreadable as exc:
        return None, str(exc), spent
    if spent > wait:
        return (
            ans.choice,
            f"answered in {1000 * spent:.1f} ms, budget {budget_ms * n:.1f} + margin {link.conf.margin_ms:g} ms",
            spent,
        )
    return ans.choice, ans.problem, spent


def _scenario_row(
    link: _Link, rules: RuleSet, name: str, view: TurnView, budget_ms: float, gen: np.random.Generator
) -> Row:
    """Legal answers in time for the scenario's positions, and the same answers when they come in
    other batches (one at a time, reversed, shuffled halves)."""
    choice, problem, _ = _ask(link, view, None, budget_ms)
    if choice is None or problem:
        return Row(rules.name, name, False, problem)
    n = len(view)
    again = np.full(n, -2, dtype=np.int64)
    perm = gen.permutation(n)
    orders = [np.array([i]) for i in range(min(n, 3))] + [np.arange(n)[::-1].copy(), perm[: n // 2], perm[n // 2 :]]
    for at in orders:
        if len(at) == 0:
            continue
        got, problem, _ = _ask(link, view, at, budget_ms)
        if got is None or problem:
            return Row(rules.name, name, False, f"in another batch of {len(at)}: {problem}")
        again[at] = got
    differ = (again != -2) & (again != choice)
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        return Row(
            rules.name,
            name,
            False,
            f"game {int(view.games[i])} answered {_show(rules, view, int(choice[i]))} in a batch of {n}, "
            f"{_show(rules, view, int(again[i]))} in another: answers must depend on the position only "
            f"(seed randomness from its key, seat, turn and step)",
        )
    return Row(rules.name, name, True, f"{n} positions, the same answers in {len(orders)} other batches")


def _show(rules: RuleSet, view: TurnView, choice: int) -> str:
    if _kind(view) == "box":
        return rules.box_names[choice] if 0 <= choice < rules.n_boxes else str(choice)
    return repr(msgs.codec(rules).keep_text[choice])


def _games_row(spec: EngineStrategy, rules: RuleSet, games: int, seed: int) -> Row:
    """Full games, the engine at both seats of a table: no fault of any kind."""
    bot = EngineStrategy(rules, **_spec_params(spec))
    bot.begin_batch(np.arange(games, dtype=np.int64), 0)
    try:
        res = play(rules, [bot, bot], np.arange(games, dtype=np.int64), seed, leads=False)
    finally:
        tallies = bot.end_batch()
        bot.close()
    counts = sum(t.sum(axis=0) for t in tallies.values())
    faults = {k: int(counts[i + 1]) for i, k in enumerate(msgs.FAULT_KINDS) if counts[i + 1]}
    detail = f"{int(counts[0]):,} decisions, mean score {res.total.mean():.1f}"
    if faults:
        detail = "faults: " + ", ".join(f"{k} {v:,}" for k, v in faults.items()) + f" in {int(counts[0]):,} decisions"
    return Row(rules.name, f"{games} full games against itself", not faults, detail)


def _spec_params(spec: EngineStrategy) -> dict[str, Any]:
    c = spec.conf
    out: dict[str, Any] = {k: getattr(c, k) for k in ("move_ms", "margin_ms", "stall_ms", "start_ms")}
    out["name"] = c.label
    if c.url:
        out["url"] = c.url
    else:
        out["cmd"] = " ".join(_quote(a) for a in c.argv)
    if c.cwd:
        out["cwd"] = c.cwd
    if c.token_file:
        out["token_file"] = c.token_file
    out.update({f"opt.{k}": v for k, v in c.options.items()})
    return out


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _protocol_rows(link: _Link, rules: RuleSet, budget_ms: float) -> list[Row]:
    """ping, malformed messages (an ``error`` reply, and still answering), an unknown message type."""
    rows = []
    wait = (budget_ms + link.conf.margin_ms + link.conf.stall_ms) / 1000
    reply, _ = link.exchange(msgs.dumps({"type": "ping", "id": 77}), wait)
    ok = isinstance(reply, dict) and reply.get("type") == "pong" and reply.get("id") == 77
    rows.append(Row("", "ping answered with pong (same id)", ok, "" if ok else f"got {str(reply)[:80]}"))
    bad: list[tuple[str, bytes]] = [
        ("an unknown message type", msgs.dumps({"type": "bogus", "id": 78})),
        (
            "a decide request without its columns",
            msgs.dumps({"type": "decide", "id": 79, "kind": "box", "rules": msgs.rules_ref(rules)}),
        ),
        ("a line that is not JSON", b"{this is not json"),
    ]
    for what, body in bad:
        reply, _ = link.exchange(body, wait)
        ok = isinstance(reply, dict) and reply.get("type") == "error"
        detail = "" if ok else f"expected a reply of type 'error', got {str(reply)[:80]}"
        alive, _ = link.exchange(msgs.dumps({"type": "ping", "id": 80}), wait)
        if not (isinstance(alive, dict) and alive.get("type") == "pong"):
            ok, detail = False, (detail + "; " if detail else "") + "no pong afterwards (the engine stopped answering)"
        rows.append(Row("", f"{what}: an error reply, still answering", ok, detail))
    return rows


def check_engine(
    spec: str | EngineStrategy,
    *,
    rules: Sequence[str] = (),
    games: int = 20,
    seed: int = 2026,
    progress: Callable[[str], None] | None = None,
) -> CheckReport:
    """Check an engine (``cmd``/``url``/``file`` spec, or a made :class:`EngineStrategy`) on the rule
    sets it claims (or ``rules``); a :class:`CheckReport` with one row per check."""
    say = progress or (lambda _: None)
    base = load_rules("scandinavian")
    bot = spec if isinstance(spec, EngineStrategy) else _make(spec, base)
    target = " ".join(bot.conf.argv) or bot.conf.url
    report = CheckReport(target)
    budget = bot.conf.move_ms
    try:
        link = _Link(bot)
    except EngineDied as exc:
        report.rows.append(Row("", "the engine starts", False, str(exc)))
        return report
    try:
        wait = bot.conf.start_ms / 1000
        hello, _ = link.exchange(msgs.dumps({"type": "hello", "protocol": PROTOCOL, "harness": "check"}), wait)
        problem = "no reply to hello" if hello is None else check_hello(hello)
        report.hello = hello if isinstance(hello, dict) else None
        report.rows.append(Row("", "hello: protocol, name, rule sets", not problem, problem))
        if problem:
            return report
        try:
            declared = opts.declared(hello)
            values = opts.check_values(declared, bot.conf.options)
            problem = ""
        except opts.OptionError as exc:
            declared, values, problem = {}, {}, str(exc)
        if declared or problem:
            report.rows.append(
                Row(
                    "",
                    "options: declared (name, type, default, range), values fit",
                    not problem,
                    problem or ", ".join(f"{o.name} {o.range_text()}" for o in declared.values()),
                )
            )
        if problem:
            return report
        claimed = hello["rules"]
        names = list(rules) or (
            builtin_rule_sets() if "*" in claimed else [n for n in claimed if n in builtin_rule_sets()]
        )
        if not names:
            report.rows.append(
                Row(
                    "",
                    "claims a built-in rule set",
                    False,
                    f"claims {', '.join(claimed)}; built-in: {', '.join(builtin_rule_sets())}",
                )
            )
            return report
        for name in names:
            if "*" not in claimed and name not in claimed:
                report.rows.append(Row(name, "claimed in hello", False, f"the engine claims {', '.join(claimed)}"))
                continue
            variants = [load_rules(name)]
            if name == "maxi":
                variants.append(load_rules(name, {"saved_rolls": True}))
            for r in variants:
                label = r.name + (" (saved_rolls)" if r.saved_rolls else "")
                say(f"checking {label}")
                ok, detail = _newgame(link, r, values, bot.time_control(), wait)
                report.rows.append(Row(label, "newgame answered with ready", ok, detail))
                gen = np.random.default_rng(seed)
                differ = next((o for o in declared.values() if o.differ), None)
                if differ is not None and r is variants[0] and name == names[0]:
                    report.rows.append(_option_row(link, r, differ, values, bot, wait, seed))
                for what, view in scenarios(r, gen):
                    report.rows.append(_relabel(_scenario_row(link, r, what, view, budget, gen), label))
                if games:
                    report.rows.append(_relabel(_games_row(bot, r, games, seed), label))
        report.rows.extend(_protocol_rows(link, base, budget))
        if not link.is_http:
            t0 = time.monotonic()
            try:
                assert isinstance(link.client, StdioEngine)
                link.client.send(msgs.dumps({"type": "quit"}))
                proc = link.client.proc
                code = proc.wait(timeout=2.0) if proc is not None else None
                report.rows.append(
                    Row(
                        "",
                        "quit ends the process",
                        True,
                        f"exit status {code} after {1000 * (time.monotonic() - t0):.0f} ms",
                    )
                )
            except Exception as exc:  # noqa: BLE001 - a still-running engine, a closed pipe: both fail the check
                report.rows.append(Row("", "quit ends the process", False, f"still running after 2 s ({exc})"[:120]))
    except (EngineDied, EngineFlood) as exc:
        report.rows.append(Row("", "the engine stays up through the check", False, str(exc)))
    finally:
        link.close()
    return report


def _newgame(
    link: _Link, rules: RuleSet, values: dict[str, Any], time_control: dict[str, float], wait: float
) -> tuple[bool, str]:
    ready, _ = link.exchange(
        msgs.dumps(
            {"type": "newgame", "id": 1, "rules": msgs.describe_rules(rules), "options": values, "time": time_control}
        ),
        wait,
    )
    ok = isinstance(ready, dict) and ready.get("type") == "ready"
    if ok and ready.get("id") != 1:
        return False, f"ready must echo newgame's id 1, got {str(ready.get('id'))[:20]}"
    return ok, "" if ok else str(ready)[:80]


def _option_row(
    link: _Link, rules: RuleSet, opt: opts.Option, values: dict[str, Any], bot: EngineStrategy, wait: float, seed: int
) -> Row:
    """The option the engine declares ``differ`` for, at its two values (each sent in a newgame on
    the same process, as the harness does when options change): the answers to the same positions
    must differ somewhere; then the check's own options again."""
    a, b = (f"{v:g}" if isinstance(v, float) else str(v) for v in opt.differ)
    what = f"option {opt.name}: {a} and {b} play differently (newgame on the same process)"
    answers = []
    for v in opt.differ:
        ok, detail = _newgame(link, rules, {**values, opt.name: v}, bot.time_control(), wait)
        if not ok:
            return Row(rules.name, what, False, f"newgame with {opt.name}={v}: {detail}")
        got = []
        for name, view in scenarios(rules, np.random.default_rng(seed + 1)):
            choice, problem, _ = _ask(link, view, None, bot.conf.move_ms)
            if choice is None or problem:
                return Row(rules.name, what, False, f"{name}, {opt.name}={v}: {problem}")
            got.append(choice)
        answers.append(np.concatenate(got))
    ok, detail = _newgame(link, rules, values, bot.time_control(), wait)
    if not ok:
        return Row(rules.name, what, False, f"newgame with the check's options again: {detail}")
    n = len(answers[0])
    differ = int((answers[0] != answers[1]).sum())
    if not differ:
        return Row(
            rules.name,
            what,
            False,
            f"the same answers to all {n} positions at both values: the engine "
            "does not read the option from newgame (or declares the wrong pair)",
        )
    return Row(rules.name, what, True, f"{differ} of {n} answers differ")


def _relabel(row: Row, label: str) -> Row:
    return Row(label, row.check, row.passed, row.detail)


def _make(spec: str, rules: RuleSet) -> EngineStrategy:
    bot = make(spec if spec.startswith("engine:") else spec, rules)
    if not isinstance(bot, EngineStrategy):
        raise UserError(f"engine check takes an engine: a command, a URL or engine:SPEC, got {spec!r}")
    return bot

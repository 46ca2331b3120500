"""The ``engine`` bot: an external engine at the table, refereed like a chess engine in a tester.

Every keep and box decision of a batch goes to the engine as one ``decide`` request (a columnar
batch, :mod:`harness.play.protocol.messages`). The referee gives the batch a budget (the per-decision
budget times its decisions, plus a stated margin) and reads the answer against the harness's own
rules. A decision whose answer is late, not a legal option or missing (the engine crashed, or
stopped answering and was killed) is a *fault* of that kind; the seed's time-out policy (keep
every die; the box with the largest immediate gain, as the ``timeout`` bot plays) answers it
instead, and the game goes on. The dice never depend on the engine: they come from the seeded
stream, so every engine that answers within budget plays exactly the games an in-process bot
would.

Faults are counted per seat-game (the run's rows), per engine and per kind. A seat-game with more
than ``max_faulty`` of its decisions faulty is *corrupted*; an engine with more than
``max_corrupted`` of its games corrupted (after ``min_games``) is disqualified by the runner.
Timing faults (time, crash, stall) are journalled in the run directory and replayed as faults on
resume, so a resumed run equals the run it continues.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from pathlib import Path
from typing import Any, ClassVar, Mapping

import numpy as np
import orjson

from harness.util.errors import UserError
from harness.play.protocol import PROTOCOL
from harness.play.protocol import messages as msgs
from harness.play.protocol import options as opts
from harness.play.protocol.http import HttpEngine, HttpRejected, HttpTimeout, check_url
from harness.play.protocol.pool import POOL as _POOL
from harness.play.protocol.pool import Pooled as _Pooled
from harness.play.protocol.stdio import EngineDied, EngineFlood, StdioEngine
from harness.play.protocol.engine_file import EngineConf, read_engine_file
from harness.game.rules import RuleSet
from harness.game.strategy import Param, Strategy, TurnView
from strategies.greedy import best_gain  # the time-out bot's own rule: the referee's fallback

log = logging.getLogger("harness.referee")

#: Columns of a seat-game's fault tally: decisions asked, then one per fault kind.
TALLY = ("decisions",) + msgs.FAULT_KINDS
#: Fault kinds that depend on timing (journalled for resume); an illegal answer is the engine's own.
TIMING = ("time", "crash", "stall")
#: Restarts in a row that fail before the engine is given up for the rest of the process.
MAX_RESTARTS = 3
#: Faults of each kind described in the log, per engine and process (the rest are only counted).
LOGGED_FAULTS = 5


# ---------------------------------------------------------------------------------------------
# the run's journal of timing faults and the engines' log folder (set by the runner before it forks)


class _RunContext:
    """Where engine stderr logs go and the journal of timing faults (replayed on resume)."""

    def __init__(self) -> None:
        self.log_dir: Path | None = None
        self.journal: Path | None = None
        self.replay: dict[tuple[str, int, int, int, int, int], str] = {}
        self.lock = threading.Lock()

    def write(self, rows: list[dict[str, Any]]) -> None:
        if self.journal is None or not rows:
            return
        data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
        with self.lock:  # O_APPEND: lines of one write stay whole across processes
            fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)


_RUN = _RunContext()

#: The run directory's folder for engine logs and the fault journal.
ENGINE_DIR = "engines"
JOURNAL = "faults.jsonl"


def set_run_dir(run_dir: Path | None) -> None:
    """Send engine logs to ``run_dir/engines/`` and journal timing faults there; load the faults
    a previous invocation journalled, to replay them (None: no run, logs to a temporary folder)."""
    _RUN.replay = {}
    if run_dir is None:
        _RUN.log_dir = _RUN.journal = None
        return
    folder = Path(run_dir) / ENGINE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    _RUN.log_dir = folder
    _RUN.journal = folder / JOURNAL
    if _RUN.journal.is_file():
        for line in _RUN.journal.read_bytes().splitlines():
            try:
                r = orjson.loads(line)
                key = (
                    str(r["engine"]),
                    int(r["lineup"]),
                    int(r["game"]),
                    int(r["seat"]),
                    int(r["turn"]),
                    int(r["step"]),
                )
            except (ValueError, KeyError, TypeError):
                continue  # a line cut off by a kill: its chunk is played again and journals anew
            _RUN.replay[key] = str(r["kind"])


def follow_run_dir(run_dir: Path) -> None:
    """In a worker kept across runs: send engine logs and timing faults to ``run_dir`` (the run this
    chunk belongs to) when they still go elsewhere."""
    if _RUN.log_dir != Path(run_dir) / ENGINE_DIR:
        set_run_dir(run_dir)


def _log_path(label: str) -> Path:
    folder = _RUN.log_dir
    if folder is None:
        import tempfile  # only outside a run (engine check, replay): logs go to a temporary folder

        folder = Path(tempfile.gettempdir()) / "yatzy-harness-engines"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:60]
    return folder / f"{safe}.{os.getpid()}.stderr.log"


# ---------------------------------------------------------------------------------------------
# the bot


class Tally:
    """One batch's per-seat fault counts: (B, len(TALLY)) int32 and the time charged to each game."""

    def __init__(self, n: int) -> None:
        self.counts = np.zeros((n, len(TALLY)), dtype=np.int32)
        self.clock = np.zeros(n, dtype=np.float64)


class EngineStrategy(Strategy):
    """An engine in another process (``cmd=...``) or behind a URL (``url=...``), or as an engine file
    (``file=...``, see ``configs/engines/``); ``opt.NAME=VALUE`` sets an engine option."""

    name = "engine"
    description = (
        "an external engine over the engine protocol (stdio or HTTP), refereed: budgets, faults, time-out play"
    )
    classifier = {"stochastic": False, "lookahead": "unknown", "long_run_time": False}
    refereed: ClassVar[bool] = True
    params = (
        Param("cmd", str, "", 'command line of the engine (stdio), e.g. "node mybot.js"'),
        Param("url", str, "", "URL the engine answers POSTs at (HTTP), e.g. http://127.0.0.1:8000/decide"),
        Param("file", str, "", "an engine file (TOML; a bare name is looked up in configs/engines/)"),
        Param("name", str, "", "the label in reports (default: the file's name, else engine:SCRIPT)"),
        Param("cwd", str, "", "working directory of the command"),
        Param("move_ms", float, 100.0, "budget per decision, ms (a batch gets this times its decisions)", 0.001, None),
        Param("game_ms", float, 0.0, "budget per game, ms (0: none); a game past it plays time-out", 0.0, None),
        Param("margin_ms", float, 100.0, "stated margin added to every batch's budget, ms", 0.0, None),
        Param(
            "stall_ms",
            float,
            2000.0,
            "grace after a missed budget before the engine is killed as stalled, ms",
            0.0,
            None,
        ),
        Param("start_ms", float, 10_000.0, "time to start and answer the handshake, ms", 1.0, None),
        Param("max_faulty", float, 0.1, "a game with more than this share of faulty decisions is corrupted", 0.0, 1.0),
        Param(
            "max_corrupted",
            float,
            0.1,
            "an engine with more than this share of corrupted games is disqualified",
            0.0,
            1.0,
        ),
        Param("min_games", int, 20, "games played before an engine can be disqualified", 1, None),
        Param(
            "max_batch",
            int,
            10_000,
            "most positions in one request (a larger batch is sent in parts; an engine's hello may ask for fewer)",
            1,
            msgs.MAX_BATCH,
        ),
        Param("memory_mb", int, 0, "cap of the engine's address space, MiB (0: none)", 0, None),
        Param("stderr_kb", int, 1024, "stderr kept in the engine's log per process, KiB", 0, None),
        Param("token_file", str, "", "a file holding a bearer token sent to a URL engine"),
    )

    def __init__(self, rules: RuleSet, **params: Any) -> None:
        options = {k[4:]: v for k, v in params.items() if k.startswith("opt.")}
        plain = {k: v for k, v in params.items() if not k.startswith("opt.")}
        from_file: dict[str, Any] = {}
        if plain.get("file"):
            from_file = read_engine_file(str(plain["file"]))
        # the file's values are the defaults; the spec's own keys win
        merged = {k: v for k, v in from_file.items() if k in {p.name for p in self.params}}
        merged.update(plain)
        super().__init__(rules, **merged)
        c = self.config
        argv: tuple[str, ...] = tuple(from_file.get("argv", ()))
        cmd = c["cmd"] if "cmd" in plain else from_file.get("cmd", "")
        if cmd:
            try:
                argv = tuple(shlex.split(cmd))
            except ValueError as exc:
                raise UserError(f"strategy 'engine': cmd {cmd!r} cannot be split into words: {exc}") from None
        url = c["url"] or from_file.get("url", "")
        if bool(argv) == bool(url):
            raise UserError(
                "strategy 'engine' needs exactly one of cmd=\"COMMAND\", url=URL or file=ENGINE.toml "
                "(a file giving a command or a url)"
            )
        if url:
            check_url(url)
        label = c["name"] or from_file.get("name") or ""
        if not label:
            target = next((w for w in reversed(argv) if "/" in w or "." in w), argv[-1] if argv else url)
            label = f"engine:{Path(target).name if argv else url}"
        if options:  # an engine at other option values is another player (a calibration's values, a gauntlet)
            label += ":" + ",".join(f"opt.{k}={v}" for k, v in sorted(options.items()))
        cwd = c["cwd"] or from_file.get("cwd") or None
        self.conf = EngineConf(
            label=label,
            argv=argv,
            url=url,
            cwd=cwd,
            options={**from_file.get("options", {}), **options},
            source=from_file.get("source", ""),
            **{
                k: c[k]
                for k in (
                    "move_ms",
                    "game_ms",
                    "margin_ms",
                    "stall_ms",
                    "start_ms",
                    "max_faulty",
                    "max_corrupted",
                    "min_games",
                    "max_batch",
                    "memory_mb",
                    "stderr_kb",
                    "token_file",
                )
            },
        )
        self._spec_options = options
        self.hello: dict[str, Any] | None = None
        #: the options the engine's hello declares (known once it has started)
        self.declared: dict[str, opts.Option] = {}
        self.sees_table = False
        self.counts = np.zeros(len(TALLY), dtype=np.int64)
        self._reset_process_state()

    def _reset_process_state(self) -> None:
        self._client: StdioEngine | HttpEngine | None = None
        self._pid = os.getpid()
        self._rid = 0
        self._failed_starts = 0
        self._dead: str | None = None
        self._logged: dict[str, int] = {}
        self._batch: np.ndarray | None = None
        self._lineup = -1
        self._tallies: dict[int, Tally] = {}
        self._entry: _Pooled | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = None  # a process is never shipped: each worker starts its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_process_state()

    @property
    def label(self) -> str:
        return self.conf.label

    # -- the process --------------------------------------------------------------------------

    def _here(self) -> None:
        """A forked worker inherits the parent's client: forget it (never touch the parent's pipes)."""
        if self._pid != os.getpid():
            self._reset_process_state()

    def _token(self) -> str | None:
        if not self.conf.token_file:
            return None
        try:
            return Path(self.conf.token_file).read_text().strip()
        except OSError as exc:
            raise UserError(
                f"engine {self.label}: cannot read token_file {self.conf.token_file}: {exc.strerror}"
            ) from None

    def _exchange(self, client: StdioEngine | HttpEngine, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send one message and wait for its reply (the handshake's; not for decisions)."""
        body = msgs.dumps(message)
        if isinstance(client, HttpEngine):
            raw = client.exchange(body, deadline)
        else:
            client.send(body)
            while True:
                raw_line = client.read_line(deadline)
                if raw_line is None:
                    raise EngineDied(f"no reply to {message['type']!r} in {self.conf.start_ms:.0f} ms")
                if raw_line.strip():
                    raw = raw_line
                    break
        try:
            obj = msgs.loads(raw)
        except ValueError:
            raise EngineDied(f"unreadable reply to {message['type']!r}: {raw[:80]!r}") from None
        if not isinstance(obj, dict):
            raise EngineDied(f"reply to {message['type']!r} is not a JSON object")
        if obj.get("type") == "error":
            raise EngineDied(f"the engine refused {message['type']!r}: {str(obj.get('message'))[:200]}")
        return obj

    def _connect(self) -> _Pooled:
        """Start (or connect to) the engine and shake hands (hello: protocol, rule sets, options)."""
        c = self.conf
        client: StdioEngine | HttpEngine
        if c.url:
            client = HttpEngine(c.url, self._token())
        else:
            client = StdioEngine(
                c.argv, cwd=c.cwd, log_path=_log_path(c.label), stderr_cap=c.stderr_kb << 10, memory_mb=c.memory_mb
            )
            client.start()
        try:
            deadline = time.monotonic() + c.start_ms / 1000
            hello = self._exchange(client, {"type": "hello", "protocol": PROTOCOL, "harness": _version()}, deadline)
            problem = check_hello(hello, self.rules.name)
            if problem:
                raise EngineDied(f"handshake: {problem}")
            try:
                declared = opts.declared(hello)
            except opts.OptionError as exc:
                raise EngineDied(f"handshake: {exc}") from None
        except (EngineDied, EngineFlood, HttpTimeout, HttpRejected) as exc:
            self._close(client)
            raise EngineDied(str(exc)) from None
        return _Pooled(client, hello, declared)

    def _newgame(self, entry: _Pooled) -> None:
        """Send ``newgame`` (the rules, this bot's options checked against the engine's declaration,
        the time control) unless the engine already plays exactly that."""
        c = self.conf
        try:
            values = opts.check_values(entry.options, c.options)
        except opts.OptionError as exc:
            self._close(entry.client)
            self._dead = str(exc)  # the same values would be refused again: no restart
            raise EngineDied(str(exc)) from None
        state = self.state_for(entry)
        if entry.state == state:
            return
        try:
            ready = self._exchange(
                entry.client,
                {
                    "type": "newgame",
                    "id": 0,
                    "rules": msgs.describe_rules(self.rules),
                    "options": values,
                    "time": self.time_control(),
                },
                time.monotonic() + c.start_ms / 1000,
            )
            if ready.get("type") != "ready":
                raise EngineDied(f"expected 'ready' after newgame, got {str(ready.get('type'))[:40]!r}")
        except (EngineDied, EngineFlood, HttpTimeout, HttpRejected) as exc:
            self._close(entry.client)
            raise EngineDied(str(exc)) from None
        entry.state = state

    def _start(self) -> StdioEngine | HttpEngine:
        """Start (or connect to) the engine and shake hands: hello, then newgame with the rules and options
        (with :func:`harness.play.protocol.pool.reuse_engines` on, an idle process of the same command is taken instead, and
        sent a newgame only when its rules or options differ)."""
        entry = _POOL.take(self._pool_key(), self) if _POOL.active else None
        if entry is None:
            entry = self._connect()
        self._newgame(entry)
        self.hello = entry.hello
        self.declared = entry.options
        self.sees_table = "table" in (entry.hello.get("wants") or [])
        self._entry = entry
        return entry.client

    def state_for(self, entry: _Pooled) -> tuple[Any, ...] | None:
        """What a newgame for this bot would set on ``entry``'s engine (None: its options do not fit)."""
        try:
            values = opts.check_values(entry.options, self.conf.options)
        except opts.OptionError:
            return None
        return (self.rules.digest, msgs.dumps(values), msgs.dumps(self.time_control()))

    def _pool_key(self) -> tuple[Any, ...]:
        c = self.conf
        return (c.argv, c.url, c.cwd, c.memory_mb, c.stderr_kb, c.token_file, self.rules.digest)

    def _release(self) -> None:
        """With :func:`harness.play.protocol.pool.reuse_engines` on: give the engine process back to the pool (kept running)."""
        if self._client is not None and self._entry is not None and _POOL.active and self._pid == os.getpid():
            _POOL.give(self._pool_key(), self._entry)
            self._client = None
            self._entry = None

    def time_control(self) -> dict[str, float]:
        c = self.conf
        return {"move_ms": c.move_ms, "game_ms": c.game_ms, "margin_ms": c.margin_ms}

    def _close(self, client: StdioEngine | HttpEngine | None) -> None:
        if client is None:
            return
        if isinstance(client, StdioEngine):
            client.kill()
        else:
            client.close()

    def _ensure(self) -> StdioEngine | HttpEngine:
        self._here()
        if self._dead is not None:
            raise EngineDied(self._dead)
        if self._client is None:
            try:
                self._client = self._start()
                self._failed_starts = 0
            except EngineDied as exc:
                self._failed_starts += 1
                if self._failed_starts >= MAX_RESTARTS:
                    self._dead = f"{exc} (failed to start {MAX_RESTARTS} times in a row; given up)"
                raise
        return self._client

    def _kill(self) -> None:
        self._close(self._client)
        self._client = None
        self._entry = None

    def close(self) -> None:
        """Ask the engine to quit (and kill what is left); a later decision starts it again."""
        self._here()
        if _POOL.active:
            self._release()
            return
        client, self._client = self._client, None
        self._entry = None
        if isinstance(client, StdioEngine):
            client.quit(msgs.dumps({"type": "quit"}))
        elif client is not None:
            client.close()

    def prepare(self) -> None:
        """Start the engine once in the parent: its handshake (checked, kept for the manifest) and
        a clear error now if it cannot start; then stop it (each worker starts its own)."""
        try:
            self._ensure()
        except EngineDied as exc:
            raise UserError(f"engine {self.label}: {exc}") from None
        finally:
            self.close()

    def declared_options(self) -> dict[str, opts.Option]:
        """The options the engine's hello declares (the engine started, shaken hands with, stopped)."""
        self.prepare()
        return dict(self.declared)

    def describe(self) -> dict[str, Any]:
        """What the manifest records of this engine: command or URL, handshake, files' sha256, limits."""
        c = self.conf
        return {
            "label": c.label,
            "command": list(c.argv),
            "url": c.url,
            "cwd": c.cwd,
            "file": c.source,
            "files": c.files(),
            "handshake": self.hello,
            "options": dict(c.options),
            "time": self.time_control(),
            "stall_ms": c.stall_ms,
            "referee": {
                "max_faulty": c.max_faulty,
                "max_corrupted": c.max_corrupted,
                "min_games": c.min_games,
                "max_batch": c.max_batch,
            },
        }

    # -- the referee's accounting ------------------------------------------------------------

    def begin_batch(self, games: np.ndarray, lineup: int) -> None:
        """The runner's worker is about to play ``games`` of ``lineup``: tally their faults."""
        self._here()
        self._batch = np.asarray(games, dtype=np.int64)
        self._lineup = lineup
        self._tallies = {}

    def end_batch(self) -> dict[int, np.ndarray]:
        """The batch's per-seat tallies: seat -> (B, len(TALLY)) int32 (seats this bot sat in)."""
        out = {s: t.counts for s, t in self._tallies.items()}
        self._batch, self._tallies = None, {}
        return out

    def corrupted(self, counts: np.ndarray) -> np.ndarray:
        """Which seat-games of tallies (..., len(TALLY)) are corrupted (more than ``max_faulty`` faulty)."""
        faults = counts[..., 1:].sum(axis=-1)
        return faults > self.conf.max_faulty * counts[..., 0]

    def disqualified(self, games: int, corrupted: int) -> str | None:
        """The reason this engine is out of the run, from its games and corrupted games so far."""
        c = self.conf
        if games >= c.min_games and corrupted > c.max_corrupted * games:
            return (
                f"engine {c.label} disqualified: {corrupted:,} of {games:,} games corrupted "
                f"({100 * corrupted / games:.1f} % > {100 * c.max_corrupted:g} %; a game is corrupted when "
                f"more than {100 * c.max_faulty:g} % of its decisions are faulty)"
            )
        return None

    def _rows(self, view: TurnView) -> tuple[Tally, np.ndarray] | None:
        if self._batch is None:
            return None
        tally = self._tallies.get(view.seat)
        if tally is None:
            tally = self._tallies[view.seat] = Tally(len(self._batch))
        return tally, np.searchsorted(self._batch, view.games)

    def _note(self, kind: str, detail: str) -> None:
        n = self._logged.get(kind, 0)
        self._logged[kind] = n + 1
        if n < LOGGED_FAULTS:
            log.warning(
                "engine %s: %s fault: %s%s",
                self.label,
                kind,
                detail,
                "" if n < LOGGED_FAULTS - 1 else " (further faults of this kind are only counted)",
            )

    # -- decisions ----------------------------------------------------------------------------

    def keep(self, view: TurnView) -> np.ndarray:
        return self._decide(view, "keep")

    def choose(self, view: TurnView) -> np.ndarray:
        return self._decide(view, "box")

    def _decide(self, view: TurnView, kind: str) -> np.ndarray:
        try:
            return self._decide_batch(view, kind)
        finally:
            if _POOL.active:
                self._release()

    def _decide_batch(self, view: TurnView, kind: str) -> np.ndarray:
        n = len(view)
        fault = np.zeros(n, dtype=np.int8)  # 0: none, else 1 + index in FAULT_KINDS
        choice = np.full(n, -1, dtype=np.int64)
        rows = self._rows(view)
        live = self._batch is not None and _RUN.journal is not None
        if live and _RUN.replay:
            for i, g in enumerate(view.games.tolist()):
                got = _RUN.replay.get((self.label, self._lineup, g, view.seat, view.turn, view.step))
                if got is not None:
                    fault[i] = 1 + msgs.FAULT_KINDS.index(got)
        if rows is not None and self.conf.game_ms > 0:
            over = rows[0].clock[rows[1]] * 1000 > self.conf.game_ms
            fault[(fault == 0) & over] = 1 + msgs.FAULT_KINDS.index("time")
        ask = np.flatnonzero(fault == 0)
        step = self._max_batch()
        for lo in range(0, ask.size, step):  # a batch over the engine's maximum goes in parts
            part = ask[lo : lo + step]
            at = None if part.size == n else part
            got, kinds, spent = self._ask(view, kind, at)
            choice[part] = got
            fault[part] = kinds
            if rows is not None:
                rows[0].clock[rows[1][part]] += spent / part.size
        bad = fault != 0
        if bad.any():
            choice[bad] = self._fallback(view, kind)[bad]
            if live:
                self._journal(view, bad, fault)
        if rows is not None:
            tally, r = rows
            np.add.at(tally.counts[:, 0], r, 1)
            for k in range(len(msgs.FAULT_KINDS)):
                hit = fault == k + 1
                if hit.any():
                    np.add.at(tally.counts[:, k + 1], r[hit], 1)
        self.counts[0] += n
        for k in range(len(msgs.FAULT_KINDS)):
            self.counts[k + 1] += int((fault == k + 1).sum())
        return choice

    def _max_batch(self) -> int:
        """Positions per request: the spec's ``max_batch``, or fewer when the engine's hello asks."""
        asked = (self.hello or {}).get("max_batch")
        if isinstance(asked, int) and not isinstance(asked, bool) and asked >= 1:
            return min(asked, self.conf.max_batch)
        return self.conf.max_batch

    def _fallback(self, view: TurnView, kind: str) -> np.ndarray:
        """The seed's time-out policy: keep every die; the box with the largest immediate gain."""
        if kind == "keep":
            return self.rules.dice.roll_as_keep[view.roll].astype(np.int64)
        return best_gain(view).astype(np.int64)

    def _journal(self, view: TurnView, bad: np.ndarray, fault: np.ndarray) -> None:
        rows = []
        for i in np.flatnonzero(bad).tolist():
            kind = msgs.FAULT_KINDS[int(fault[i]) - 1]
            key = (self.label, self._lineup, int(view.games[i]), view.seat, view.turn, view.step)
            if kind in TIMING and key not in _RUN.replay:
                rows.append(
                    {
                        "engine": self.label,
                        "lineup": self._lineup,
                        "game": key[2],
                        "seat": view.seat,
                        "turn": view.turn,
                        "step": view.step,
                        "kind": kind,
                    }
                )
        _RUN.write(rows)

    def _ask(self, view: TurnView, kind: str, at: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
        """Ask the engine for positions ``at``: (choices, fault codes, seconds spent)."""
        n = len(view) if at is None else len(at)
        code = {k: np.int8(1 + i) for i, k in enumerate(msgs.FAULT_KINDS)}
        none = np.full(n, -1, dtype=np.int64)
        try:
            client = self._ensure()
        except EngineDied as exc:
            self._note("crash", f"cannot start: {exc}")
            return none, np.full(n, code["crash"]), 0.0
        t0 = time.monotonic()  # the clock starts once the engine is up: a (re)start is not its move
        self._rid += 1
        rid = self._rid
        c = self.conf
        budget = c.move_ms * n
        payload = msgs.request(rid, view, kind, budget_ms=budget, at=at, table=self.sees_table)
        deadline = t0 + (budget + c.margin_ms) / 1000
        try:
            if isinstance(client, HttpEngine):
                obj = msgs.loads(client.exchange(payload, deadline))
                late = time.monotonic() > deadline
            else:
                client.send(payload)
                obj, late = self._read(client, rid, deadline, n)
                if obj is None:
                    return none, np.full(n, code[late]), time.monotonic() - t0
        except (EngineDied, EngineFlood) as exc:
            self._kill()
            kind_ = "crash" if isinstance(exc, EngineDied) else "illegal"
            self._note(kind_, str(exc))
            return none, np.full(n, code[kind_]), time.monotonic() - t0
        except HttpTimeout as exc:
            self._note("time", str(exc))
            return none, np.full(n, code["time"]), time.monotonic() - t0
        except (HttpRejected, ValueError) as exc:
            self._note("illegal", str(exc)[:200])
            return none, np.full(n, code["illegal"]), time.monotonic() - t0
        spent = time.monotonic() - t0
        if late:
            self._note("time", f"answer after {1000 * spent:.1f} ms, budget {budget:.1f} + {c.margin_ms:g} ms")
            return none, np.full(n, code["time"]), spent
        try:
            ans = msgs.read_answer(obj, rid, view, kind, at)
        except msgs.Unreadable as exc:
            self._note("illegal", str(exc))
            return none, np.full(n, code["illegal"]), spent
        kinds = np.where(ans.illegal, code["illegal"], np.int8(0)).astype(np.int8)
        if ans.problem:
            self._note("illegal", ans.problem)
        return ans.choice, kinds, spent

    def _read(self, client: StdioEngine, rid: int, deadline: float, n: int) -> tuple[Any, Any]:
        """Read lines until the answer to ``rid``: (reply, False); (None, "time") when it came after
        the deadline but within the stall grace; (None, "stall") when it never came (killed);
        (unreadable reply, False) for a line that is not JSON. Stale answers are skipped."""
        grace = deadline + self.conf.stall_ms / 1000
        late = False
        while True:
            line = client.read_line(deadline if not late else grace)
            if line is None:
                if not late:
                    late = True
                    continue
                self._note(
                    "stall", f"no answer {self.conf.stall_ms:g} ms after the budget: killed, restarted next time"
                )
                self._kill()
                return None, "stall"
            if not line.strip():
                continue
            try:
                obj = msgs.loads(line)
            except ValueError:
                if late:
                    continue
                return _Garbage(line), False
            rep = msgs.answer_id(obj)
            if isinstance(rep, int) and rep < rid and not isinstance(rep, bool):
                continue  # the late answer to an earlier batch
            if late:
                return None, "time"
            return obj, False


class _Garbage(dict):
    """A line that is not JSON, passed on so that :func:`messages.read_answer` names it."""

    def __init__(self, line: bytes) -> None:
        super().__init__(type=f"unreadable line {line[:60]!r}")


def check_hello(hello: Mapping[str, Any], rules_name: str | None = None) -> str:
    """What is wrong with an engine's ``hello`` reply ("" when nothing): its type, protocol, name,
    and (given a rule set) whether it claims that rule set."""
    if hello.get("type") != "hello":
        return f"expected a 'hello' reply, got type {str(hello.get('type'))[:40]!r}"
    if hello.get("protocol") != PROTOCOL:
        return f"the engine speaks protocol {str(hello.get('protocol'))[:40]!r}, the harness {PROTOCOL!r}"
    if not isinstance(hello.get("name"), str) or not hello["name"]:
        return "the hello needs a non-empty 'name'"
    claimed = hello.get("rules")
    if not isinstance(claimed, list) or not all(isinstance(x, str) for x in claimed):
        return "the hello needs 'rules': a list of rule-set names (or [\"*\"])"
    if rules_name is not None and "*" not in claimed and rules_name not in claimed:
        return f"the engine does not play rule set {rules_name!r} (it claims: {', '.join(claimed) or 'none'})"
    return ""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("yatzy-harness")
    except PackageNotFoundError:
        return "unknown"

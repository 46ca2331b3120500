"""Worker side of a run: play one chunk of games and hand back its Parquet bytes and per-seat sums.

The same function runs in a forked local process, in this process (workers = 1), or on a Dask
worker. A :class:`Job` is small and picklable (rule-set spec, bot specs, lineups, seed); the parent
registers its own prepared rules and bots under the job's token before forking, so local workers
inherit them (tables and compiled kernels included), while a Dask worker on another machine
rebuilds them once per process from the spec.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import threading
import time
import traceback
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.decisions.analysis import Analyser
from harness.records.codec import records_parquet
from harness.game.loop import Results, StrategyError, play
from harness.util.errors import RUN_LOG_ONLY, interrupted
from harness.game.registry import make
from harness.records.rundir import Chunk, read_parquet
from harness.play import journal
from harness.game.rules import RuleSet, compile_rules
from harness.game.strategy import Strategy
from harness.play.protocol.referee import follow_run_dir

log = logging.getLogger("harness.play.worker")

#: Parquet writer settings: fixed, so that a chunk's bytes depend only on its rows.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 1,
    "use_dictionary": True,
    "write_statistics": True,
    "row_group_size": 1 << 22,
}


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to play any chunk of one run (picklable, JSON-able parts only).

    rules_spec: the parsed rule-set TOML; settings: the config's overrides; digest: the compiled
    rule set's digest (a worker with other rules code refuses to play); entrants: (label, spec);
    lineups: entrant labels per seat.
    """

    rules_spec: Mapping[str, Any]
    rules_source: str
    settings: Mapping[str, Any]
    digest: str
    entrants: tuple[tuple[str, str], ...]
    lineups: tuple[tuple[str, ...], ...]
    seed: int
    #: also return every roll and decision of the chunk's games (``records/`` files)
    record: bool = False
    #: add luck, regret, decisions and errors columns (exact analysis of every seat-game)
    analyse: bool = False
    #: some entrant is refereed (an external engine): add the fault columns (:data:`FAULT_COLUMNS`)
    referee: bool = False
    #: the run directory of a local run with engines: a worker kept across runs (a calibration's)
    #: sends its engines' logs and timing faults there, not to the first run's
    run_dir: str = ""
    #: the run directory whose journal (:mod:`harness.play.journal`) takes this job's sub-batches
    #: (a local run's; empty: none). From the job, not the process: a pool kept across runs (a
    #: calibration's) once journalled a later run's sub-batches into its first run's directory,
    #: where a third run of the same lineup, games and chunks took them for its own
    journal_dir: str = ""

    @property
    def token(self) -> str:
        """A key for this job's prepared objects in a worker process."""
        blob = json.dumps(
            [self.rules_spec, self.settings, self.digest, self.entrants, self.lineups, self.seed],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def categories(self) -> list[str]:
        """Categories of the ``strategy`` column: every entrant label, sorted, in every file of the run."""
        return sorted(label for label, _ in self.entrants)


@dataclass(frozen=True)
class Prepared:
    rules: RuleSet
    strategies: Mapping[str, Strategy]
    #: the run's analyser (solved table, plan cache) when it analyses
    analyser: Analyser | None = None


@dataclass(frozen=True)
class ChunkResult:
    """A finished chunk: the Parquet file's bytes and exact per-label sums of its seats.

    sums: label -> [seats, sum of totals, sum of squared totals, wins, shared wins] (ints).
    """

    chunk: Chunk
    data: bytes
    rows: int
    sums: Mapping[str, list[int]]
    #: the records file's bytes (:func:`harness.records.convert.records_parquet`) when the job records
    records: bytes | None = None
    #: with refereed entrants: label -> [seat-games, decisions, faults of each kind..., corrupted games]
    faults: Mapping[str, list[int]] | None = None


class ChunkFailed(RuntimeError):
    """A chunk could not be played; the message (one line) names the bot, seat, game index, turn
    and the cause; ``details`` holds the traceback (also in the run's log)."""

    def __init__(
        self, message: str, chunk: Chunk | None = None, label: str = "", game: int = -1, details: str = ""
    ) -> None:
        super().__init__(message)
        self.chunk, self.label, self.game, self.details = chunk, label, game, details

    def __reduce__(self) -> Any:  # keep the attributes across process boundaries
        return (ChunkFailed, (str(self), self.chunk, self.label, self.game, self.details))

    def summary(self, run_dir: Path, log_path: Path, kept: int) -> str:
        """What a stopped run reports, once: the failure, then how to replay the game, resume the
        run and find the traceback (lines after the first indented)."""
        lines = [f"run stopped: {str(self).splitlines()[0]}"]
        if self.game >= 0 and self.chunk is not None:
            lines.append(
                f"  replay:  yatzy-harness replay --run {run_dir} --lineup {self.chunk.lineup} --game {self.game}"
            )
        fix = "after fixing the bot; " if self.label else ""
        lines.append(f"  resume:  yatzy-harness run --resume {run_dir}   ({fix}{kept} complete chunk(s) are kept)")
        lines.append(f"  details: {log_path}" + (" (with the traceback)" if self.details else ""))
        return "\n".join(lines)


_PREPARED: dict[str, Prepared] = {}
#: games per second of the last batch this process played, by (job token, lineup): the size of a
#: chunk's first batch (the batching never changes a row; it only sets how often progress and the
#: journal hear of a chunk)
_PACE: dict[tuple[str, int], float] = {}
_LOCK = threading.Lock()


def install(job: Job, rules: RuleSet, strategies: Mapping[str, Strategy], analyser: Analyser | None = None) -> None:
    """Register the parent's prepared rules, bots and analyser for ``job`` (before forking workers)."""
    _PREPARED[job.token] = Prepared(rules, dict(strategies), analyser)


def forget(job: Job) -> None:
    _PREPARED.pop(job.token, None)


def prepared(job: Job) -> Prepared:
    """This process's rules and bots for ``job``: inherited from the parent, or built once here."""
    token = job.token
    got = _PREPARED.get(token)
    if got is not None:
        return got
    with _LOCK:  # Dask workers may run several threads
        got = _PREPARED.get(token)
        if got is None:
            same = next((q for q in _PREPARED.values() if q.rules.digest == job.digest), None)
            rules = (
                same.rules
                if same is not None
                else compile_rules(dict(job.rules_spec), dict(job.settings), source=job.rules_source)
            )
            if rules.digest != job.digest:
                raise ChunkFailed(
                    f"this worker compiles rule set {rules.name} to digest {rules.digest[:12]}, "
                    f"the run has {job.digest[:12]}: install the same harness version everywhere"
                )
            strategies = {label: make(spec, rules) for label, spec in job.entrants}
            for s in strategies.values():
                s.prepare()
            analyser = None
            if job.analyse:  # one per rule set and process: a worker kept across runs loads its table once
                analyser = next(
                    (q.analyser for q in _PREPARED.values() if q.analyser is not None and q.rules is rules), None
                ) or Analyser(rules)
            got = _PREPARED[token] = Prepared(rules, strategies, analyser)
    return got


#: This process's progress hook: called with the number of games of every engine batch finished
#: (played, and analysed when the job analyses). The runner sets it before it forks its workers,
#: so forked workers inherit it; a Dask worker process of its own has none (its chunks then count
#: when they finish). With a hook a chunk is played in batches of about :data:`BATCH_SECONDS`.
_progress: Callable[[int], None] | None = None

#: Target duration of one batch when a progress hook is set (the first batch has
#: :data:`FIRST_BATCH` games, later ones are sized from the games per second measured so far).
BATCH_SECONDS = 1.0
FIRST_BATCH = journal.FIRST_BATCH


def set_progress(hook: Callable[[int], None] | None) -> Callable[[int], None] | None:
    """Set this process's progress hook (None: none); returns the previous one."""
    global _progress
    old, _progress = _progress, hook
    return old


def play_chunk(job: Job, chunk: Chunk) -> ChunkResult:
    """Play ``chunk`` of ``job``; raise :class:`ChunkFailed` (logged here too) if a bot fails.

    With a progress hook (:func:`set_progress`) or a journal (``job.journal_dir``) the games are
    played (and analysed) in batches: the dice and every bot's answers for a game depend on (seed,
    game) only, so the rows and bytes are those of one batch. With a journal, the parts a previous
    invocation journalled are taken instead of played, and a stopping run raises
    :class:`~harness.play.journal.ChunkInterrupted` at the next boundary."""
    if job.run_dir:
        follow_run_dir(Path(job.run_dir))
    p = prepared(job)
    labels = job.lineups[chunk.lineup]
    seats = [p.strategies[label] for label in labels]
    games = np.arange(chunk.start, chunk.stop, dtype=np.int64)
    hook = _progress
    # with a journal, a chunk plays as sub-batches of about journal.SECONDS, each one that does not
    # end the chunk journalled, and stops at a boundary when the run is stopping
    jr = journal.Journal(Path(job.journal_dir)) if job.journal_dir else None
    failed: StrategyError | None = None
    parts: list[tuple[Results, dict[str, np.ndarray] | None]] = []
    tallies: list[np.ndarray] = []
    refereed = [s for s in dict.fromkeys(seats) if s.refereed] if job.referee else []
    at = 0
    if jr is not None:
        for old in journal.load(
            jr.run_dir,
            chunk.lineup,
            chunk.start,
            chunk.stop,
            p.rules,
            labels,
            journal.Needs(analysis=job.analyse, tally=job.referee, recording=job.record),
            job.token,
        ):
            parts.append((old.results, dict(old.analysis) if old.analysis is not None else None))
            if old.tally is not None:
                tallies.append(old.tally)
            at = old.stop - chunk.start
        if at and hook is not None:
            hook(at)
        if jr.stopping() and at < len(games):
            raise journal.ChunkInterrupted(chunk.lineup, chunk.start, at)
    seconds = journal.SECONDS if jr is not None else BATCH_SECONDS
    pace_key = (job.token, chunk.lineup)
    try:
        if hook is None and jr is None:
            size = len(games) - at
        else:  # this process's pace on the lineup's last chunk, if any: no small first batch again
            size = int(min(max(_PACE.get(pace_key, 0.0) * seconds, FIRST_BATCH), len(games) - at)) or 1
        while at < len(games):
            batch = games[at : at + size]
            t0 = time.monotonic()
            for s in refereed:
                s.begin_batch(batch, chunk.lineup)
            part = play(p.rules, seats, batch, job.seed, record=job.record or job.analyse)
            tally = fault_tally(seats, refereed, len(batch)) if job.referee else None
            if tally is not None:
                tallies.append(tally)
            luck = analyse_results(p.analyser, part) if job.analyse else None
            if not job.record:
                part = journal.without_recording(part)  # analysed already; the rows do not keep it
            parts.append((part, luck))
            at += len(batch)
            if jr is not None and at < len(games):
                journal.save(
                    jr.run_dir,
                    chunk.lineup,
                    journal.Part(int(batch[0]), int(batch[-1]) + 1, part, luck, tally, job.token),
                )
            if hook is not None:
                hook(len(batch))
            if jr is not None and jr.stopping() and at < len(games):
                raise journal.ChunkInterrupted(chunk.lineup, chunk.start, at)
            # the next batch from the pace of this one (an average since the first, whose fixed
            # costs weigh most, grew the batches slowly: more batches, more fixed costs)
            rate = _PACE[pace_key] = len(batch) / max(time.monotonic() - t0, 1e-6)
            size = int(min(max(rate * seconds, FIRST_BATCH), len(games) - at)) or 1
    except StrategyError as exc:
        failed = exc
    except journal.ChunkInterrupted:
        raise
    except Exception as exc:
        if interrupted(exc):  # Ctrl-C inside a kernel: an interrupt, not a failed chunk
            raise KeyboardInterrupt from None
        details = "".join(traceback.format_exception(exc))
        msg = f"chunk {chunk.file} (games {chunk.start}..{chunk.stop - 1}) failed: {type(exc).__name__}: {exc}"
        log.error("%s\n%s", msg, details, extra=RUN_LOG_ONLY)
        raise ChunkFailed(msg, chunk, details=details) from None
    if failed is not None:
        # outside the except block: the bisection's own failures must not chain onto this one,
        # or the log would show the bot's traceback twice
        raise _report(job, chunk, p, seats, failed) from None
    res = concat_results([r for r, _ in parts])
    luck = (
        None
        if not job.analyse
        else {k: np.concatenate([a[k] for _, a in parts if a is not None]) for k in ANALYSIS_COLUMNS}
    )
    faults = fault_columns(seats, np.concatenate(tallies)) if job.referee else None
    data, rows = to_parquet(res, chunk.lineup, job.categories, luck, faults)
    records = records_parquet(res.recording, res.rules, res.games, chunk.lineup) if job.record else None
    return ChunkResult(
        chunk, data, rows, seat_sums(res, labels), records, fault_sums(faults, labels) if faults is not None else None
    )


#: Columns a run with a refereed entrant (an external engine) adds to its rows, in this order:
#: the decisions asked of the seat's engine, its faulty decisions by kind, and whether the
#: seat-game is corrupted (more faulty decisions than the engine's ``max_faulty`` share). Seats of
#: in-process bots hold zeros.
FAULT_COLUMNS = ("engine_decisions", "faults_time", "faults_illegal", "faults_crash", "faults_stall", "corrupted")


def fault_tally(seats: Sequence[Strategy], refereed: Sequence[Strategy], n: int) -> np.ndarray:
    """(B, S, 5) int32 one batch's tallies (decisions, then each fault kind) of every seat."""
    out = np.zeros((n, len(seats), len(FAULT_COLUMNS) - 1), dtype=np.int32)
    for s in refereed:
        for seat, counts in s.end_batch().items():
            out[:, seat] = counts
    return out


def fault_columns(seats: Sequence[Strategy], tally: np.ndarray) -> dict[str, np.ndarray]:
    """The :data:`FAULT_COLUMNS` (B, S) of a chunk's tallies (B, S, 5)."""
    corrupted = np.zeros(tally.shape[:2], dtype=bool)
    for seat, s in enumerate(seats):
        if s.refereed:
            corrupted[:, seat] = s.corrupted(tally[:, seat])
    out = {name: tally[:, :, i].astype(np.int16) for i, name in enumerate(FAULT_COLUMNS[:-1])}
    out["corrupted"] = corrupted
    return out


def fault_sums(faults: Mapping[str, np.ndarray], labels: Sequence[str]) -> dict[str, list[int]]:
    """label -> [seat-games, decisions, time, illegal, crash, stall, corrupted games] of a chunk."""
    out: dict[str, list[int]] = {}
    for seat, label in enumerate(labels):
        acc = out.setdefault(label, [0] * (len(FAULT_COLUMNS) + 1))
        acc[0] += len(faults["corrupted"])
        for i, name in enumerate(FAULT_COLUMNS):
            acc[i + 1] += int(faults[name][:, seat].sum())
    return out


def concat_results(parts: Sequence[Results]) -> Results:
    """Batches of one lineup's games as one :class:`Results` (every array joined along the games;
    the recording too): what one batch of all those games would have given."""
    if len(parts) == 1:
        return parts[0]

    def join(xs: Sequence[Any]) -> Any:
        if xs[0] is None:
            return None
        if isinstance(xs[0], np.ndarray):
            return np.concatenate(xs)
        return replace(xs[0], **{f.name: np.concatenate([getattr(x, f.name) for x in xs]) for f in fields(xs[0])})

    first = parts[0]
    return replace(
        first,
        **{
            f.name: join([getattr(r, f.name) for r in parts])
            for f in fields(first)
            if f.name not in ("rules", "labels")
        },
    )


#: Columns that ``analyse = true`` adds to the rows, in this order.
ANALYSIS_COLUMNS = (
    "luck",
    "regret",
    "decisions",
    "errors",
    "keep_decisions",
    "keep_regret",
    "upper_regret",
    "max_regret",
)


def analyse_results(analyser: Analyser, res: Results) -> dict[str, np.ndarray]:
    """Each seat-game's exact luck and regret (:meth:`harness.decisions.analysis.Analyser.recording`, the
    numba walk): (B, S) arrays of :data:`ANALYSIS_COLUMNS`: ``luck``, ``regret`` float64,
    ``decisions``, ``errors`` int16, the keep decisions (stop included; the rest are the box
    decisions) int16 and their regret, the regret of boxes written in the upper section, and the
    largest regret of one decision, float64."""
    sums = analyser.recording(res.recording)
    ints = ("decisions", "errors", "keep_decisions")
    return {k: sums[k].astype(np.int16) if k in ints else sums[k] for k in ANALYSIS_COLUMNS}


def to_parquet(
    res: Results,
    lineup: int,
    categories: Sequence[str],
    analysis: Mapping[str, np.ndarray] | None = None,
    faults: Mapping[str, np.ndarray] | None = None,
) -> tuple[bytes, int]:
    """The Parquet bytes of one chunk: ``lineup`` int16 then ``Results.to_frame()`` columns, then
    the :data:`ANALYSIS_COLUMNS` when ``analysis`` is given, the :data:`FAULT_COLUMNS` when ``faults`` is.

    The ``strategy`` dictionary holds every entrant label of the run (``categories``), so the files
    of a tournament concatenate as one categorical. No schema metadata (pandas version, times):
    the bytes depend only on the rows and the pyarrow version.
    """

    frame = res.to_frame()
    frame["strategy"] = frame["strategy"].cat.set_categories(list(categories))
    frame.insert(0, "lineup", np.full(len(frame), lineup, dtype=np.int16))
    for name in ANALYSIS_COLUMNS if analysis is not None else ():
        frame[name] = analysis[name].reshape(-1)
    for name in FAULT_COLUMNS if faults is not None else ():
        frame[name] = faults[name].reshape(-1)
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    buf = io.BytesIO()
    pq.write_table(table, buf, **PARQUET_OPTIONS)
    return buf.getvalue(), table.num_rows


def seat_sums(res: Results, labels: Sequence[str]) -> dict[str, list[int]]:
    """Exact integer sums per label: [seats, sum total, sum total^2, wins, shared wins]."""
    out: dict[str, list[int]] = {}
    tot = res.total.astype(np.int64)
    for s, label in enumerate(labels):
        t, o = tot[:, s], res.outcome[:, s]
        acc = out.setdefault(label, [0, 0, 0, 0, 0])
        for i, v in enumerate((len(t), int(t.sum()), int((t * t).sum()), int((o == 2).sum()), int((o == 1).sum()))):
            acc[i] += v
    return out


def _report(job: Job, chunk: Chunk, p: Prepared, seats: Sequence[Strategy], exc: StrategyError) -> ChunkFailed:
    """Narrow a batch failure to one game by bisection, log it with its traceback, build the error.

    The engine reports the games of the failing batch step; the dice of a game do not depend on
    the batch, so replaying halves of that set finds a single failing game (unless the failure
    only happens in company, in which case the batch's range is reported).
    """
    found = _bisect(p.rules, seats, np.asarray(exc.games, dtype=np.int64), job.seed)
    err = found if found is not None else exc
    games = np.asarray(err.games)
    where = (
        f"game {int(games[0])}"
        if found is not None
        else f"one of games {int(games[0])}..{int(games[-1])} (it does not fail when replayed alone)"
    )
    cause = err.cause
    details = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))
    msg = (
        f"bot {err.label} (seat {err.seat}, lineup {chunk.lineup} {'/'.join(job.lineups[chunk.lineup])}) "
        f"failed in {where} at {err.at}, seed {job.seed}: {type(cause).__name__}: {cause}"
    )
    # the traceback goes to run.log only: the command prints its own summary of the failure
    log.error("%s\nchunk %s\n%s", msg, chunk.file, details, extra=RUN_LOG_ONLY)
    return ChunkFailed(msg, chunk, err.label, int(games[0]) if found is not None else -1, details)


def _bisect(rules: RuleSet, seats: Sequence[Strategy], games: np.ndarray, seed: int) -> StrategyError | None:
    cand = games
    while len(cand) > 1:
        half = cand[: len(cand) // 2]
        try:
            play(rules, seats, half, seed)
        except StrategyError as e:
            cand = np.asarray(e.games, dtype=np.int64)
            continue
        cand = cand[len(cand) // 2 :]
    if len(cand) == 0:
        return None
    try:
        play(rules, seats, cand, seed)
    except StrategyError as e:
        return e
    return None


def chunk_file_faults(out: Path, c: Chunk, job: Job) -> dict[str, list[int]]:
    """Per-label fault sums of a chunk already on disk (resume)."""
    t = read_parquet(out / c.file, list(FAULT_COLUMNS))  # rows are (game, seat) in order
    cols = {name: t.column(name).to_numpy().reshape(-1, len(job.lineups[c.lineup])) for name in FAULT_COLUMNS}
    return fault_sums(cols, job.lineups[c.lineup])


def chunk_file_sums(out: Path, c: Chunk, job: Job) -> dict[str, list[int]]:
    """Per-label sums of a chunk already on disk (resume)."""

    t = read_parquet(out / c.file, ["seat", "total", "outcome"])
    seat = t.column("seat").to_numpy()
    tot = t.column("total").to_numpy().astype(np.int64)
    oc = t.column("outcome").to_numpy()
    res: dict[str, list[int]] = {}
    for s, label in enumerate(job.lineups[c.lineup]):
        m = seat == s
        x, o = tot[m], oc[m]
        acc = res.setdefault(label, [0] * 5)
        for i, v in enumerate((len(x), int(x.sum()), int((x * x).sum()), int((o == 2).sum()), int((o == 1).sum()))):
            acc[i] += v
    return res

"""The sub-batch journal: the games of a chunk played so far, kept on disk until the chunk's file is written.

A chunk plays as sub-batches of about :data:`SECONDS` of play (the first of :data:`FIRST_BATCH`
games measures the pace). Each sub-batch that does not finish its chunk is written here as one
file, ``RUN_DIR/journal/part-L{lineup}-G{start}-{stop}.bin``: the engine's arrays for those games
(:class:`harness.game.loop.Results`, the analysis columns, the referee's fault tallies), exactly
what the worker would otherwise hold in memory until the chunk ends. The dice of game ``i`` depend
only on (seed, ``i``), so a chunk played as journalled parts plus the rest gives the same rows, and
the same file bytes, as one played at once (``tests/test_chaos.py``).

A part is a JSON header (each array's name, dtype and shape) and the arrays' raw bytes, written
without a copy to ``.tmp`` and renamed (no fsync: the journal guards against a stopped or killed
process; the chunk files, fsynced, against a lost machine). A part that cannot be read back is
deleted and its games are played again. Parts are deleted once the manifest lists their chunk.

Ctrl-C (:class:`GracefulStop`) asks every worker to stop at its next sub-batch boundary, through a
flag shared with the forked workers; a second Ctrl-C stops at once.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import struct
import threading
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from harness.game.loop import Recording, Results
from harness.game.rules import RuleSet
from harness.records.rundir import TMP_SUFFIX

#: The run directory's folder of journalled sub-batches.
JOURNAL_DIR = "journal"
#: Target play per sub-batch (seconds): Ctrl-C loses at most this much of each worker's play.
SECONDS = 2.0
#: Games of a chunk's first sub-batch (it measures the pace of the ones after it).
FIRST_BATCH = 256
#: Written into every part: a part of another layout is played again, never misread.
PART_FORMAT = 2

_SKIP = ("rules", "labels", "recording")


@dataclass
class Part:
    """Games ``start..stop-1`` of one lineup: the engine's results, analysis columns, fault tallies."""

    start: int
    stop: int
    results: Results
    analysis: Mapping[str, np.ndarray] | None = None
    #: (B, S, 5) int32 the referee's tallies (:func:`harness.play.worker.fault_tally`)
    tally: np.ndarray | None = None
    #: the job's token (:attr:`harness.play.worker.Job.token`): a part is only ever taken by the job
    #: that played it (a resumed run has the same token; a run of other bots never takes it)
    job: str = ""


def part_name(lineup: int, start: int, stop: int) -> str:
    return f"part-L{lineup:04d}-G{start:012d}-{stop:012d}.bin"


def _parse(name: str) -> tuple[int, int, int] | None:
    if not (name.startswith("part-L") and name.endswith(".bin")):
        return None
    body = name[len("part-L") : -len(".bin")].replace("-G", "-").split("-")
    if len(body) != 3 or not all(x.isdigit() for x in body):
        return None
    lineup, start, stop = (int(x) for x in body)
    return (lineup, start, stop) if start < stop else None


def _entries(run_dir: Path) -> Iterator[tuple[tuple[int, int, int], Path]]:
    folder = Path(run_dir) / JOURNAL_DIR
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        key = _parse(path.name)
        if key is not None:
            yield key, path


def save(run_dir: Path, lineup: int, part: Part) -> None:
    """Journal ``part`` of ``lineup`` (atomically: a file under its final name is whole)."""
    arrays: dict[str, np.ndarray] = {}
    res = part.results
    for f in fields(res):
        v = getattr(res, f.name)
        if f.name not in _SKIP and v is not None:
            arrays[f"results.{f.name}"] = v
    if res.recording is not None:
        for f in fields(res.recording):
            arrays[f"recording.{f.name}"] = getattr(res.recording, f.name)
    for k, v in (part.analysis or {}).items():
        arrays[f"analysis.{k}"] = v
    if part.tally is not None:
        arrays["tally"] = part.tally
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    header = json.dumps(
        {"format": PART_FORMAT, "job": part.job, "arrays": [[k, v.dtype.str, list(v.shape)] for k, v in arrays.items()]}
    ).encode()
    folder = Path(run_dir) / JOURNAL_DIR
    folder.mkdir(exist_ok=True)
    path = folder / part_name(lineup, part.start, part.stop)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    try:
        with tmp.open("wb") as f:
            f.write(struct.pack("<Q", len(header)) + header)
            for v in arrays.values():
                f.write(v.reshape(-1).view(np.uint8).data)  # the array's own memory: no copy
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path, start: int, stop: int, rules: RuleSet, labels: tuple[str, ...], job: str) -> Part:
    data = bytearray(path.read_bytes())  # writable: the arrays below are views of it
    (n,) = struct.unpack_from("<Q", data)
    head = json.loads(bytes(data[8 : 8 + n]))
    if head.get("format") != PART_FORMAT:
        raise ValueError("another journal format")
    if head.get("job") != job:
        raise ValueError("another job's part")
    got: dict[str, np.ndarray] = {}
    at = 8 + n
    for name, dtype, shape in head["arrays"]:
        dt = np.dtype(dtype)
        size = dt.itemsize * int(np.prod(shape, dtype=np.int64))
        if at + size > len(data):
            raise ValueError("a part cut short")
        got[name] = np.frombuffer(data, dtype=dt, count=size // dt.itemsize, offset=at).reshape(shape)
        at += size
    if at != len(data):
        raise ValueError("a part longer than its header says")
    rec = None
    if any(k.startswith("recording.") for k in got):
        rec = Recording(**{f.name: got[f"recording.{f.name}"] for f in fields(Recording)})
    kw = {f.name: got.get(f"results.{f.name}") for f in fields(Results) if f.name not in _SKIP}
    res = Results(rules=rules, labels=labels, recording=rec, **kw)
    if not np.array_equal(res.games, np.arange(start, stop)) or res.total.shape != (stop - start, len(labels)):
        raise ValueError("games or seats differ from the part's name")
    analysis = {k.split(".", 1)[1]: v for k, v in got.items() if k.startswith("analysis.")} or None
    return Part(start, stop, res, analysis, got.get("tally"), job)


@dataclass(frozen=True)
class Needs:
    """What the job needs of a journalled part: the analysis arrays, the referee's tally, the record."""

    analysis: bool
    tally: bool
    recording: bool


def load(
    run_dir: Path, lineup: int, start: int, stop: int, rules: RuleSet, labels: Sequence[str], needs: Needs, job: str
) -> list[Part]:
    """The journalled parts of games ``start..stop-1`` of ``lineup`` that continue each other from
    ``start``; a part that is unreadable, of another job (``job``: its token) or lacks what the job
    needs is deleted (played again)."""
    parts: list[Part] = []
    at = start
    for (li, a, b), path in _entries(run_dir):
        if li != lineup or a != at or b > stop:
            continue
        try:
            part = _read(path, a, b, rules, tuple(labels), job)
        except (OSError, ValueError, KeyError, TypeError, struct.error):
            path.unlink(missing_ok=True)
            break
        if (
            (part.analysis is None) == needs.analysis
            or (part.tally is None) == needs.tally
            or (part.results.recording is None) == needs.recording
        ):
            path.unlink(missing_ok=True)
            break
        parts.append(part)
        at = b
    return parts


def drop(run_dir: Path, lineup: int, start: int, stop: int) -> None:
    """Delete the journalled parts inside games ``start..stop-1`` of ``lineup`` (their chunk is written)."""
    for (li, a, b), path in list(_entries(run_dir)):
        if li == lineup and start <= a and b <= stop:
            path.unlink(missing_ok=True)


def clean(run_dir: Path, done: Sequence[tuple[int, int, int]]) -> None:
    """Remove temporary files and the parts of chunks already written (a resumed run's start)."""
    folder = Path(run_dir) / JOURNAL_DIR
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.name.endswith(TMP_SUFFIX):
            path.unlink(missing_ok=True)
    for lineup, start, stop in done:
        drop(run_dir, lineup, start, stop)


def kept_games(run_dir: Path) -> int:
    """Games held by journal parts (what a resumed run will not play again)."""
    return sum(b - a for (_, a, b), _ in _entries(run_dir))


def without_recording(res: Results) -> Results:
    """``res`` without its recording (kept only when the job writes records)."""
    return replace(res, recording=None) if res.recording is not None else res


class ChunkInterrupted(Exception):
    """A worker stopped a chunk at a sub-batch boundary because the run is stopping (Ctrl-C);
    ``played`` of its games are in the journal."""

    def __init__(self, lineup: int, start: int, played: int) -> None:
        super().__init__(f"chunk L{lineup} G{start} stopped after {played} games")
        self.lineup, self.start, self.played = lineup, start, played

    def __reduce__(self) -> Any:
        return (ChunkInterrupted, (self.lineup, self.start, self.played))


def _shared_flag() -> Any:
    """A byte in shared memory that every worker process forked after this module's import sees."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform: workers are not forked, the flag is this process's
        ctx = multiprocessing.get_context()
    return ctx.Value("b", 0, lock=False)


#: The stop flag of the run under way, one per process tree: made at import, before any pool forks,
#: so a pool kept across runs (a calibration's, a sweep's) sees every run's Ctrl-C, not its first's.
_STOP = _shared_flag()


@dataclass(frozen=True)
class Journal:
    """Where a chunk's sub-batches are journalled (its run's directory); the run's stop flag is the
    process tree's one (:data:`_STOP`)."""

    run_dir: Path

    @classmethod
    def create(cls, run_dir: Path) -> Journal:
        """The journal of a run starting now (its stop flag cleared)."""
        _STOP.value = 0
        return cls(Path(run_dir))

    def stopping(self) -> bool:
        return bool(_STOP.value)

    def stop(self) -> None:
        _STOP.value = 1


class GracefulStop:
    """While a run plays in the main thread: the first Ctrl-C sets ``journal``'s stop flag (workers
    stop at their next sub-batch boundary), a second one raises ``KeyboardInterrupt`` at once."""

    def __init__(self, journal: Journal | None) -> None:
        self.journal = journal
        self.old: Any = None

    def __enter__(self) -> GracefulStop:
        if self.journal is not None and threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        assert self.journal is not None
        if self.journal.stopping():
            raise KeyboardInterrupt
        self.journal.stop()

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


class SigtermAsInterrupt:
    """While a run goes in the main thread, SIGTERM stops it like Ctrl-C (a resumable directory)."""

    def __enter__(self) -> None:
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGTERM, _raise_interrupt)

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM) with its played games kept: ``kept`` of ``total`` games
    are in complete chunks or the journal; ``run --resume`` continues it."""

    def __init__(self, run_dir: Path, kept: int, total: int) -> None:
        super().__init__(f"interrupted: {kept:,} of {total:,} games kept")
        self.run_dir, self.kept, self.total = run_dir, kept, total

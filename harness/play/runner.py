"""Play seeded games by the million into a run directory: runs, tournaments, gauntlets; resume; Dask.

Public API (stable; ``compare --sequential`` and ``calibrate`` build on it)::

    from harness.play.runner import RunConfig, run, extend, load_manifest, rows_digest

    cfg = RunConfig(seats=("greedy", "random"), rules="scandinavian", games=100_000, seed=7)
    cfg = RunConfig.from_toml("configs/runs/round_robin.toml").with_overrides(games=20_000, workers=2)
    out = run(cfg, "results/my-run")          # -> Path of the run directory (manifest + chunks)
    out = extend(out, 200_000)                # play games 100000..199999 of every lineup into it
    run(cfg, out, resume=True)                # finish an interrupted run (byte-identical result)
    run(cfg, out, games_range=(100_000, 200_000))   # same as extend, with the config in hand
    manifest = load_manifest(out)             # dict, format 1 (see harness.records.rundir)

- ``run(config, out_dir, *, quiet=True, resume=False, games_range=None) -> Path`` plays every
  lineup on game indices ``0..games-1`` (or up to ``games_range[1]``), writing one Parquet file
  per (lineup, chunk) atomically and ``manifest.json``. ``out_dir`` must be new or empty unless
  ``resume`` (keep the complete chunks, redo the rest; a changed config is refused) or
  ``games_range=(start, stop)`` with ``start`` equal to the games already in the directory.
- ``extend(run_dir, stop, *, quiet=True, workers=None, backend=None, scheduler=None) -> Path``
  grows a run to ``stop`` games per lineup with the config in its manifest.
- Raises :class:`~harness.util.errors.UserError` for a bad config or directory, :class:`RunStopped`
  when a chunk fails (bot error, dead worker; complete chunks stay, the directory is resumable),
  and :class:`~harness.play.journal.RunInterrupted` (a ``KeyboardInterrupt``) after Ctrl-C: on the
  local backend the first Ctrl-C lets every worker finish its sub-batch of about 2 s and journal
  it (a second stops at once); ``resume=True`` continues from the complete chunks and the journal.

Rows are exactly ``engine.Results.to_frame()`` with a leading ``lineup`` int16 column; the dice
of game ``i`` depend only on (seed, i), so the rows of a run do not depend on chunk size, worker
count or backend (see results/README.md for what is byte-identical).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import time
import traceback
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from tqdm import tqdm

from harness.util import backends
from harness.util import jit
from harness.play.provenance import git_rev, now, versions
from harness.util.cache import using_cache_dir
from harness.decisions.analysis import Analyser
from harness.game.loop import StrategyError, engine_cached, play, warm_engine
from harness.util.errors import RUN_LOG_ONLY, RunFailed, UserError
from harness.records.rundir import (
    CHUNK_DIR,
    FORMAT,
    LOG,
    MANIFEST,
    RECORD_DIR,
    TMP_SUFFIX,
    Chunk,
    load_manifest,
    file_sha256,
    manifest_chunks,
    parquet_rows,
    parse_chunk_name,
    plan,
    rows_digest,
    sha256_bytes,
    write_bytes_atomic,
    write_json_atomic,
)
from harness.play.runconfig import DEFAULT_CHUNK_SIZE, ResolvedRun, RunConfig, check_resumable, config_of
from harness.play.protocol import referee
from harness.play.protocol.referee import ENGINE_DIR
from harness.play import journal
from harness.play.journal import ChunkInterrupted, GracefulStop, RunInterrupted, SigtermAsInterrupt
from harness.play.worker import (
    FAULT_COLUMNS,
    ChunkFailed,
    ChunkResult,
    Job,
    chunk_file_faults,
    chunk_file_sums,
    forget,
    install,
    play_chunk,
    set_progress,
)
from harness.play.warmup import BOTS_HELPER_SECONDS, compile_in_background, kernel_helper, warm_up_seats

#: The manifest's fault sums of each refereed entrant, by these keys (:func:`harness.play.worker.fault_sums`).
FAULT_KEYS = ("games", *FAULT_COLUMNS[:-1], "corrupted")

__all__ = [
    "RunConfig",
    "RunStopped",
    "RunDirNotEmpty",
    "run",
    "extend",
    "load_manifest",
    "rows_digest",
    "config_of",
    "DEFAULT_CHUNK_SIZE",
]

log = logging.getLogger("harness.play.runner")

#: Rewrite the manifest's chunk list at most this often while a run goes (seconds).
MANIFEST_EVERY = 2.0

#: How often the parent looks at the games its workers report while chunks play (seconds).
PROGRESS_EVERY = 0.5
#: A Dask run with no worker for this long stops (resumable) instead of waiting for one (seconds).
LOST_AFTER = 10.0

#: Journal each sub-batch of a chunk on the local backend (:mod:`harness.play.journal`); off only to
#: measure what it costs (benchmarks/bench_journal.py).
JOURNAL = True


class RunDirNotEmpty(UserError):
    """The output directory is taken (the library's words; the command adds its flags)."""

    def __init__(self, out: Path, resumable: bool) -> None:
        self.out, self.resumable = out, resumable
        hint = " (it holds a run: resume it with resume=True)" if resumable else ""
        super().__init__(f"{out} exists and is not empty{hint}; write the run to another directory")


class RunStopped(RunFailed):
    """A run stopped before the end because a chunk failed; the directory is resumable."""

    def __init__(self, message: str, run_dir: Path, failure: ChunkFailed | None = None) -> None:
        super().__init__(message)
        self.run_dir, self.failure = run_dir, failure
        self.details = failure.details if failure is not None else None


# ---------------------------------------------------------------------------------------------
# public API


def run(
    config: RunConfig,
    out_dir: str | os.PathLike[str],
    *,
    quiet: bool = True,
    resume: bool = False,
    games_range: tuple[int, int] | None = None,
    continue_disqualified: bool = False,
) -> Path:
    """Play ``config`` into ``out_dir`` (see the module docstring); returns the run directory. The
    config's ``cache_dir`` (if any) is the solver cache directory for the run's length only.

    A run stopped because an engine was disqualified stays stopped: resuming it raises
    :class:`RunStopped` with the same reason, unless ``continue_disqualified`` (recorded in the
    manifest beside the disqualification; the engine is then refereed as before but not stopped
    again for it)."""
    with using_cache_dir(config.cache_dir, "cache_dir"):
        return _run(
            config,
            out_dir,
            quiet=quiet,
            resume=resume,
            games_range=games_range,
            continue_disqualified=continue_disqualified,
        )


def _run(
    config: RunConfig,
    out_dir: str | os.PathLike[str],
    *,
    quiet: bool,
    resume: bool,
    games_range: tuple[int, int] | None,
    continue_disqualified: bool,
) -> Path:
    out = Path(out_dir)
    if games_range is not None:
        start, stop = (int(x) for x in games_range)
        if not 0 <= start < stop:
            raise UserError(f"games_range must be (start, stop) with 0 <= start < stop, got {games_range}")
        config = config.with_overrides(games=stop)
    resolved = config.resolve()
    has_manifest = (out / MANIFEST).is_file()
    if games_range is not None:
        have = int(load_manifest(out)["games"]) if has_manifest else 0
        if start != have:
            raise UserError(
                f"{out} holds games 0..{have - 1} of each lineup; games_range must start at {have}, got {start}"
            )
        resume = has_manifest
    if resume:
        if not has_manifest:
            raise UserError(f"nothing to resume: {out} has no {MANIFEST}")
        old = load_manifest(out)
        check_resumable(old, resolved, out)
        dq = old.get("disqualified")
        if dq and not continue_disqualified and (old.get("continued") or {}).get("engine") != dq["engine"]:
            raise RunStopped(
                f"run stopped: {dq['reason']} (recorded in {out / MANIFEST}); to play on anyway: "
                f"yatzy-harness run --resume {out} --continue-disqualified",
                out,
            )
    else:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise RunDirNotEmpty(out, has_manifest)
        old = None
    one = _Run(resolved, out, old, quiet, continue_disqualified)
    try:
        return one.go()
    except OSError as exc:
        raise _io_error(exc, out) from None
    except KeyboardInterrupt as exc:  # Ctrl-C before play (set-up): say what is kept all the same
        if isinstance(exc, RunInterrupted) or not (out / MANIFEST).is_file():
            raise
        kept = sum(c.games for c in one.done.values()) + journal.kept_games(out)
        raise RunInterrupted(out, kept, one.games * len(one.seats)) from None


def extend(
    run_dir: str | os.PathLike[str],
    stop: int,
    *,
    quiet: bool = True,
    workers: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
) -> Path:
    """Play games ``games..stop-1`` of every lineup into an existing run (its manifest's config)."""
    manifest = load_manifest(run_dir)
    have = int(manifest["games"])
    if stop < have:
        raise UserError(f"{run_dir} already holds {have} games per lineup; cannot extend to {stop}")
    cfg = config_of(manifest, run_dir).with_overrides(workers=workers, backend=backend, scheduler=scheduler)
    if stop == have:
        return run(cfg, run_dir, quiet=quiet, resume=True)
    return run(cfg, run_dir, quiet=quiet, games_range=(have, stop))


# ---------------------------------------------------------------------------------------------
# one run


class _Run:
    """State of one invocation: resolved config, the directory, chunks done, sums, the manifest."""

    def __init__(
        self,
        resolved: ResolvedRun,
        out: Path,
        old: Mapping[str, Any] | None,
        quiet: bool,
        continue_disqualified: bool = False,
    ) -> None:
        self.r, self.out, self.old, self.quiet = resolved, out, old, quiet
        #: the engine's disqualification (manifest key ``disqualified``) and the user's word to play on
        self.dq: dict[str, Any] | None = (old or {}).get("disqualified")
        self.continued: dict[str, Any] | None = (old or {}).get("continued")
        if self.dq and continue_disqualified and (self.continued or {}).get("engine") != self.dq["engine"]:
            self.continued = {
                "engine": self.dq["engine"],
                "flag": "--continue-disqualified",
                "at": now(),
                "games_kept": sum(int(c["stop"]) - int(c["start"]) for c in old.get("chunks", [])),
            }
        cfg = resolved.config
        self.games = cfg.games
        self.seats = [len(x) for x in resolved.lineups]
        rules = resolved.rules
        self.refereed = {label: s for label, s in resolved.strategies.items() if s.refereed}
        self.job = Job(
            dict(rules.spec),
            rules.source,
            dict(cfg.settings),
            rules.digest,
            resolved.entrants,
            tuple(tuple(x) for x in resolved.lineups),
            cfg.seed,
            cfg.record,
            cfg.analyse,
            bool(self.refereed),
            str(out) if self.refereed and cfg.backend == "local" else "",
            str(out) if cfg.backend == "local" and JOURNAL else "",
        )
        self.done: dict[tuple[int, int], Chunk] = {}
        self.sums: dict[str, list[int]] = {label: [0] * 5 for label, _ in resolved.entrants}
        #: refereed entrants' faults over the chunks done: label -> [seat-games, decisions, time,
        #: illegal, crash, stall, corrupted games] (:func:`harness.play.worker.fault_sums`)
        self.faults: dict[str, list[int]] = {label: [0] * (len(FAULT_COLUMNS) + 1) for label in self.refereed}
        self.started = now()
        #: games of the chunks written by this invocation; games its workers report played so far
        self._collected = 0
        self._reported: Any = None
        self._initial = 0
        self._last_write = 0.0
        self._write_cost = 0.0
        #: since when a Dask cluster has had no worker (monotonic seconds; None: it has some)
        self._alone: float | None = None
        #: chunks written since the manifest was last written (their journal parts go after it)
        self._listed: list[Chunk] = []

    # -- the manifest -------------------------------------------------------------------------

    def manifest(self, complete: bool) -> dict[str, Any]:
        r, cfg, rules = self.r, self.r.config, self.r.rules
        old = self.old or {}
        history = list(old.get("history", []))
        history.append(
            {
                "started": self.started,
                "stopped": None if not complete else now(),
                "games": self.games,
                "workers": cfg.workers or backends.cpu_count(),
                "backend": cfg.backend,
                "scheduler": cfg.scheduler,
            }
        )
        return {
            "format": FORMAT,
            "kind": cfg.mode,
            "complete": complete,
            "rules": {
                "name": rules.name,
                "source": rules.source,
                "settings": dict(rules.settings),
                "digest": rules.digest,
            },
            "entrants": [{"label": label, "spec": spec} for label, spec in r.entrants],
            "lineups": [list(x) for x in r.lineups],
            "games": self.games,
            "seed": cfg.seed,
            "chunk_size": cfg.chunk_size,
            "table": len(r.lineups[0]),
            "chunks": [c.to_dict() for c in sorted(self.done.values())],
            # exact sums over the chunks listed: label -> [seats, sum, sum of squares, wins, shared wins]
            "totals": {label: list(v) for label, v in self.sums.items()},
            **(
                {
                    "engines": self.engines(),
                    "faults": {label: dict(zip(FAULT_KEYS, v)) for label, v in self.faults.items()},
                }
                if self.refereed
                else {}
            ),
            **({"disqualified": self.dq} if self.dq else {}),
            **({"continued": self.continued} if self.continued else {}),
            "created": old.get("created", self.started),
            "updated": now(),
            "versions": versions(cfg.backend),
            "git": git_rev(),
            "config": cfg.to_dict(),
            "history": history,
        }

    def engines(self) -> dict[str, Any]:
        """What the manifest records of each external engine (command, handshake, files' sha256)."""
        old = (self.old or {}).get("engines", {})
        return {
            label: {**old.get(label, {}), **{k: v for k, v in s.describe().items() if v is not None}}
            for label, s in self.refereed.items()
        }

    def write_manifest(self, complete: bool = False, force: bool = True) -> None:
        tick = time.monotonic()
        # a huge tournament's chunk list costs time to write: never spend more than ~5 % on it
        if force or tick - self._last_write >= max(MANIFEST_EVERY, 20 * self._write_cost):
            write_json_atomic(self.out / MANIFEST, self.manifest(complete))
            self._last_write = time.monotonic()
            self._write_cost = self._last_write - tick
            for c in self._listed:  # listed now: their journalled sub-batches are no longer needed
                journal.drop(self.out, c.lineup, c.start, c.stop)
            self._listed.clear()

    # -- what is already there ----------------------------------------------------------------

    def scan(self) -> None:
        """Keep the complete, intact chunks of a resumed run; delete temporary, damaged and unverifiable files.

        A chunk listed in the manifest is kept when its bytes still match the recorded sha256 (or,
        for a manifest written before checksums, when its row count is right). A chunk file the
        manifest does not list (a crash between writing it and rewriting the manifest) cannot be
        verified and is played again: the same seed gives the same bytes.
        """
        chunks_dir = self.out / CHUNK_DIR
        listed = {(c.lineup, c.start): c for c in manifest_chunks(self.old or {})}
        records_dir = self.out / RECORD_DIR
        for path in sorted(records_dir.iterdir()) if records_dir.is_dir() else []:
            if path.name.endswith(TMP_SUFFIX):
                path.unlink()
        for path in sorted(chunks_dir.iterdir()):
            if path.name.endswith(TMP_SUFFIX):
                log.info("removing partial chunk %s", path.name)
                path.unlink()
                continue
            key = parse_chunk_name(path.name)
            if key is None or key[0] >= len(self.seats) or key[1] >= self.games:
                raise UserError(f"cannot resume {self.out}: unexpected file {path} (not a chunk of this run)")
            chunk = listed.get(key)
            if chunk is None:
                log.info(
                    "chunk %s is not in the manifest (stopped before it was recorded): playing it again", path.name
                )
                path.unlink()
                continue
            if chunk.sha256 is not None:
                intact = file_sha256(path) == chunk.sha256
            else:
                intact = parquet_rows(path) == chunk.games * self.seats[chunk.lineup]
            if not intact:
                log.warning(
                    "chunk %s is damaged (%s): playing it again",
                    path.name,
                    "checksum differs" if chunk.sha256 else "row count differs",
                )
                path.unlink()
                continue
            if self.r.config.record and (
                chunk.records_sha256 is None or file_sha256(self.out / chunk.records_file) != chunk.records_sha256
            ):
                log.warning("records of chunk %s are missing or damaged: playing it again", path.name)
                path.unlink()
                continue
            self.done[key] = chunk
        journal.clean(self.out, [(c.lineup, c.start, c.stop) for c in self.done.values()])
        # the manifest's sums cover exactly its listed chunks: trust them only if all are still there
        old_totals = (self.old or {}).get("totals")
        if old_totals is not None and set(old_totals) == set(self.sums) and all(k in self.done for k in listed):
            for label, v in old_totals.items():
                self.sums[label] = [int(x) for x in v]
            extra = [c for k, c in self.done.items() if k not in listed]
        else:
            extra = list(self.done.values())
        for c in extra:
            self._add_sums(chunk_file_sums(self.out, c, self.job))
        old_faults = (self.old or {}).get("faults")
        if self.refereed:
            if old_faults is not None and set(old_faults) == set(self.faults) and all(k in self.done for k in listed):
                for label, v in old_faults.items():
                    self.faults[label] = [int(v[k]) for k in FAULT_KEYS]
            else:
                extra = list(self.done.values())
            for c in extra:
                self._add_faults(chunk_file_faults(self.out, c, self.job))

    def _add_faults(self, faults: Mapping[str, Sequence[int]] | None) -> None:
        for label, v in (faults or {}).items():
            if label in self.faults:
                acc = self.faults[label]
                for i, x in enumerate(v):
                    acc[i] += int(x)

    def disqualified(self) -> str | None:
        """The first refereed entrant over its share of corrupted games, as one line (else None);
        recorded for the manifest (:attr:`dq`). An engine the user played on with is not stopped again."""
        for label, s in self.refereed.items():
            v = self.faults[label]
            reason = s.disqualified(v[0], v[-1])
            if reason is not None and (self.continued or {}).get("engine") != label:
                kinds = ", ".join(f"{k.removeprefix('faults_')} {n:,}" for k, n in zip(FAULT_KEYS[2:-1], v[2:-1]) if n)
                line = f"{reason}; faults: {kinds or 'none'}; engine log: {self.out / ENGINE_DIR}"
                self.dq = {
                    "engine": label,
                    "reason": line,
                    "at": now(),
                    "games": v[0],
                    "corrupted": v[-1],
                    "faults": dict(zip(FAULT_KEYS, v)),
                }
                return line
        return None

    def _add_sums(self, sums: Mapping[str, Sequence[int]], sign: int = 1) -> None:
        for label, v in sums.items():
            acc = self.sums[label]
            for i, x in enumerate(v):
                acc[i] += sign * int(x)

    # -- playing ------------------------------------------------------------------------------

    def go(self) -> Path:
        cfg = self.r.config
        (self.out / CHUNK_DIR).mkdir(parents=True, exist_ok=True)
        if cfg.record:
            (self.out / RECORD_DIR).mkdir(exist_ok=True)
        if self.old is not None:
            self.scan()
        todo = plan(len(self.seats), self.games, cfg.chunk_size, self.done.values())
        self.write_manifest()
        n_workers = cfg.workers or backends.cpu_count()
        forked = cfg.backend == "local" and n_workers > 1 and bool(todo)
        with backends.run_logging(self.out / LOG, forked):
            log.info(
                "run %s: %s, rules %s, %d lineup(s) x %d games, seed %d, chunk %d; %d chunk(s) to play",
                self.out,
                cfg.mode,
                self.r.rules.name,
                len(self.seats),
                self.games,
                cfg.seed,
                cfg.chunk_size,
                len(todo),
            )
            if todo:
                t0 = time.monotonic()
                if self.refereed:  # before the engines start: their logs and the fault journal live here
                    referee.set_run_dir(self.out)
                try:
                    self._prepare()
                    self._play(todo, n_workers)
                finally:
                    forget(self.job)
                    if self.refereed:
                        for s in self.refereed.values():
                            s.close()
                        referee.set_run_dir(None)
                played = sum(c.games for c in todo)
                dt = time.monotonic() - t0
                log.info(
                    "played %d chunk(s), %d games in %.1f s (%.0f games/s)",
                    len(todo),
                    played,
                    dt,
                    played / max(dt, 1e-9),
                )
        self.write_manifest(complete=True)
        return self.out

    def _prepare(self) -> None:
        """Heavy set-up in the parent before any fork: bot tables, then one game per lineup to compile kernels.

        When a bot's set-up solves a table (a first run), a helper process compiles the bots' and
        the engine's kernels into numba's cache meanwhile, on the other core: the parent then
        loads them instead of compiling them after the solve (benchmarks/BENCHMARKS.md, "First run")."""
        if any(s.slow_prepare() for s in self.r.strategies.values()):
            jit.set_helper(kernel_helper(self.r))  # a bot waits for it before it compiles (jit.await_helper)
        elif not engine_cached():
            # a first run without a solve: the helper compiles the bots' kernels on the other core
            # while this process compiles the engine's (benchmarks/BENCHMARKS.md, "First run")
            jit.set_helper(kernel_helper(self.r, bots_only=True), BOTS_HELPER_SECONDS)
            warm_engine(self.r.rules, len(self.r.lineups[0]))
        for label, s in self.r.strategies.items():
            s.expect_games(self.games * sum(labels.count(label) for labels in self.r.lineups))
            s.prepare()
        jit.await_helper()
        for s in self.r.strategies.values():
            if (work := s.background_kernels()) is not None:  # a long run's extra kernels: never waited for
                compile_in_background(work)
                break  # one such process a run (two bots of one kind would compile the same kernels)
        warm: set[str] = set()
        for i, labels in enumerate(self.r.lineups):  # one game with each bot compiles its kernels here, not per worker
            if not warm.issuperset(labels):
                try:
                    play(self.r.rules, warm_up_seats(self.r, labels), np.arange(1, dtype=np.int64), self.r.config.seed)
                except StrategyError as exc:
                    cause = exc.cause
                    details = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))
                    msg = (
                        f"bot {exc.label} (seat {exc.seat}, lineup {i} {'/'.join(labels)}) failed in game 0 "
                        f"(its warm-up game, before any chunk) at {exc.at}, seed {self.r.config.seed}: "
                        f"{type(cause).__name__}: {cause}"
                    )
                    log.error("%s\n%s", msg, details, extra=RUN_LOG_ONLY)
                    failure = ChunkFailed(msg, Chunk(i, 0, 1), exc.label, 0, details)
                    report = failure.summary(self.out, self.out / LOG, len(self.done))
                    log.error("%s", report, extra=RUN_LOG_ONLY)
                    raise RunStopped(report, self.out, failure) from None
                warm.update(labels)
        analyser = None
        if self.r.config.analyse:  # the solved table, loaded (or solved) once before the fork
            analyser = Analyser(self.r.rules)
        install(self.job, self.r.rules, self.r.strategies, analyser)

    def _play(self, todo: list[Chunk], n_workers: int) -> None:

        cfg = self.r.config
        total = self.games * len(self.seats)
        initial = self._initial = sum(c.games for c in self.done.values())
        jr = journal.Journal.create(self.out) if self.job.journal_dir else None
        with (
            SigtermAsInterrupt(),
            GracefulStop(jr),
            backends.open_backend(cfg.backend, n_workers, cfg.scheduler) as be,
            tqdm(
                total=total,
                initial=initial,
                unit="game",
                unit_scale=True,
                disable=self.quiet,
                dynamic_ncols=True,
                smoothing=0.05,
            ) as bar,
        ):
            log.info("executing on %s", be.description)
            hook = None if self.quiet else self._progress_hook(bar)
            old_hook = set_progress(hook)
            pending: dict[cf.Future, Chunk] = {}
            queue = iter(todo)
            ahead = be.slots + max(1, be.slots // 2)  # keep every slot busy, hold few results in memory
            try:
                while True:
                    stopping = jr is not None and jr.stopping()
                    while len(pending) < ahead and not stopping:
                        c = next(queue, None)
                        if c is None:
                            break
                        try:
                            pending[be.executor.submit(play_chunk, self.job, c)] = c
                        except cf.BrokenExecutor as exc:  # a worker died before the pool noticed
                            self._stop(_wrap(exc, c), pending, be, bar)
                        stopping = jr is not None and jr.stopping()
                    if stopping:  # Ctrl-C: what has not started never will; the rest stop at a boundary
                        for f in [f for f in pending if f.cancel()]:
                            del pending[f]
                    if not pending:
                        break
                    # wake up now and then: the bar shows the games the workers report per batch
                    finished, _ = cf.wait(
                        pending,
                        timeout=PROGRESS_EVERY if hook or jr or be.alive else None,
                        return_when=cf.FIRST_COMPLETED,
                    )
                    if not finished and be.alive is not None:
                        self._check_workers(be)
                    failure = self._collect(finished, pending, bar)
                    out = self.disqualified() if self.refereed else None
                    if failure is None and out is not None:
                        failure = ChunkFailed(out)
                    if failure is not None:
                        self._stop(failure, pending, be, bar)
                if jr is not None and jr.stopping() and any((c.lineup, c.start) not in self.done for c in todo):
                    raise KeyboardInterrupt  # (a Ctrl-C after the last chunk ended changes nothing)
            except OSError:
                # a chunk or the manifest could not be written (full disk, permissions): stop the
                # workers, record what is complete if the disk lets us, leave the run resumable
                be.abort()
                try:
                    self.write_manifest()
                except OSError:
                    pass
                raise
            except KeyboardInterrupt:
                be.abort()
                self.write_manifest()
                bar.leave = False  # the command's one line says where the run stands
                kept = sum(c.games for c in self.done.values()) + journal.kept_games(self.out)
                log.warning(
                    "interrupted: %d chunk(s) complete, %d of %d games kept; continue with: "
                    "yatzy-harness run --resume %s",
                    len(self.done),
                    kept,
                    total,
                    self.out,
                    extra=RUN_LOG_ONLY,
                )
                raise RunInterrupted(self.out, kept, total) from None
            finally:
                set_progress(old_hook)

    def _check_workers(self, be: backends.Backend) -> None:
        """Stop, resumable, in one line, once the cluster has had no worker for :data:`LOST_AFTER` s."""
        assert be.alive is not None
        try:
            n = be.alive()
        except OSError:  # the scheduler itself is gone: the same for this run
            n = 0
        now = time.monotonic()
        if n:
            self._alone = None
            return
        self._alone = self._alone or now
        if now - self._alone >= LOST_AFTER:
            be.abort()
            self.write_manifest()
            msg = (
                f"run stopped: every Dask worker is gone (none for {LOST_AFTER:g} s); {len(self.done)} complete "
                f"chunk(s) are kept; resume with: yatzy-harness run --resume {self.out}"
            )
            log.error("%s", msg, extra=RUN_LOG_ONLY)
            raise RunStopped(msg, self.out)

    def _progress_hook(self, bar: Any) -> Any:
        """The workers' progress hook (:func:`harness.play.worker.set_progress`): it adds a batch's games
        to a counter shared with the forked workers (set before the pool forks them); in this
        process (one worker, Dask threads) it also moves the bar at once. A Dask worker process
        has no hook: its chunks count when they finish."""

        counter = multiprocessing.get_context("fork").Value("q", 0)
        self._reported = counter
        parent = os.getpid()

        def hook(games: int) -> None:
            with counter.get_lock():
                counter.value += games
            if os.getpid() == parent:
                self._show(bar)

        return hook

    def _show(self, bar: Any) -> None:
        """Move the bar to the games written, or reported played if more (never past the total)."""
        played = self._collected
        if self._reported is not None:
            played = max(played, int(self._reported.value))
        target = min(self.games * len(self.seats), self._initial + played)
        if target > bar.n:
            bar.update(target - bar.n)

    def _collect(self, finished: set[cf.Future], pending: dict[cf.Future, Chunk], bar: Any) -> BaseException | None:
        """Write every successful finished chunk; return the first failure, if any."""
        failure: BaseException | None = None
        for f in sorted(finished, key=lambda f: pending[f]):
            c = pending.pop(f)
            exc = f.exception()
            if isinstance(exc, ChunkInterrupted):  # stopped by Ctrl-C at a boundary: its games are journalled
                continue
            if exc is not None:
                if failure is None:
                    failure = exc if isinstance(exc, ChunkFailed) else _wrap(exc, c)
                continue
            self._write(f.result())
            self._collected += c.games
        self._show(bar)
        self.write_manifest(force=False)
        return failure

    def _write(self, res: ChunkResult) -> None:
        c = res.chunk
        records_sha = None
        if res.records is not None:  # first: a chunk file on disk means its records are too
            write_bytes_atomic(self.out / c.records_file, res.records)
            records_sha = sha256_bytes(res.records)
        write_bytes_atomic(self.out / c.file, res.data)
        self.done[(c.lineup, c.start)] = Chunk(c.lineup, c.start, c.stop, sha256_bytes(res.data), records_sha)
        self._listed.append(c)
        self._add_sums(res.sums)
        self._add_faults(res.faults)

    def _stop(self, failure: BaseException, pending: dict[cf.Future, Chunk], be: backends.Backend, bar: Any) -> None:
        """A chunk failed: cancel what has not started, keep what finishes, record, raise RunStopped."""
        for f in list(pending):
            if f.cancel():
                del pending[f]
        if isinstance(failure, ChunkFailed) and pending:
            done, _ = cf.wait(pending, timeout=600)
            self._collect(done, pending, bar)
        be.abort()
        self.write_manifest()

        if not isinstance(failure, ChunkFailed):
            failure = ChunkFailed(str(failure).splitlines()[0])
        # once in run.log; the command prints the same block on stderr (the worker logged the traceback)
        report = failure.summary(self.out, self.out / LOG, len(self.done))
        if self.dq and str(failure) == self.dq["reason"]:  # resuming needs the user's word (issue 49)
            report = report.replace(f"run --resume {self.out}", f"run --resume {self.out} --continue-disqualified")
        log.error("%s", report, extra=RUN_LOG_ONLY)
        raise RunStopped(report, self.out, failure)


def _io_error(exc: OSError, out: Path) -> UserError:
    """One line for a run that could not write its directory (exit 2 through the CLI)."""
    what = exc.strerror or str(exc)
    where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
    hint = (
        f"; complete chunks are kept: fix it and finish with: yatzy-harness run --resume {out}"
        if (out / MANIFEST).is_file()
        else ""
    )
    return UserError(f"cannot write the run to {out}: {where}{what}{hint}")


def _wrap(exc: BaseException, c: Chunk) -> ChunkFailed:
    if isinstance(exc, BrokenProcessPool):
        msg = (
            f"a worker process died (killed? out of memory?) while chunks were playing, "
            f"among them {c.file} (games {c.start}..{c.stop - 1})"
        )
    else:
        msg = f"chunk {c.file} (games {c.start}..{c.stop - 1}) failed: {type(exc).__name__}: {exc}"

    log.error("%s", msg, extra=RUN_LOG_ONLY)  # the stop report repeats it on the console
    return ChunkFailed(msg, c)

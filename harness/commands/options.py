"""What every command shares: the help formatter, examples, common options, JSON output, console logging.

Only the commands wing and :mod:`harness.cli` import this module (the library takes typed
arguments and never reads argparse namespaces).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from harness.util.cache import CACHE_ENV
from harness.util.errors import RUN_LOG_ONLY, UserError

if TYPE_CHECKING:
    from harness.reports.quality import QualityOptions



class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps epilogs as written and shows an option's default when it has a meaningful one.

    A default of None, False or an empty list is not shown (it means "not given"); a help text
    that already says ``default`` is left alone.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        d = action.default
        if ("default" in text or d is None or d is False or d == [] or d is argparse.SUPPRESS
                or not action.option_strings or isinstance(action, argparse._HelpAction)):
            return text
        return f"{text} (default: %(default)s)"


def examples(*lines: str) -> str:
    """An ``epilog`` listing example command lines (kept as written by :class:`HelpFormatter`)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def describe(p: argparse.ArgumentParser, description: str, *example_lines: str) -> None:
    """Set a command's description and its examples (the registry gave it its one-line summary)."""
    p.description = description
    p.epilog = examples(*example_lines)


# ---------------------------------------------------------------------------------------------
# option types


def confidence_arg(raw: str) -> float:
    """argparse type for a confidence level in (0, 1)."""
    try:
        v = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}")
    return v


def number_arg(*, minimum: float = 0.0, inclusive: bool = False, integer: bool = False,
               maximum: float | None = None) -> Callable[[str], float | int]:
    """argparse type: a finite number above ``minimum`` (or at least it, when ``inclusive``) and at
    most ``maximum``; a whole number when ``integer``. argparse names the option in the error."""
    def parse(raw: str) -> float | int:
        kind = "a whole number" if integer else "a number"
        try:
            v: float | int = int(raw) if integer else float(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {raw!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {raw!r}")
        low_ok = v >= minimum if inclusive else v > minimum
        if not low_ok or (maximum is not None and v > maximum):
            low = f"{'at least' if inclusive else 'more than'} {minimum:g}"
            span = f"{low} and at most {maximum:g}" if maximum is not None else low
            raise argparse.ArgumentTypeError(f"must be {span}, got {raw}")
        return v
    return parse


# ---------------------------------------------------------------------------------------------
# options more than one command takes


def add_set_option(p: argparse.ArgumentParser) -> None:
    """The repeatable ``--set KEY=VALUE`` rule-setting override."""
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="change a rule setting (repeatable), e.g. --set upper_bonus_threshold=62")


def add_cache_dir_option(p: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR``: where solved value tables and keep policies are found and written.

    The command then calls :func:`harness.util.cache.use_cache_dir` with ``args.cache_dir`` before it
    makes any bot.
    """
    p.add_argument("--cache-dir", metavar="DIR",
                   help=f"solver cache directory: value tables and keep policies are read and written here "
                        f"(default: ${CACHE_ENV}, else $XDG_CACHE_HOME/yatzy-harness or ~/.cache/yatzy-harness)")


def add_window_options(p: argparse.ArgumentParser, disk_note: str) -> None:
    """``--max-memory``, ``--max-disk``, ``--scratch-dir``: where a forward pass's score windows go
    (in memory, else in memory-mapped files, else not at all: ``disk_note`` says what then)."""
    p.add_argument("--max-memory", type=number_arg(), default=3.0, metavar="GIB",
                   help="largest score-distribution working set kept in memory; beyond it the working set "
                        "goes to memory-mapped files in --scratch-dir")
    p.add_argument("--max-disk", type=number_arg(inclusive=True), default=64.0, metavar="GIB",
                   help=f"largest working set put on disk, 0 = never; beyond it (or beyond the free space) "
                        f"{disk_note} (maxi needs 33)")
    p.add_argument("--scratch-dir", default=None, metavar="DIR",
                   help="directory of the disk-backed working set (default: the cache directory); "
                        "its files are unlinked at once, so nothing is left behind")


def window_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`add_window_options`'s flags (bytes) for the library."""
    return {"max_bytes": int(args.max_memory * 2**30), "max_disk_bytes": int(args.max_disk * 2**30),
            "scratch_dir": args.scratch_dir}


#: ``--max-line-bytes``'s default, :data:`harness.records.record.MAX_LINE_BYTES` (repeated here so that
#: ``--help`` does not import the library; tests/test_untrusted.py checks that they agree).
MAX_LINE_BYTES = 4 << 20


def add_records_options(p: Any) -> None:
    """How game records (untrusted input) are read: ``--rules-dir`` (repeatable),
    ``--max-line-bytes`` and ``--quiet`` (:func:`add_quiet_option`). The command then reads them
    with :func:`stream_games`."""
    p.add_argument("--rules-dir", action="append", metavar="DIR",
                   help="a directory whose rule files the records may name (repeatable); without it a record "
                        "names a built-in rule set or carries its rule set inline (a run directory's records "
                        "use the run's rules)")
    p.add_argument("--max-line-bytes", type=number_arg(minimum=1, inclusive=True, integer=True),
                   default=MAX_LINE_BYTES, metavar="N",
                   help="a line of a records file (a Parquet row's record) longer than N bytes is a bad game, "
                        "skipped without being read")
    add_quiet_option(p)


def add_quiet_option(p: Any) -> None:
    """``--quiet``: no progress bar; :func:`quiet` says whether to draw one."""
    p.add_argument("--quiet", action="store_true", help="no progress bar (there is none when stderr is no terminal)")


def quiet(args: argparse.Namespace) -> bool:
    """No progress bar: ``--quiet`` was given, or stderr is no terminal (a log file, a pipe)."""
    return bool(getattr(args, "quiet", False)) or not sys.stderr.isatty()


def stream_games(source: str, args: argparse.Namespace, *, show: bool = True) -> Any:
    """A :class:`harness.records.record.RecordStream` of ``source`` with the options of
    :func:`add_records_options`: a progress bar on stderr (unless :func:`quiet`), and with ``show``
    every bad game on stderr, one line each, as its batch is read. A source that cannot be read
    is a :class:`UserError` at once; one without a usable game ends its walk with
    :class:`harness.records.record.NoUsableGame` (:func:`listed` makes its error)."""
    # imported here: `COMMAND --help` must not pay for numpy (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.records.record import NoUsableGame, RecordStream

    try:
        return RecordStream(source, max_line_bytes=args.max_line_bytes, rules_dirs=args.rules_dir or (),
                            quiet=quiet(args), on_bad=_show_one if show else None)
    except NoUsableGame as exc:  # a run directory is read (and checked) whole at once
        raise listed(exc) from None


def _show_one(b: Any) -> None:
    from tqdm import tqdm  # imported here, as numpy is: `COMMAND --help` does not load it

    tqdm.write(b.message, file=sys.stderr)  # above a progress bar, which is drawn again below it


def same_game(game: Any, wanted: str) -> bool:
    """Whether a record's id ``game`` is the ``--game`` given (``17`` is game 17 and 17.0)."""
    if str(game) == wanted:
        return True
    try:
        return not isinstance(game, str) and float(wanted) == game
    except ValueError:
        return False


def record_of(source: str, game: str, lineup: int | None, args: argparse.Namespace) -> tuple[Any, Any, int | None]:
    """The record of ``--game`` (and ``--lineup``) in a file of records (streamed with
    :func:`stream_games`, only the game asked for kept) or a run directory, its rule set as reading loaded it (a run's from its
    manifest) and its lineup (None in a file without lineups). A run's record is not checked here:
    what takes it does (``position_from_record``, the review)."""
    from harness.records.codec import records_of_run, run_rules

    if Path(source).is_dir():
        try:
            g = int(game)
        except ValueError:
            raise UserError(f"--game {game}: a run's games are numbered from 0") from None
        ((lu, rec),) = list(records_of_run(source, lineup=lineup or 0, games=[g]))
        return rec, run_rules(source), lu
    from harness.records.record import NoUsableGame

    stream = stream_games(source, args, show=False)  # a batch at a time: only the game asked for is kept
    hits, ids, lineups = [], [], False
    try:
        for part in stream:
            lineups = lineups or any(lu is not None for lu in part.lineups)
            ids += [str(r.game) for r in part.games[:max(0, 6 - len(ids))]]
            hits += [(rec, lu, rules) for rec, lu, rules in zip(part.games, part.lineups, part.rules)
                     if same_game(rec.game, game) and (lineup is None or lu == lineup)]
    except NoUsableGame as exc:
        raise listed(exc) from None
    if lineup is not None and not lineups:
        raise UserError(f"{source} has no lineups (only a run's Parquet records do): leave out --lineup")
    if not hits:
        for bad in stream.errors:
            if bad.game is not None and same_game(bad.game, game):
                raise UserError(bad.message)
        n = stream.games
        shown = ", ".join(ids[:5]) + (", ..." if n > 5 else "")
        where = f" lineup {lineup}" if lineup is not None else ""
        raise UserError(f"game {game} is not in {source}{where} ({n} game{'s' * (n != 1)}: {shown})")
    if len(hits) > 1:
        lus = sorted({lu for _, lu, _ in hits if lu is not None})
        how = f"give --lineup ({', '.join(map(str, lus))})" if len(lus) > 1 else "keep one game per id"
        raise UserError(f"game {game} appears {len(hits)} times in {source}: {how}")
    return hits[0][0], hits[0][2], hits[0][1]


def show_bad(bad: Iterable[Any]) -> None:
    """Bad games (:class:`harness.records.record.BadGame`) on stderr, one line each."""
    for b in bad:
        _show_one(b)


def listed(exc: Any, shown: int = 0) -> UserError:
    """A :class:`harness.records.record.NoUsableGame`'s every bad game on stderr (but the first ``shown``,
    listed already); returns the error to raise, its headline (the first bad game not repeated)."""
    show_bad(exc.bad[shown:])
    h = exc.headline
    return UserError(f"{h[:-1]}, listed above)" if h.endswith(")") and exc.bad else h)


def add_quality_options(p: argparse.ArgumentParser) -> None:
    """The game-quality thresholds as command-line options (``report`` and ``compare``)."""
    # imported here: the two commands that take these options pay for numpy, not every command's --help
    from harness.reports.quality import QualityOptions

    d = QualityOptions()
    p.add_argument("--close-margin", type=int, default=d.close_margin, metavar="POINTS",
                   help=f"game quality: a close game is won by at most POINTS (default {d.close_margin})")
    p.add_argument("--comeback-deficit", type=int, default=d.comeback_deficit, metavar="POINTS",
                   help="game quality: a comeback is a win by a seat POINTS or more behind after round 10 "
                        f"(default {d.comeback_deficit})")


def quality_options(args: argparse.Namespace) -> QualityOptions:
    from harness.reports.quality import QualityOptions

    return QualityOptions(close_margin=args.close_margin, comeback_deficit=args.comeback_deficit)


#: The depth of skill's defaults, :data:`harness.exact.chain.DEFAULT_RATES`, ``DEFAULT_WEAKEST`` and
#: ``DEFAULT_DIAL``, and the names of its :data:`harness.exact.chain.DIALS` (repeated here so that ``--help`` does not import the library; tests/test_depth.py
#: checks that they agree).
DEPTH_RATES = "0.6,0.75"
DEPTH_WEAKEST = "random"
DEPTH_DIAL = "solver:temperature"
DEPTH_DIALS = ("solver:temperature", "solver:blunder")


def add_depth_mode_options(p: argparse.ArgumentParser) -> None:
    """``--depth`` / ``--no-depth`` of ``report`` and ``compare`` (``args.depth``: "on", "off" or
    "auto", :data:`harness.exact.depth.MODES`): the exact depth of skill of the rule sets."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--depth", dest="depth", action="store_const", const="on", default="auto",
                   help="the exact depth of skill of the rule set(s) (steps at 60 %% and 75 %% up the solver's "
                        "temperature dial from random) even where it is costly (dozens of softmax evaluations: a "
                        "minute to hours of CPU; cached); by default shown when every evaluation is cached or the "
                        "rule set is small, else a note says so")
    g.add_argument("--no-depth", dest="depth", action="store_const", const="off", help="no depth of skill")


def add_depth_options(p: argparse.ArgumentParser) -> None:
    """The depth of skill's ladder and rates (``evaluate --depth``, ``sweep``) and the workers that
    evaluate; the command then reads them with :func:`depth_settings`."""
    p.add_argument("--rates", default=DEPTH_RATES, metavar="P,...",
                   help="depth of skill: the score rate of every step of a chain, one chain per rate "
                        "(60 %%: Garfield/Elias's skill chain; 75 %%: Robertie's complexity number)")
    p.add_argument("--weakest", default=DEPTH_WEAKEST, metavar="BOT",
                   help="depth of skill: the ladder's bottom, any solitaire bot")
    p.add_argument("--dial", default=DEPTH_DIAL, metavar="BOT:PARAM",
                   help=f"depth of skill: the dial the ladder climbs to the optimal bot ({' or '.join(DEPTH_DIALS)})")
    p.add_argument("--candidates", type=number_arg(minimum=1, inclusive=True, integer=True), default=1, metavar="K",
                   help="depth of skill: dial values evaluated at once in each round of a level's root-finding (1: one "
                        "at a time; more cut the rounds in a row on a cluster for more evaluations; the chain depends "
                        "on K, never on the workers; docs/cluster.md)")
    p.add_argument("--workers", type=number_arg(minimum=1, inclusive=True, integer=True), default=2, metavar="N",
                   help="exact evaluations run on N forked processes at once (1: in this process), or with "
                        "--backend dask on a LocalCluster of N workers")


def add_backend_options(p: argparse.ArgumentParser, *, dry_run: bool = False) -> None:
    """Where exact evaluations run (:mod:`harness.exact.cluster`): ``--backend local`` (``--workers``
    forked processes) or ``--backend dask`` (``--scheduler ADDR``, or a LocalCluster of
    ``--workers`` processes); the command opens it with :func:`exact_tasks`."""
    p.add_argument("--backend", choices=("local", "dask"), default="local",
                   help="where exact evaluations run: local processes, or tasks on a Dask cluster (one evaluation "
                        "a task; value tables solved once into the shared --cache-dir; docs/cluster.md)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="--backend dask: the scheduler's address (default: a LocalCluster of --workers processes); "
                        "every worker must see the same --cache-dir and run the same harness code (checked)")
    p.add_argument("--worker-threads", type=number_arg(minimum=1, inclusive=True, integer=True), default=1,
                   metavar="N", help="--backend dask: numba and solver threads of each worker (default 1: a task a core)")
    p.add_argument("--worker-memory", default="3GiB", metavar="SIZE",
                   help="--backend dask: memory limit of each LocalCluster worker")
    if dry_run:
        p.add_argument("--dry-run", action="store_true",
                       help="print how many evaluations (and table solves) the job needs, how many are cached and "
                            "about how much CPU the rest takes, then stop")


def exact_tasks(args: argparse.Namespace, workers: int | None = None) -> Any:
    """The :func:`harness.exact.cluster.open_tasks` of :func:`add_backend_options` (a context manager)."""
    from harness.exact.cluster import open_tasks

    n = getattr(args, "workers", 1) if workers is None else workers
    if args.backend != "dask" and args.scheduler:
        raise UserError("--scheduler is for --backend dask")
    return open_tasks(args.backend, n or 1, args.scheduler, threads=args.worker_threads,
                      memory_limit=args.worker_memory)


def shows_progress(args: argparse.Namespace) -> bool:
    """A progress bar over the tasks: on a terminal's stderr, not with --json or --quiet."""
    return not getattr(args, "json", False) and not getattr(args, "quiet", False) and sys.stderr.isatty()


def depth_settings(args: argparse.Namespace) -> tuple[tuple[float, ...], str, str]:
    """(rates, weakest bot, dial) of :func:`add_depth_options`, the rates checked."""
    from harness.exact.depth import check_rates, dial_of

    try:
        rates = [float(x) for x in args.rates.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--rates: expected numbers like 0.6,0.75, got {args.rates!r}") from None
    dial = args.dial.strip()
    dial_of(dial)  # a known dial, before any work
    return check_rates(rates), args.weakest.strip(), dial


def evaluated_line(rules: Any, spec: str, ev: Any) -> None:
    """A progress line on stdout for one exact evaluation (:class:`harness.exact.evaluate.Evaluation`)
    of a bot on a rule set, with its setting overrides; nothing for one from the cache."""
    if ev.cached:
        return
    at = " ".join(f"{k}={v}" for k, v in rules.overrides.items())
    say(f"evaluated {ev.bot}{f' at {at}' if at else ''}: mean {ev.mean:.6f} ({ev.seconds:.1f} s)")


def new_out_dir(path: str | None, prefix: str) -> Path:
    """``--out`` of a command that writes a directory of its own: the given one (new or empty) or
    ``results/<prefix>-<time>``; made here, so that an unwritable place fails before any work."""
    out = Path(path) if path else Path("results") / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} exists and is not empty; choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc.strerror or exc}") from None
    return out


# ---------------------------------------------------------------------------------------------
# output


def print_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON on stdout (NaN and inf as null)."""
    from harness.util.jsonable import jsonable

    json.dump(jsonable(obj), sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def say(message: str) -> None:
    """A progress line on stdout, flushed at once (a command's running commentary)."""
    print(message, flush=True)


#: The notes said in this process (:func:`first_time`).
_SAID: set[str] = set()


def first_time(note: str) -> bool:
    """Whether ``note`` has not been said yet in this process (and from now on it has): a note that
    every report and compare would repeat (the depth of skill not cached) is said once; the files a
    report writes keep it whole."""
    new = note not in _SAID
    _SAID.add(note)
    return new


class _NotRunLogOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "run_log_only", False)


def _live_bars() -> list[Any]:
    """The progress bars drawn now (:mod:`harness.util.progress`, the runner's): none unless tqdm is loaded."""
    tq = sys.modules.get("tqdm")
    return list(getattr(getattr(tq, "tqdm", None), "_instances", ()))


class _ConsoleHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr, one line a record. While a progress bar is drawn its line has no end yet: a record
    written plainly would be glued to it (the runner's "interrupted" warning after a Ctrl-C, issue
    37), so it goes through tqdm, which clears the bar's line, writes the record and draws the bar
    again below it."""

    def emit(self, record: logging.LogRecord) -> None:
        if not _live_bars():
            super().emit(record)
            return
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=self.stream)
        except Exception:
            self.handleError(record)


def end_bars() -> None:
    """Close every progress bar still drawn (one that a step stopped by Ctrl-C left behind), so that
    what is printed next starts a line of its own instead of ending the bar's."""
    for b in _live_bars():
        b.close()


def console_logging(level: int = logging.WARNING) -> None:
    """Warnings and errors on stderr, one line each (above a progress bar, not on its line), without
    the records marked :data:`RUN_LOG_ONLY`."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", handlers=[_ConsoleHandler()])
    for h in logging.getLogger().handlers:
        if type(h) in (logging.StreamHandler, _ConsoleHandler) and not any(isinstance(f, _NotRunLogOnly)
                                                                            for f in h.filters):
            if h.level == logging.NOTSET:
                h.setLevel(level)
            h.addFilter(_NotRunLogOnly())


__all__ = ["DEPTH_DIAL", "DEPTH_DIALS", "DEPTH_RATES", "DEPTH_WEAKEST", "MAX_LINE_BYTES", "RUN_LOG_ONLY", "HelpFormatter",
           "add_backend_options", "add_cache_dir_option", "add_depth_options", "add_quality_options", "add_quiet_option",
           "add_records_options", "add_set_option", "confidence_arg", "console_logging", "depth_settings", "describe",
           "end_bars", "evaluated_line", "exact_tasks", "examples", "first_time", "listed", "new_out_dir", "number_arg",
           "print_json", "quality_options", "quiet", "record_of", "same_game", "say", "show_bad", "shows_progress",
           "stream_games"]

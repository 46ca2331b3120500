"""Reading game records (untrusted input) from the command line: ``--rules-dir``,
``--max-line-bytes`` and ``--quiet``, streaming a source with its bad games shown on stderr, and
one game picked out of a file or a run directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterable

from harness.commands.options.argtypes import number_arg
from harness.util.errors import UserError

#: ``--max-line-bytes``'s default, :data:`harness.records.record.MAX_LINE_BYTES` (repeated here so that
#: ``--help`` does not import the library; tests/test_untrusted.py checks that they agree).
MAX_LINE_BYTES = 4 << 20


def add_records_options(p: Any) -> None:
    """How game records (untrusted input) are read: ``--rules-dir`` (repeatable),
    ``--max-line-bytes`` and ``--quiet`` (:func:`add_quiet_option`). The command then reads them
    with :func:`stream_games`."""
    p.add_argument(
        "--rules-dir",
        action="append",
        metavar="DIR",
        help="a directory whose rule files the records may name (repeatable); without it a record "
        "names a built-in rule set or carries its rule set inline (a run directory's records "
        "use the run's rules)",
    )
    p.add_argument(
        "--max-line-bytes",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=MAX_LINE_BYTES,
        metavar="N",
        help="a line of a records file (a Parquet row's record) longer than N bytes is a bad game, "
        "skipped without being read",
    )
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
        return RecordStream(
            source,
            max_line_bytes=args.max_line_bytes,
            rules_dirs=args.rules_dir or (),
            quiet=quiet(args),
            on_bad=_show_one if show else None,
        )
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
            ids += [str(r.game) for r in part.games[: max(0, 6 - len(ids))]]
            hits += [
                (rec, lu, rules)
                for rec, lu, rules in zip(part.games, part.lineups, part.rules)
                if same_game(rec.game, game) and (lineup is None or lu == lineup)
            ]
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

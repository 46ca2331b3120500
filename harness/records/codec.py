"""The game codec: every form a played game takes, and every conversion between them, in one place.

A game is held in five forms:

* the engine's :class:`harness.game.loop.Recording`: (B, S, T, R) dice and keep *indices* of the rule
  set's :class:`harness.game.dice.Dice`, boxes, scores, extra bonuses (what ``run --record`` and
  ``run --analyse`` start from);
* the trace of :func:`harness.game.loop.play` (``trace=``): one dict per roll, keep and box (replay);
* a run's records Parquet (``RUN/records/part-*.parquet``): one row per (game, seat, turn), dice
  as *face codes* (:func:`faces_code`), schema :data:`RECORD_KEYS` + rolls + keeps + box +
  :data:`TURN_FIELDS`;
* :class:`GameRecord` (``yatzy-record/1``): the typed object of JSON Lines files and human logs;
* the arrays the analysis kernel walks (:func:`harness.decisions.kernels.walk`): rolls, keeps (N, T,
  R) int16 and boxes (N, T) int8, a row per seat-game (:func:`arrays_of_records`,
  :meth:`RunRecords.arrays`, :func:`arrays_of_recording`).

The conversions::

    Recording -> records Parquet      records_parquet(rec, rules, games, lineup)
    Recording -> Turn objects         turns_of_recording(rec, rules, game, seat)
    Recording -> kernel arrays        arrays_of_recording(rec)
    trace     -> GameRecord           record_from_trace(trace, ...)
    records Parquet -> GameRecord     records_of_run(run_dir, lineup=, games=), RunRecords.record(i)
    records Parquet -> kernel arrays  read_run(run_dir).arrays(lo, hi)   (vectorised: no Turn objects)
    GameRecord -> kernel arrays       arrays_of_records(records, rules)
    GameRecord <-> JSON               GameRecord.to_json / from_json (to_dict / from_dict)

No module outside the codec's own (below) knows the face code or the records Parquet layout. A
per-turn number that a record carries (a score, the extra bonus) is declared once, in
:data:`TURN_FIELDS`, with its :class:`Turn` attribute and JSON key, its Parquet column and type,
the :class:`Recording` array and the trace key it comes from; every conversion above walks that
table. Checking a record against the rules is :mod:`harness.records.validate`'s
(``validate_record``, and ``check_seat_games`` over the arrays of a run).

This module is the codec's one public face; its code lives by topic in
:mod:`harness.records.notation` (the record and its JSON), :mod:`harness.records.convert` (the face
code, the records Parquet written, the recording and the trace as records, the kernel's arrays) and
:mod:`harness.records.runs` (a run's records read back: the one reader of runs).
"""

from __future__ import annotations

from harness.records.convert import (
    PARQUET_OPTIONS,
    RECORD_KEYS,
    KernelArrays,
    arrays_of_recording,
    arrays_of_records,
    decode_faces,
    faces_code,
    numbers_of_records,
    record_from_trace,
    records_parquet,
    turns_of_recording,
)
from harness.records.notation import (
    FORMAT,
    MAX_SEATS,
    NUMBER_LIMIT,
    TURN_FIELDS,
    GameId,
    GameRecord,
    RecordError,
    Seat,
    Turn,
    TurnField,
    json_problem,
    record_rules,
)
from harness.records.runs import NoRecords, RunGames, RunRecords, read_run, records_of_run, run_rules

__all__ = [
    "FORMAT",
    "MAX_SEATS",
    "NUMBER_LIMIT",
    "PARQUET_OPTIONS",
    "RECORD_KEYS",
    "TURN_FIELDS",
    "GameId",
    "GameRecord",
    "KernelArrays",
    "NoRecords",
    "RecordError",
    "RunGames",
    "RunRecords",
    "Seat",
    "Turn",
    "TurnField",
    "arrays_of_recording",
    "arrays_of_records",
    "decode_faces",
    "faces_code",
    "json_problem",
    "numbers_of_records",
    "read_run",
    "record_from_trace",
    "record_rules",
    "records_of_run",
    "records_parquet",
    "run_rules",
    "turns_of_recording",
]

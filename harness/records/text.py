"""The text form of game records, for people: one line per turn (:func:`format_turn`, read back
by :func:`parse_turn`) and a whole game (:func:`format_game`). Also importable from
:mod:`harness.records.record`.
"""

from __future__ import annotations

import re

from harness.util.errors import UserError
from harness.records.notation import GameRecord, Turn, _faces

_SEGMENT = re.compile(r"^\s*([1-9](?:\s+[1-9])*)\s+keep\s+(nothing|-|[1-9](?:\s+[1-9])*)\s*$")
_LAST = re.compile(r"^\s*([1-9](?:\s+[1-9])*)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)\s+(-?\d+)(?:\s+\+(\d+))?\s*$")


def format_turn(turn: Turn) -> str:
    """``6 6 2 4 1 keep 6 6 | 6 6 6 3 5 keep 6 6 6 | 6 6 6 6 2 -> sixes 24`` (`` +100`` for an
    extra bonus when the turn states one)."""
    parts = [f"{_faces(r)} keep {_faces(k)}" for r, k in zip(turn.rolls, turn.keeps)]
    last = f"{_faces(turn.rolls[-1]) if turn.rolls else ''} -> {turn.box} {turn.score}"
    if turn.extra is not None:
        last += f" +{turn.extra}"
    return " | ".join([*parts, last])


def parse_turn(text: str, *, seat: int = 0, column: int = 1, turn: int = 1) -> Turn:
    """The :class:`Turn` that :func:`format_turn` wrote as ``text`` (``keep -`` is read as
    ``keep nothing``); :class:`UserError` naming the part that does not read."""
    *parts, last = text.split("|")
    rolls, keeps = [], []
    for part in parts:
        m = _SEGMENT.match(part)
        if not m:
            raise UserError(
                f"turn text {text.strip()!r}: cannot read {part.strip()!r} (expected FACES keep FACES, or keep nothing)"
            )
        rolls.append(tuple(int(f) for f in m.group(1).split()))
        keeps.append(() if m.group(2) in ("nothing", "-") else tuple(int(f) for f in m.group(2).split()))
    m = _LAST.match(last)
    if not m:
        raise UserError(f"turn text {text.strip()!r}: cannot read {last.strip()!r} (expected FACES -> BOX SCORE)")
    rolls.append(tuple(int(f) for f in m.group(1).split()))
    return Turn(
        seat,
        column,
        turn,
        tuple(rolls),
        tuple(keeps),
        m.group(2),
        int(m.group(3)),
        None if m.group(4) is None else int(m.group(4)),
    )


def format_game(record: GameRecord) -> str:
    """A record for people: a header line, one line per turn, the totals."""
    settings = ", ".join(f"{k}={v}" for k, v in record.settings.items())
    seats = " vs ".join(s.label + (f" ({s.spec})" if s.name and s.spec else "") for s in record.seats)
    head = f"game {record.game}, rules {record.rules}{f' ({settings})' if settings else ''}"
    head += (f", seed {record.seed}" if record.seed is not None else "") + f": {seats}"
    width = max((len(s.label) for s in record.seats), default=0)
    lines = [head]
    for t in record.turns:
        label = record.seats[t.seat].label if 0 <= t.seat < len(record.seats) else "?"
        lines.append(f"column {t.column} turn {t.turn:>2} seat {t.seat} {label:<{width}}  {format_turn(t)}")
    if record.totals is not None:
        lines.append("totals: " + ", ".join(f"{s.label} {v}" for s, v in zip(record.seats, record.totals)))
    if not record.complete:
        lines.append("(partial game)")
    return "\n".join(lines)


__all__ = ["format_game", "format_turn", "parse_turn"]

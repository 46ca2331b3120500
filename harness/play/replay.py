"""Replay one game alone, with a readable turn-by-turn trace (rolls, keeps, box chosen, totals)."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.game import registry
from harness.records.codec import GameRecord, record_from_trace
from harness.game.loop import Results, play
from harness.game.rules import load_rules


def replay(
    rules_name: str,
    settings: list[str] | dict[str, Any],
    seats: list[str],
    seed: int,
    game: int,
    trace: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], Results]:
    """Play game ``game`` alone; returns (trace events, engine Results of that one game).

    ``trace``, when given, receives the events as they happen, so that it holds the game up to
    the failure when a bot raises (:class:`~harness.game.loop.StrategyError`).
    """
    rules = load_rules(rules_name, settings)
    bots = [registry.make(s, rules) for s in seats]
    for b in bots:
        b.prepare()
    trace = [] if trace is None else trace
    res = play(rules, bots, np.array([game], dtype=np.int64), seed, trace=trace)
    return trace, res


def record_of_replay(
    trace: list[dict[str, Any]], res: Results, rules_name: str, seats: list[str], seed: int, game: int
) -> GameRecord:
    """The :class:`harness.records.notation.GameRecord` of a replayed game (``replay``'s trace and Results)."""
    return record_from_trace(
        trace, rules_name=rules_name, rules=res.rules, seats=seats, game=game, seed=seed, totals=res.total[0].tolist()
    )


def format_trace(trace: list[dict[str, Any]], labels: list[str]) -> str:
    """Human-readable lines: one per roll and keep, one per filled box with the running total.

    Turns count from 1 within a column (``column N`` leads every line when the game has more than
    one), as the run's error messages count them.
    """
    lines = []
    columns = any(e.get("column") for e in trace)
    for e in trace:
        who = f"seat {e['seat']} {labels[e['seat']]}"
        col = f"column {e['column'] + 1} " if columns else ""
        head = f"{col}turn {e['turn'] + 1:>2} {who}"
        if e["event"] == "roll":
            lines.append(f"{head}: roll {e['roll'] + 1}: {' '.join(map(str, e['dice']))}")
        elif e["event"] == "keep":
            if e["stop"]:
                lines.append(f"{head}:   stop")
            else:
                kept = " ".join(map(str, e["keep"])) or "nothing"
                lines.append(f"{head}:   keep {kept}")
        else:
            extra = f" +{e['extra']} extra" if e["extra"] else ""
            lines.append(f"{head}: -> {e['box']} = {e['score']}{extra}  (upper {e['upper']}, total {e['total']})")
    return "\n".join(lines)

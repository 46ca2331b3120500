"""Lineups: which entrant sits in which seat, for a single table, a round-robin or a gauntlet.

A lineup is a tuple of entrant labels, one per seat. Every lineup of a run plays the same game
indices, so the dice of (game, seat) are identical in every lineup (common random numbers): swapping
or rotating seats turns each pairing into a duplicate match on identical dice.
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

Lineup = tuple[str, ...]

#: The most seats at one table (the longest lineup): what the engine plays, a run config and a game
#: record accept.
MAX_SEATS = 8


def single(seats: Sequence[str]) -> list[Lineup]:
    """One table exactly as given (a label may sit in several seats)."""
    return [tuple(seats)]


def rotations(table: Sequence[str]) -> list[Lineup]:
    """Every cyclic rotation of one table: each entrant sits in each seat once.

    ``rotations(["a", "b", "c"])`` -> ``[("a","b","c"), ("b","c","a"), ("c","a","b")]``; for two seats
    this is the pair and its swap.
    """
    t = tuple(table)
    return [t[i:] + t[:i] for i in range(len(t))]


def round_robin(entrants: Sequence[str], table: int = 2) -> list[Lineup]:
    """Every ``table``-sized group of distinct entrants (in entrant order), each in all its rotations.

    K entrants at 2-seat tables give K*(K-1) lineups: each pairing twice, seats swapped.
    At N-seat tables: C(K, N) groups times N rotations.
    """
    if not 2 <= table <= len(entrants):
        raise ValueError(f"table size {table} needs 2..{len(entrants)} entrants per table")
    out: list[Lineup] = []
    for group in combinations(entrants, table):
        out.extend(rotations(group))
    return out


def gauntlet(candidate: str, field: Sequence[str]) -> list[Lineup]:
    """The candidate against each member of the field at a 2-seat table, seats swapped."""
    out: list[Lineup] = []
    for other in field:
        out.extend([(candidate, other), (other, candidate)])
    return out

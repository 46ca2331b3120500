"""The rule sets' locks of a serving process: the solver bots of a rule set share decision caches
(strategies/solver.py) that two threads must not fill at once, so the threads of a process working
on one rule set (a lane's, the event loop's single decisions) take its lock in turn, block by block."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from harness.game.rules import RuleSet


class TurnLock:
    """A lock that urgent holders take first: a thread working through a batch block by block
    releases it after each block, and a plain lock would let it take the lock straight back (the
    waiting thread wakes too late), so a single decision of the cheap lane would wait for the whole
    batch. Here a waiting urgent holder goes before any plain one."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._urgent = 0

    @contextmanager
    def hold(self, urgent: bool = False) -> Iterator[None]:
        with self._cond:
            self._urgent += urgent
            try:
                while self._held or (not urgent and self._urgent):
                    self._cond.wait()
            finally:
                self._urgent -= urgent
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()


_LOCKS: dict[str, TurnLock] = {}
_LOCKS_LOCK = threading.Lock()


def after_fork() -> None:
    """In a process forked from a serving one: new rule-set locks (a lock another thread of the
    parent held at the fork would stay held here forever)."""
    global _LOCKS_LOCK
    _LOCKS_LOCK = threading.Lock()
    _LOCKS.clear()


def rules_lock(rules: RuleSet) -> TurnLock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(rules.digest, TurnLock())

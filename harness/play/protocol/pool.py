"""Engine processes kept running between runs (a calibration's evaluated values): idle processes
by command, each with its hello, declared options and what its last ``newgame`` set.

:func:`reuse_engines` turns it on; the referee's engine bot (:mod:`harness.play.protocol.referee`)
then takes an idle process of its command instead of starting one, sends ``newgame`` only when its
rules or options differ, and gives the process back after each batch of decisions.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any, Iterator

from harness.play.protocol import messages as msgs
from harness.play.protocol import options as opts
from harness.play.protocol.http import HttpEngine
from harness.play.protocol.stdio import StdioEngine


@dataclass(eq=False)
class Pooled:
    """A started engine: its connection, its hello, its declared options, and the (rules, options,
    time) its last newgame set (None: none sent yet)."""

    client: StdioEngine | HttpEngine
    hello: dict[str, Any]
    options: dict[str, opts.Option]
    state: tuple[Any, ...] | None = None


class _EnginePool:
    """Idle engine processes of this process by command (:func:`reuse_engines`)."""

    def __init__(self) -> None:
        self.depth = 0
        self.pid = os.getpid()
        self.idle: dict[tuple[Any, ...], list[Pooled]] = {}

    @property
    def active(self) -> bool:
        return self.depth > 0

    def _mine(self) -> None:
        if self.pid != os.getpid():  # a forked worker: the parent's processes are not ours to use
            self.pid, self.idle = os.getpid(), {}

    def take(self, key: tuple[Any, ...], bot: Any) -> Pooled | None:
        """An idle process of ``key``, preferring one already playing ``bot``'s rules and options."""
        self._mine()
        free = self.idle.get(key) or []
        for e in free:
            if isinstance(e.client, StdioEngine) and not e.client.alive():
                free.remove(e)
                e.client.kill()
        if not free:
            return None
        for i, e in enumerate(free):
            if e.state is not None and e.state == bot.state_for(e):
                return free.pop(i)
        return free.pop()

    def give(self, key: tuple[Any, ...], entry: Pooled) -> None:
        self._mine()
        self.idle.setdefault(key, []).append(entry)

    def close_all(self) -> None:
        self._mine()
        for entries in self.idle.values():
            for e in entries:
                if isinstance(e.client, StdioEngine):
                    e.client.quit(msgs.dumps({"type": "quit"}))
                else:
                    e.client.close()
        self.idle = {}


POOL = _EnginePool()


@contextlib.contextmanager
def reuse_engines() -> Iterator[None]:
    """Keep engine processes running between runs in this process (and in workers forked meanwhile):
    a bot that is done with its engine leaves it idle, and the next bot of the same command takes
    it, sending ``newgame`` only when its rules or options differ. On exit the idle engines of this
    process are asked to quit. A calibration plays every evaluated value this way."""
    POOL.depth += 1
    try:
        yield
    finally:
        POOL.depth -= 1
        if not POOL.depth:
            POOL.close_all()

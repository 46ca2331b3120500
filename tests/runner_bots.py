"""Bots for the runner tests: one that fails at a known game, one that kills or interrupts its runner, one that logs.

Imported by tests/test_runner.py and by the subprocess scripts it starts, so both register them.
Each plays exactly like the ``timeout`` bot unless armed, so an armed run and a clean run of the
same config give the same rows.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import numpy as np

from harness.game.registry import available, register
from harness.game.strategy import TurnView
from strategies.greedy import TimeoutBot

log = logging.getLogger("tests.runner_bots")


def _register(cls):
    return cls if available().get(cls.name) is cls else register(cls)


@_register
class FaultyBot(TimeoutBot):
    """Raises ZeroDivisionError on its keep decision in game ``FAIL_AT`` while ``armed``."""

    name = "faulty"
    description = "test bot: fails in one game"
    FAIL_AT = 137
    armed = True

    def keep(self, view: TurnView) -> np.ndarray:
        if type(self).armed and view.turn == 3 and np.any(view.games == self.FAIL_AT):
            return self._explode()
        return super().keep(view)

    def _explode(self) -> np.ndarray:
        return np.array([1 // 0])


@_register
class TripwireBot(TimeoutBot):
    """Sends a signal to the runner process when it plays game ``$YH_TRIP_GAME`` and the file
    ``$YH_TRIP_FILE`` exists (deleting it first, so a resumed run plays through)."""

    name = "tripwire"
    description = "test bot: signals its runner once"

    def choose(self, view: TurnView) -> np.ndarray:
        trip = os.environ.get("YH_TRIP_FILE")
        if view.turn == 0 and trip and np.any(view.games == int(os.environ.get("YH_TRIP_GAME", "-1"))):
            marker = Path(trip)
            if marker.exists():
                marker.unlink()
                sig = signal.SIGKILL if os.environ.get("YH_TRIP_SIGNAL") == "KILL" else signal.SIGINT
                os.kill(os.getppid() if os.environ.get("YH_TRIP_PARENT") else os.getpid(), sig)
                if sig == signal.SIGKILL:
                    time.sleep(30)  # a killed runner takes this worker with it (PR_SET_PDEATHSIG)
        return super().choose(view)


@_register
class ChattyBot(TimeoutBot):
    """Logs one warning per batch from wherever it plays (to test the worker log path)."""

    name = "chatty"
    description = "test bot: logs from its worker"

    def choose(self, view: TurnView) -> np.ndarray:
        if view.turn == 0:
            log.warning(
                "chatty bot playing games %d..%d in pid %d", int(view.games[0]), int(view.games[-1]), os.getpid()
            )
        return super().choose(view)

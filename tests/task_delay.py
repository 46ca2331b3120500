"""The tests' task hook (:data:`harness.jobs.cluster.TASK_HOOK`): hold chosen tasks back so that they
finish out of order, or so that a worker can be killed while it runs one."""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Delay:
    """Sleep ``seconds`` before a task whose name contains ``text``; with no text, before every task
    whose name's crc32 is even (about half of them, the same half in every process)."""

    seconds: float
    text: str = ""

    def __call__(self, name: str) -> None:
        if (self.text in name) if self.text else zlib.crc32(name.encode()) % 2 == 0:
            time.sleep(self.seconds)

"""The Dask worker plugin of exact jobs (:mod:`harness.jobs.cluster`): imports ``distributed``, so it is loaded only with ``--backend dask``."""

from __future__ import annotations

import os
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin


class Setup(WorkerPlugin):
    """Environment variables of every worker (the cache directory, the threads), set when it starts:
    a worker the nanny restarts after a crash too, since the scheduler keeps the plugin."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)

    def setup(self, worker: Any) -> None:
        os.environ.update(self.env)

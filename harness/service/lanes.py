"""The app's own queues of compute work: cheap and expensive requests in separate lanes of threads.

The decision kernels release the GIL, so a lane is a few threads of this process: a cheap request
(a single decision, a small batch) never waits behind an expensive one (a batch of thousands, a
slow bot), which runs on its own lane's threads. Each lane counts what it holds, requests and
their estimated seconds of work, so a request is refused at once, before any work, when it cannot
finish within its budget: over it on its own (503 ``over_budget``), or once it has waited for the
work ahead of it (503 ``busy``), or when the lane's queue is full (503 ``queue_full``); the two
last carry ``Retry-After``. The estimate comes from each served player's cost, measured at warm-up
(:class:`harness.service.serve.Cost`); a request under way checks its deadline between blocks of
positions, so a wrong estimate costs at most one block past the budget.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.service.serve import RequestError

#: A request estimated at most this many seconds of work runs on the cheap lane.
CHEAP_SECONDS = 0.02
#: Requests a lane holds, queued and running, before it refuses more (503 queue_full).
QUEUE = 64


class Busy(RequestError):
    """A refusal that a retry may cure: 503 with ``retry_after`` seconds."""

    def __init__(self, error: str, message: str, retry_after: float) -> None:
        super().__init__(503, error, message)
        self.retry_after = max(1, math.ceil(retry_after))


@dataclass
class Lane:
    """Threads of one class of work and what they hold: requests and their estimated seconds."""

    name: str
    threads: int
    cap: int
    held: int = 0
    seconds: float = 0.0
    executor: ThreadPoolExecutor = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(self.threads, thread_name_prefix=f"lane-{self.name}")

    def wait(self) -> float:
        """The estimated seconds a request admitted now waits before a thread takes it."""
        return self.seconds / self.threads


class Lanes:
    """The cheap and the expensive lane, and the admission rule of a request."""

    def __init__(
        self,
        *,
        cheap_threads: int = 1,
        expensive_threads: int = 1,
        queue: int = QUEUE,
        cheap_seconds: float = CHEAP_SECONDS,
    ) -> None:
        self.cheap = Lane("cheap", cheap_threads, queue)
        self.expensive = Lane("expensive", expensive_threads, queue)
        self.cheap_seconds = cheap_seconds

    def lanes(self) -> tuple[Lane, Lane]:
        return self.cheap, self.expensive

    def pick(self, estimate: float) -> Lane:
        return self.cheap if estimate <= self.cheap_seconds else self.expensive

    def admit(self, estimate: float, budget: float) -> Lane:
        """The lane a request of ``estimate`` seconds runs on, its place taken; a refusal (a
        :class:`RequestError` or :class:`Busy`) when it cannot finish within ``budget`` seconds."""
        if estimate > budget:
            raise RequestError(
                503,
                "over_budget",
                f"this request is about {estimate * 1000:,.0f} ms of work, over its "
                f"budget of {budget * 1000:,.0f} ms; send smaller batches",
            )
        lane = self.pick(estimate)
        with lane._lock:
            wait = lane.wait()
            if lane.held >= lane.cap:
                raise Busy("queue_full", f"the {lane.name} lane holds {lane.held} requests, its most", wait + estimate)
            if wait + estimate > budget:
                raise Busy(
                    "busy",
                    f"this request would wait about {wait * 1000:,.0f} ms for the work ahead of it, "
                    f"past its budget of {budget * 1000:,.0f} ms",
                    wait,
                )
            lane.held += 1
            lane.seconds += estimate
        return lane

    def submit(self, lane: Lane, estimate: float, context: contextvars.Context, work: Callable[[], Any]) -> Future[Any]:
        """Run ``work`` in ``context`` on ``lane``'s threads (its place taken by :meth:`admit`); the
        place is freed when the work ends or is cancelled before it starts."""

        def free(_: Any) -> None:
            with lane._lock:
                lane.held -= 1
                lane.seconds = max(lane.seconds - estimate, 0.0)

        fut = lane.executor.submit(context.run, work)
        fut.add_done_callback(free)
        return fut

    async def run(self, lane: Lane, estimate: float, work: Callable[[], Any]) -> Any:
        """:meth:`submit` from the event loop, awaited; the place is freed when the work ends, not
        when the client leaves. The work runs in the request's context: its log lines carry its id."""
        return await asyncio.wrap_future(self.submit(lane, estimate, contextvars.copy_context(), work))

    def close(self, wait: bool = False) -> None:
        for lane in self.lanes():
            lane.executor.shutdown(wait=wait, cancel_futures=not wait)

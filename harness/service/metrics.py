"""What ``/metrics`` exposes, in the Prometheus text format (``prometheus-client``).

Every label takes its values from a closed set, so a client cannot make a new time series: the
route (one of the app's, else ``other``), the status code, the served player's name (a level's
name, or ``bot:`` and a served bot's canonical spec: never a request's own text), the lane, and a
refusal's stable error id. With several worker processes (``serve --workers N``) the command points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory and each scrape sums the workers' files
(prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST, multiprocess

ROUTES = ("/decide", "/advise", "/levels", "/health", "/ready", "/metrics", "/openapi.json", "/docs")
#: Latency buckets (seconds): a single decision is about 2 ms, a batch of 10,000 under a second.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    """The server's metrics, on a registry of their own (one per app)."""

    def __init__(self) -> None:
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "yatzy_serve_requests", "HTTP requests answered, by route and status", ["route", "status"], registry=r
        )
        self.seconds = Histogram(
            "yatzy_serve_request_seconds",
            "Time from a request's start to its answer, by route and served player",
            ["route", "served"],
            buckets=BUCKETS,
            registry=r,
        )
        self.positions = Counter(
            "yatzy_serve_positions", "Positions answered, by served player", ["served"], registry=r
        )
        self.refused = Counter(
            "yatzy_serve_refused",
            "Requests refused before or during their work, by error id "
            "(over_budget, busy, queue_full, deadline, body_timeout, unauthorised, not_served, ...)",
            ["error"],
            registry=r,
        )
        self.held = Gauge(
            "yatzy_serve_lane_requests",
            "Requests a lane holds, queued or running",
            ["lane"],
            registry=r,
            multiprocess_mode="livesum",
        )
        self.ready = Gauge(
            "yatzy_serve_ready", "1 once every served table and kernel is warm", registry=r, multiprocess_mode="livemin"
        )
        self.reloads = Counter("yatzy_serve_reloads", "Levels-file reloads (SIGHUP), by result", ["result"], registry=r)

    def route(self, path: str) -> str:
        return path if path in ROUTES else "other"

    def exposition(self) -> bytes:
        """The text a scrape gets: this process's metrics, or every worker's in multiprocess mode."""
        if self.multiprocess:
            reg = CollectorRegistry()
            multiprocess.MultiProcessCollector(reg)  # type: ignore[no-untyped-call]
            return generate_latest(reg)
        return generate_latest(self.registry)

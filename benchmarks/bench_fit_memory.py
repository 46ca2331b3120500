"""Where ``fit``'s memory goes: one ``fit_records`` of a log in this process, its RSS sampled every 50 ms
and the peak printed per phase (reading the log into the store, each player's fit, its per-kind fits
and regret check, the pooled fit), with what the store holds when the fit starts. Run it under
``/usr/bin/time -v`` for the process's peak; ``PYTHONPATH=TREE`` measures another checkout (the store
line reads the attributes of the store of before, ``ChoicesBuilder``, too)::

    PYTHONPATH=. /usr/bin/time -v python benchmarks/bench_fit_memory.py results/bench-biglogs/run-100000 \\
        solver:temperature
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from harness.players import fit as F  # noqa: E402
from harness.records.record import RecordStream  # noqa: E402


def rss() -> float:
    """This process's resident set, MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("model")
    ap.add_argument("--max-memory", type=float, default=None, help="GiB (default: fit's)")
    args = ap.parse_args(argv)
    phase, peaks, order = ["start"], {}, []

    def sample() -> None:
        while True:
            r, p = rss(), phase[0]
            if p not in peaks:
                peaks[p] = r
                order.append(p)
            peaks[p] = max(peaks[p], r)
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()

    def enter(p: str) -> None:
        time.sleep(0.1)
        phase[0] = p
        print(f"{time.strftime('%H:%M:%S')} {p} rss {rss():.0f} MiB", flush=True)

    def also(p: str) -> None:
        phase[0] = phase[0].split(": ")[0] + ": " + p

    fit, fit_choices, regret_test, mle = F.report._Store.fit, F.report.fit_choices, F.player._regret_test, F.player.mle

    def store_fit(self, *a, **k):
        b = self.b
        if hasattr(b, "finish"):  # DecisionStore
            b.finish()
            print(
                f"store: {b.rows:,} rows, {b.decisions:,} decisions, {b.options:,} options, {b.segments} "
                f"segments; {b.memory_bytes / 2**20:,.0f} MiB in memory, {b.spilled_bytes / 2**20:,.0f} MiB in "
                "the scratch file",
                flush=True,
            )
        else:  # ChoicesBuilder, before
            print(
                f"store: {b.rows:,} rows, {int(b.w.a[: b.rows].sum()):,} decisions, {b.r.n:,} options; "
                f"{b.nbytes / 2**20:,.0f} MiB allocated (options {b.r.a.nbytes / 2**20:,.0f}, hash table "
                f"{b.table.nbytes / 2**20:,.0f}, hashes {b.hashes.a.nbytes / 2**20:,.0f}, ptr "
                f"{b.ptr.a.nbytes / 2**20:,.0f})",
                flush=True,
            )
        enter("fit: the players' choices")
        return fit(self, *a, **k)

    def player_fit(ch, model, player="", *a, **k):
        enter(f"fit of {player} ({len(ch):,} rows)")
        return fit_choices(ch, model, player, *a, **k)

    def regret(*a, **k):
        also("regret check")
        return regret_test(*a, **k)

    def per_kind(lik, model):
        if model == "solver:temperature,blunder" and "per-kind" not in phase[0]:
            also("per-kind fits")
        return mle(lik, model)

    # each patched in the topic module that looks it up
    F.report._Store.fit, F.report.fit_choices, F.player._regret_test = store_fit, player_fit, regret
    F.player.mle = F.choice.mle = per_kind
    enter("reading the log into the store")
    options = F.FitOptions() if args.max_memory is None else F.FitOptions(max_memory=int(args.max_memory * 2**30))
    F.fit_records(RecordStream(args.source), args.model, options=options)
    enter("done")
    time.sleep(0.2)
    print("| phase | peak RSS |\n|---|---:|")
    for p in order:
        print(f"| {p} | {peaks[p]:,.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

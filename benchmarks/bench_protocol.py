"""The engine protocol's own cost: the harness's CPU per decision against a null engine.

The null engine (``tests/engines/null_engine.py``) parses every request and answers the first
legal option at once. One seat plays ``--games`` games on ``--rules`` in this process, in
batches of ``--batch`` games (every decision of a batch is one round trip), once through the
engine and once with an in-process bot that answers the same options (so the games, and the
engine's own work in between, are the same). Figures, per decision:

- harness CPU: this process's user + system CPU time (the engine's process is not counted);
- protocol overhead: that, less the same games played by the in-process twin;
- wall: elapsed time of the engine run (includes the engine's own parsing and answering).

    python benchmarks/bench_protocol.py                      # batch 1,000 and 1 (the unbatched round trip)
    python benchmarks/bench_protocol.py --batch 100,1000 --games 20000 --repeat 3
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.game.loop import play  # noqa: E402
from harness.game.registry import make  # noqa: E402
from harness.game.rules import load_rules  # noqa: E402
from tests.engines.twin import NullTwin  # noqa: E402

NULL = ROOT / "tests" / "engines" / "null_engine.py"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(bot: Any, rules, games: int, batch: int, seed: int) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``games`` games in batches of ``batch``."""
    c0, t0 = cpu(), time.perf_counter()
    for start in range(0, games, batch):
        play(rules, [bot], np.arange(start, min(start + batch, games), dtype=np.int64), seed)
    return cpu() - c0, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--batch", default="1000,1", help="batch sizes (games per play call), comma-separated")
    ap.add_argument("--repeat", type=int, default=3, help="take the best of this many runs")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rules = load_rules(args.rules)
    engine = make(f'engine:cmd="{sys.executable} {NULL}",name=null', rules)
    twin = NullTwin(rules)
    play(rules, [engine], np.arange(2, dtype=np.int64), args.seed)  # start the engine, compile kernels
    play(rules, [twin], np.arange(2, dtype=np.int64), args.seed)
    print(
        "| rules | batch (games) | decisions | harness CPU / decision | protocol overhead / decision "
        "| wall / decision | faults |"
    )
    print("|---|---|---|---|---|---|---|")
    for batch in (int(x) for x in args.batch.split(",")):
        games = args.games if batch > 1 else min(args.games, 1000)
        best: tuple[float, float, float] | None = None
        for _ in range(args.repeat):
            before = engine.counts.copy()
            ec, ew = measure(engine, rules, games, batch, args.seed)
            tc, _ = measure(twin, rules, games, batch, args.seed)
            got = engine.counts - before
            decisions = int(got[0])
            row = (ec / decisions, (ec - tc) / decisions, ew / decisions)
            best = row if best is None or row[0] < best[0] else best
            faults = int(got[1:].sum())
        assert best is not None
        print(
            f"| {args.rules} | {batch:,} | {decisions:,} | {1e6 * best[0]:.2f} us | {1e6 * best[1]:.2f} us "
            f"| {1e6 * best[2]:.2f} us | {faults} |"
        )
    engine.close()


if __name__ == "__main__":
    main()

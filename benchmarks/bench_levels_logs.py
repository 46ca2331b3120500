"""Levels tuned against game logs, then played: does the level land within its interval of the target?

A synthetic population of mixed families on Generala (solver dials, blunders, mixtures of both,
greedy, bonus) is recorded (two runs of eight seats on other seeds, merged into one records file),
a level is tuned against those logs (``harness.opponents.tune``: exact), and the tuned spec is then
*played* against every player of the population (``run``, a gauntlet: the level against each
player at a two-seat table, both seatings, sampled). The sampled score rate (every player weighted
as in the logs: equal games each) is compared with the target and with the level's interval from
the logs, and with the exact truth against these players (both solitaire: the mean over the players
of the exact score rate of the level against each). Replicates redraw the logs (other seeds); the
figures are printed as a table for
BENCHMARKS.md::

    python benchmarks/bench_levels_logs.py [--replicates 3] [--games-per-player 40] [--play 2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.calibrate import label_of  # noqa: E402
from harness.codec import records_of_run  # noqa: E402
from harness.evaluate import evaluate, score_rate, versus  # noqa: E402
from harness.levels import Level, Levels  # noqa: E402
from harness.opponents import read_logged, tune  # noqa: E402
from harness.record import RecordStream, write_records_jsonl  # noqa: E402
from harness.rules import load_rules  # noqa: E402
from harness.runconfig import RunConfig  # noqa: E402
from harness.runner import run  # noqa: E402
from harness.summary import summarize  # noqa: E402

TABLES = (
    ("solver:temperature=0.3", "solver:temperature=0.7", "solver:temperature=1.5", "solver:temperature=2.5",
     "solver:blunder=0.05", "solver:temperature=0.5,blunder=0.2", "greedy", "bonus"),
    ("solver:temperature=0.5", "solver:temperature=1", "solver:temperature=2", "solver:temperature=3",
     "solver:blunder=0.2", "solver:temperature=1,blunder=0.1", "bonus:weight=0.5", "solver:blunder=0.1"),
)
TARGETS = (("casual", 0.4), ("strong", 0.55))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--games-per-player", type=int, default=40, help="logged games of each player")
    ap.add_argument("--play", type=int, default=2000, help="game pairs of the level against each player")
    a = ap.parse_args()
    rules = load_rules("generala")
    lv = Levels("bench", "generala", (), "solver", "temperature", 0.0, 10.0, 2, 1, None,
                tuple(Level(n, target_win_rate=t) for n, t in TARGETS))
    print("replicate  level   target  dial       logs: score rate [95 %]   var. red.  played (sampled)               "
          "exact      target in logs CI  played in logs CI  exact in logs CI")
    inside = played_in = exact_in = total = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.replicates):
            recs = []
            for k, seats in enumerate(TABLES):
                d = Path(tmp) / f"logs-{r}-{k}"
                run(RunConfig(seats=seats, rules="generala", games=a.games_per_player, seed=1000 + 10 * r + k,
                              workers=1, record=True), d)
                recs += [rec for _, rec in records_of_run(d)]
            path = write_records_jsonl(Path(tmp) / f"logs-{r}.jsonl", recs)
            logs = read_logged(RecordStream(str(path)), rules)
            res = tune(lv, logs)
            players = [p for t in TABLES for p in t]
            for t in res.tuned:
                d = Path(tmp) / f"play-{r}-{t.level.name}"
                run(RunConfig(mode="gauntlet", candidate=t.spec, entrants=tuple(players), rules="generala",
                              games=a.play, seed=7 + r, workers=0), d)
                s = summarize(d)
                cand = label_of(t.spec, "generala", ())
                rates = []
                for p in s.pairings:
                    if p.b is None or cand not in (p.a, p.b):
                        continue
                    w, dr, lo = (p.wins, p.draws, p.losses) if p.a == cand else (p.losses, p.draws, p.wins)
                    rates.append((w + 0.5 * dr) / (w + dr + lo))
                played = float(np.mean(rates))
                # the exact truth against these players: both are solitaire, their finals independent
                lev = evaluate(rules, t.spec)
                truth = float(np.mean([score_rate(*versus(lev, evaluate(rules, q))[:2]) for q in players]))
                # the sampled rate's interval: per-player rates' spread over the players plus the games' noise
                se = float(np.std(rates, ddof=1) / np.sqrt(len(rates)))
                ag = t.against.rate
                target = t.level.target_win_rate
                ok_t = ag.lo <= target <= ag.hi
                ok_p = ag.lo <= played <= ag.hi
                ok_x = ag.lo <= truth <= ag.hi
                exact_in += ok_x
                inside += ok_t
                played_in += ok_p
                total += 1
                print(f"{r:<9}  {t.level.name:<6}  {100 * target:4.0f} %  {t.value:9.6f}  {100 * ag.mean:6.2f} % "
                      f"[{100 * ag.lo:5.2f}, {100 * ag.hi:5.2f}]   {ag.variance_reduction:5.2f}x     "
                      f"{100 * played:6.2f} % (players' spread ±{196 * se:.2f})   {100 * truth:6.2f} %    "
                      f"{'yes' if ok_t else 'NO':<17}  {'yes' if ok_p else 'NO':<17}  {'yes' if ok_x else 'NO'}",
                      flush=True)
                assert len(rates) == len(players), (len(rates), len(players))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{played_in} of {total} played levels within the logs' interval ({exact_in} exact); target inside "
          f"{inside} of {total}; "
          f"{len(TABLES) * 8} players x {a.games_per_player} logged games; wall {time.time() - t0:.0f} s, CPU "
          f"{ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime:.0f} s, peak RSS {ru.ru_maxrss / 1024:.0f} MB; "
          f"cores {os.cpu_count()}")


if __name__ == "__main__":
    main()

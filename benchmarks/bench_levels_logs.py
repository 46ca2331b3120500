"""Levels tuned against game logs, then played: does the level land within its interval of the target?

A synthetic population of mixed families on Generala (solver dials, blunders, mixtures of both,
greedy, bonus) is recorded (two runs of eight seats on other seeds, merged into one records file,
the game ids made unique),
a level is tuned against those logs (``harness.players.opponents.tune``: exact), and the tuned spec is then
*played* against every player of the population (``run``, a gauntlet: the level against each
player at a two-seat table, both seatings, sampled). The sampled score rate (every player weighted
as in the logs: equal games each) is compared with the target and with the level's interval from
the logs, and with the exact truth against these players (both solitaire: the mean over the players
of the exact score rate of the level against each). Replicates redraw the logs (other seeds); the
figures are printed as a table for
BENCHMARKS.md::

    python benchmarks/bench_levels_logs.py [--replicates 3] [--games-per-player 40] [--play 2000 | --play 0]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.players.responses import label_of  # noqa: E402
from harness.records.codec import records_of_run  # noqa: E402
from harness.util.errors import UserError  # noqa: E402
from harness.exact.evaluate import evaluate, score_rate, versus  # noqa: E402
from harness.players.levels import Level, Levels  # noqa: E402
from harness.players.logged import read_logged  # noqa: E402
from harness.players.opponents import tune  # noqa: E402
from harness.records.record import RecordStream, write_records_jsonl  # noqa: E402
from harness.game.rules import load_rules  # noqa: E402
from harness.play.runconfig import RunConfig  # noqa: E402
from harness.play.runner import run  # noqa: E402
from harness.reports.summary import summarize  # noqa: E402

TABLES = (
    (
        "solver:temperature=0.3",
        "solver:temperature=0.7",
        "solver:temperature=1.5",
        "solver:temperature=2.5",
        "solver:blunder=0.05",
        "solver:temperature=0.5,blunder=0.2",
        "greedy",
        "bonus",
    ),
    (
        "solver:temperature=0.5",
        "solver:temperature=1",
        "solver:temperature=2",
        "solver:temperature=3",
        "solver:blunder=0.2",
        "solver:temperature=1,blunder=0.1",
        "bonus:weight=0.5",
        "solver:blunder=0.1",
    ),
)
TARGETS = (("casual", 0.4), ("strong", 0.55))


def played_rate(spec: str, players: list[str], games: int, seed: int, out: Path) -> tuple[float, float]:
    """The level ``spec`` played against each player (a gauntlet, both seatings, ``games`` pairs each):
    the mean over the players of its sampled score rate, and the standard error of that mean from
    the players' spread."""
    run(
        RunConfig(
            mode="gauntlet",
            candidate=spec,
            entrants=tuple(players),
            rules="generala",
            games=games,
            seed=seed,
            workers=0,
        ),
        out,
    )
    cand = label_of(spec, "generala", ())
    rates = []
    for p in summarize(out).pairings:
        if p.b is not None and cand in (p.a, p.b):
            w, dr, lo = (p.wins, p.draws, p.losses) if p.a == cand else (p.losses, p.draws, p.wins)
            rates.append((w + 0.5 * dr) / (w + dr + lo))
    assert len(rates) == len(players), (len(rates), len(players))
    return float(np.mean(rates)), float(np.std(rates, ddof=1) / np.sqrt(len(rates)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--games-per-player", type=int, default=40, help="logged games of each player")
    ap.add_argument(
        "--play", type=int, default=2000, help="game pairs of the level against each player (0: not played)"
    )
    a = ap.parse_args()
    rules = load_rules("generala")
    lv = Levels(
        "bench",
        "generala",
        (),
        "solver",
        "temperature",
        0.0,
        10.0,
        2,
        1,
        None,
        tuple(Level(n, target_win_rate=t) for n, t in TARGETS),
    )
    players = [p for t in TABLES for p in t]
    print(
        "replicate  level   target  dial       logs: population estimate [95 %]  var. red.  played (sampled)"
        "           exact vs these players  in the logs' interval: target / played / exact"
    )
    hits = {"target": 0, "played": 0, "exact": 0}
    total = unreachable = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.replicates):
            recs = []
            for k, seats in enumerate(TABLES):
                d = Path(tmp) / f"logs-{r}-{k}"
                run(
                    RunConfig(
                        seats=seats,
                        rules="generala",
                        games=a.games_per_player,
                        seed=1000 + 10 * r + k,
                        workers=1,
                        record=True,
                    ),
                    d,
                )
                # game ids unique over the file (a repeated id is a bad game): the table's number first
                recs += [replace(rec, game=f"{k}-{rec.game}") for _, rec in records_of_run(d)]
            path = write_records_jsonl(Path(tmp) / f"logs-{r}.jsonl", recs)
            logs = read_logged(RecordStream(str(path)), rules)
            assert logs.players == len(players) and not logs.bad, (logs.players, logs.bad[:1])
            try:
                res = tune(lv, logs)
            except UserError as exc:  # a target the dial cannot reach against these logs: said, not hidden
                print(f"{r:<9}  {exc}", flush=True)
                unreachable += 1
                continue
            for t in res.tuned:
                lev = evaluate(rules, t.spec)
                # the exact truth against these players: both solitaire, their finals independent
                truth = float(np.mean([score_rate(*versus(lev, evaluate(rules, q))[:2]) for q in players]))
                played = (
                    played_rate(t.spec, players, a.play, 7 + r, Path(tmp) / f"play-{r}-{t.level.name}")
                    if a.play
                    else None
                )
                ag = t.against.rate
                got = {"target": t.level.target_win_rate, "played": played[0] if played else None, "exact": truth}
                ok = {k: v is not None and ag.lo <= v <= ag.hi for k, v in got.items()}
                for k in hits:
                    hits[k] += ok[k]
                total += 1
                shown = f"{100 * played[0]:6.2f} % (±{196 * played[1]:.2f})" if played else "not played      "
                print(
                    f"{r:<9}  {t.level.name:<6}  {100 * got['target']:4.0f} %  {t.value:9.6f}  "
                    f"{100 * ag.mean:6.2f} % [{100 * ag.lo:5.2f}, {100 * ag.hi:5.2f}]           "
                    f"{ag.variance_reduction:5.2f}x     {shown}   {100 * truth:6.2f} %                 "
                    + " / ".join("-" if got[k] is None else "yes" if ok[k] else "NO" for k in hits),
                    flush=True,
                )
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"in the logs' interval, of {total} levels: target {hits['target']}, played {hits['played']}"
        f"{'' if a.play else ' (not played)'}, exact {hits['exact']}; {unreachable} replicate(s) with a target out "
        f"of reach; {len(players)} players x {a.games_per_player} "
        f"logged games; wall {time.time() - t0:.0f} s, "
        f"CPU {ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime:.0f} s, "
        f"peak RSS {ru.ru_maxrss / 1024:.0f} MB; cores {os.cpu_count()}"
    )


if __name__ == "__main__":
    main()

"""Skill benchmark: the built-in bots' exact regret per decision, the figures behind ``analyse``'s rating scale.

Run from the repository root::

    python benchmarks/bench_skill.py                      # scandinavian, 2,000 games per bot
    python benchmarks/bench_skill.py --rules standard --games 500

Each bot plays the same games alone (same seed: identical dice), recorded by the engine, and every
decision is priced by :class:`harness.decisions.analysis.Analyser` and folded by
:class:`harness.decisions.skill.PlayerTally`, as ``yatzy-harness analyse`` does. Prints a Markdown table: the
regret per decision (the rating's measure) with the band :func:`harness.decisions.skill.rating` gives it,
regret per game, decisions per game, error rate, and the luck-adjusted mean with its 95 % CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from harness.game import registry
from harness.decisions.analysis import Analyser
from harness.game.loop import play
from harness.game.rules import load_rules
from harness.decisions.skill import PlayerTally

BOTS = (
    "solver",
    "solver:temperature=0.25",
    "solver:temperature=0.5",
    "bonus",
    "solver:temperature=1",
    "solver:blunder=0.1",
    "greedy",
    "solver:temperature=2",
    "random",
    "timeout",
)


def tally_of(spec: str, an: Analyser, games: int, seed: int, chunk: int) -> tuple[PlayerTally, float]:
    rules = an.rules
    bot = registry.make(spec, rules)
    bot.prepare()
    t = time.perf_counter()
    tally = PlayerTally(spec, rules.name, worst=0)
    for a in range(0, games, chunk):
        res = play(rules, [bot], np.arange(a, min(a + chunk, games)), seed, record=True)
        rec = res.recording
        sums, d = an.walk(rec.rolls[:, 0], rec.keeps[:, 0], rec.boxes[:, 0], decisions=True)
        kind = np.where(d["kind"] == 0, 0, np.where(d["upper"], 1, 2))  # harness.decisions.skill.REGRET_KINDS
        cut = np.searchsorted(d["seatgame"], np.arange(res.total.shape[0] + 1))
        for g in range(res.total.shape[0]):
            final, luck = sums["final"][g], sums["luck"][g]
            tally.add(
                final,
                luck,
                final - luck,
                a + g,
                d["regret"][cut[g] : cut[g + 1]],
                kind[cut[g] : cut[g + 1]],
                lambda j: None,
            )  # worst=0: no decision is named
    return tally, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=500)
    ap.add_argument("--bots", default=",".join(BOTS), help="comma-separated bot specs (';' between parameters)")
    args = ap.parse_args()
    an = Analyser(load_rules(args.rules))
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {args.rules}, {args.games:,} games per bot (seed {args.seed}), "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| bot | regret/decision | rating | regret/game | decisions/game | errors | adjusted mean (95 % CI) "
        "| mean score | seconds |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for spec in args.bots.split(","):
        spec = spec.replace(";", ",")
        tally, sec = tally_of(spec, an, args.games, args.seed, args.chunk)
        p = tally.result(0.95)
        print(
            f"| `{spec}` | {p.regret_per_decision:.3f} | {p.rating} | {p.regret / p.games:.2f} | "
            f"{p.decisions / p.games:.1f} | {100 * p.errors / max(1, p.decisions):.1f} % | "
            f"{p.adjusted_mean:.2f} ({p.adjusted_ci[0]:.2f} .. {p.adjusted_ci[1]:.2f}) | {p.mean:.2f} | {sec:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""The designer's workbench (issue 20): exact game quality against a large sampled run, and what the
depth of skill costs.

* ``quality``: the exact close-game, draw and upset rates of two solitaire bots
  (:func:`harness.reports.quality_exact.exact_pair`, from their exact distributions), their exact comeback rate
  and exact bounds of the lead changes (:func:`harness.reports.quality_exact.exact_course`, from each bot's
  :class:`harness.exact.course.Course`) beside the same metrics of a seeded ``--games``-game run of the
  two (``report``'s quality section and head-to-head, 99.9 % intervals), the decisive round sampled:

      python benchmarks/bench_sweep.py quality --rules scandinavian --bots greedy,solver --games 200000

* ``ties``: a sample of games (``engine.play``) split into the lead changes between consecutive
  rounds and those across tied rounds, the part the exact bounds of ``quality`` leave open::

      python benchmarks/bench_sweep.py ties --rules scandinavian --bots greedy,solver --games 20000

* ``course``: one bot's course passes, not cached (under ``/usr/bin/time -v``)::

      /usr/bin/time -v python benchmarks/bench_sweep.py course --rules scandinavian --bot solver

* ``depth``: the depth of skill of a rule set (:func:`harness.studies.depth.depth_of_skill` on ``--workers``
  forked processes): the chains, how many exact evaluations each took, and the wall time (run it
  under ``/usr/bin/time -v`` for CPU time and peak memory):

      /usr/bin/time -v python benchmarks/bench_sweep.py depth --rules generala --workers 2

The sweep itself is timed as the command (``/usr/bin/time -v yatzy-harness sweep ...``), cold and
then cached, see benchmarks/BENCHMARKS.md "Sweeps and the depth of skill".
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def quality(a: argparse.Namespace) -> None:
    from harness.exact import evaluate as E
    from harness.exact.course import course
    from harness.reports.quality_exact import exact_course, exact_pair
    from harness.game.rules import load_rules
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from harness.reports.summary import summarize

    rules = load_rules(a.rules)
    x, y = a.bots.split(",")
    ex = exact_pair(E.evaluate(rules, x), E.evaluate(rules, y))
    cx, cy = course(rules, x), course(rules, y)
    co = exact_course(cx, cy)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        d = run(
            RunConfig(mode="run", rules=a.rules, seats=(x, y), games=a.games, seed=a.seed, workers=a.workers),
            Path(tmp) / "run",
            quiet=True,
        )
        t_run = time.perf_counter() - t0
        s = summarize(d, confidence=0.999).to_dict()
    q, pair = s["quality"], s["pairings"][0]
    (up,) = q["pairings"]
    pct = lambda v: f"{100 * v:.3f} %"  # noqa: E731
    rng = lambda ci: f"[{100 * ci[0]:.3f}, {100 * ci[1]:.3f}]"  # noqa: E731
    print(f"{a.rules}: {x} vs {y}, {a.games:,} games (seed {a.seed}, {t_run:.0f} s), 99.9 % intervals\n")
    print("| metric | exact | sampled | 99.9 % interval | exact inside |")
    print("|---|---:|---:|---:|:---:|")
    for name, exact, value, ci in (
        (
            f"close games (<= {ex.close_margin} points)",
            ex.close_games,
            q["close_games"]["value"],
            q["close_games"]["ci"],
        ),
        ("draws", ex.draw_rate, pair["draw_rate"], pair["draw_ci"]),
        (f"upset rate ({ex.weaker} wins)", ex.upset_rate, up["upset_rate"], up["upset_ci"]),
    ):
        print(f"| {name} | {pct(exact)} | {pct(value)} | {rng(ci)} | {'yes' if ci[0] < exact < ci[1] else 'NO'} |")
    v = q["comeback_rate"]
    print(
        f"| comeback rate ({co.comeback_deficit}+ behind after round {co.deficit_round}) | {pct(co.comeback_rate)} | "
        f"{pct(v['value'])} | {rng(v['ci'])} | {'yes' if v['ci'][0] < co.comeback_rate < v['ci'][1] else 'NO'} |"
    )
    v = q["lead_changes"]
    meets = v["ci"][0] < co.lead_changes_hi and co.lead_changes_lo < v["ci"][1]
    print(
        f"| lead changes | {co.lead_changes_lo:.4f} .. {co.lead_changes_hi:.4f} (exact bounds) | {v['value']:.4f} | "
        f"[{v['ci'][0]:.4f}, {v['ci'][1]:.4f}] | {'inside the bounds' if meets else 'NO'} |"
    )
    v = q["decisive_round"]
    print(
        f"| decisive round | not exact (the whole path) | {v['value']:.3f} | [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] | |"
    )
    print(
        f"\ncourse passes: {x} {cx.seconds:.1f} s{' (cached)' if cx.cached else ''}, "
        f"{y} {cy.seconds:.1f} s{' (cached)' if cy.cached else ''}"
    )


def ties(a: argparse.Namespace) -> None:
    """How much of the lead changes the exact bounds leave open: a sample of games whose running
    totals are kept round by round (the engine's own course, read at each round), split into the
    changes between consecutive rounds and those across one tied round or more."""
    import numpy as np

    from harness.game import loop
    from harness.game.registry import make
    from harness.game.rules import load_rules

    rules = load_rules(a.rules)
    rounds: list[np.ndarray] = []

    class Kept(loop.Leads):
        def update(self, score: np.ndarray) -> None:
            rounds.append(np.array(score, dtype=np.int64))
            super().update(score)

    loop.Leads = Kept  # the sample's course, as play() follows it
    x, y = a.bots.split(",")
    res = loop.play(rules, [make(x, rules), make(y, rules)], np.arange(a.games), a.seed)
    sign = np.sign(np.stack([r[:, 0] - r[:, 1] for r in rounds], axis=1))
    adjacent = ((sign[:, 1:] * sign[:, :-1]) < 0).sum(axis=1).mean()
    one_tie = sum(((sign[:, r - 1] == 0) & (sign[:, r - 2] * sign[:, r] < 0)).mean() for r in range(2, sign.shape[1]))
    total = res.lead_changes.mean()
    print(
        f"{a.rules}: {x} vs {y}, {a.games:,} games (seed {a.seed}): lead changes {total:.4f} a game, "
        f"{adjacent:.4f} between consecutive rounds, {one_tie:.4f} across one tied round, "
        f"{total - adjacent - one_tie:.4f} across two or more"
    )


def course_pass(a: argparse.Namespace) -> None:
    """One bot's course passes (:func:`harness.exact.course.course`, not cached), timed: run it under
    ``/usr/bin/time -v`` for its CPU time and peak memory."""
    from harness.exact.course import course
    from harness.game.rules import load_rules

    c = course(load_rules(a.rules), a.bot, use_cache=False)
    print(f"{a.rules}: course of {c.bot}, {c.rounds} rounds, deficit round {c.deficit_round}: {c.seconds:.1f} s wall")


def depth(a: argparse.Namespace) -> None:
    from harness.util import render as R
    from harness.util.backends import open_backend
    from harness.studies.depth import Evaluator, depth_of_skill
    from harness.game.rules import load_rules

    rules = load_rules(a.rules)
    t0 = time.perf_counter()
    computed = []
    with open_backend("local", a.workers, None) as backend:
        ev = Evaluator(
            backend.executor if a.workers > 1 else None,
            lambda r, s, e: computed.append(e.seconds) if not e.cached else None,
        )
        d = depth_of_skill(rules, [float(p) for p in a.rates.split(",")], a.weakest, a.dial, ev)
    wall = time.perf_counter() - t0
    print(R.text(d.tables()))
    print(
        f"\n{len(ev.memo)} distinct evaluations ({len(computed)} computed, mean {sum(computed) / max(len(computed), 1):.1f} s "
        f"each in its worker), wall {wall:.1f} s on {a.workers} worker(s)"
    )
    for c in d.chains:
        print(
            f"p = {c.p:g}: {c.steps:.4f} steps, {c.evaluations} evaluations, per level "
            f"{[lv.iterations for lv in c.levels[1:]]}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--rules", default="scandinavian")
    q.add_argument("--bots", default="greedy,solver")
    q.add_argument("--games", type=int, default=200_000)
    q.add_argument("--seed", type=int, default=20)
    q.add_argument("--workers", type=int, default=2)
    t = sub.add_parser("ties")
    t.add_argument("--rules", default="scandinavian")
    t.add_argument("--bots", default="greedy,solver")
    t.add_argument("--games", type=int, default=20_000)
    t.add_argument("--seed", type=int, default=7)
    c = sub.add_parser("course")
    c.add_argument("--rules", default="scandinavian")
    c.add_argument("--bot", default="greedy")
    d = sub.add_parser("depth")
    d.add_argument("--rules", default="generala")
    d.add_argument("--rates", default="0.6,0.75")
    d.add_argument("--weakest", default="random")
    d.add_argument("--dial", default="solver:temperature")
    d.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    {"quality": quality, "ties": ties, "course": course_pass, "depth": depth}[a.what](a)


if __name__ == "__main__":
    main()

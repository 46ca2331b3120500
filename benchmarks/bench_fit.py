"""Player-model benchmark: how many decisions a fit needs for a given precision, and its coverage.

Run from the repository root::

    python benchmarks/bench_fit.py                       # scandinavian, 20 blocks of 25 games per bot
    python benchmarks/bench_fit.py --blocks 40 --games 50

Each bot of :data:`BOTS` plays ``--blocks`` x ``--games`` games alone (seed 1; blocks are disjoint
game indices, so independent), recorded by the engine; the decisions of each block are fitted with
the bot's own model (:func:`harness.players.fit.fit_table`, the same code as ``yatzy-harness fit``). Prints a Markdown table per bot and
parameter: decisions per block, the median relative half-width of the 95 % profile-likelihood
interval (half-width / true value), the coverage of the true value over the blocks, the median
estimate, and the decisions needed for +-10 % and +-5 % (the half-width shrinks as 1/sqrt(decisions):
extrapolated from the block size), plus the fit time per block.

``power``: how many decisions the goodness-of-fit tests need to flag a player outside the family::

    python benchmarks/bench_fit.py power                  # greedy, 1, 2, 5, 10, 20, 50 games, 10 seeds each
    python benchmarks/bench_fit.py power --bot greedy --games 1,2,5,10,20,50 --seeds 10

``--bot`` plays each number of games alone once per seed (seeds 1..``--seeds``); each record is
fitted with both default models and the script prints, per model and number of games, the mean
informative decisions, how many of the fits are flagged POOR (either test at p < 0.001, whatever
the evidence verdict) and the median p-value of each test. "Reliably" is every seed flagged.

``family``: whether the extended family (models ``kinds``, ``mixed`` and ``paced``) recovers known parameters::

    python benchmarks/bench_fit.py family                 # 100 replicates of 25 games per truth
    python benchmarks/bench_fit.py family --replicates 100 --games 25 --seed 1
    python benchmarks/bench_fit.py family --models paced  # the truths of these models only

No bot plays the family, so its players are made on real positions: ``--base`` plays
``--replicates`` x ``--games`` games (disjoint blocks of game indices, so independent), and at
every decision of a block the option played is drawn again from the model with the true
parameters of :data:`TRUTHS` (the positions' exact and myopic or paced values as ``fit`` sees them; the
likelihood conditions on the positions, so a position the drawn player would not have reached
changes nothing). Each block is fitted with the truth's model (:func:`harness.players.fit.fit_choices`,
the code of ``yatzy-harness fit``); the script prints per truth and parameter the coverage of the
true value by the 95 % profile-likelihood interval, the median estimate and relative half-width,
the verdicts (POOR or not), and the fit time per block.

``choice``: which model the held-out comparison of ``fit --model all`` chooses for a bot::

    python benchmarks/bench_fit.py choice --bot bonus --games 30 --seeds 5

``--bot`` plays ``--games`` games alone once per seed (seeds 1..``--seeds``); each record is
fitted with ``--models`` (``all``: :func:`harness.players.fit.fit_table`, the code of ``fit``) and the
script prints, per model, the median held-out log-likelihood per decision and top-1 agreement over
the seeds and how many seeds chose it.

``myopic``: what the myopic values (``fit --model mixed``) and the paced values (``--model
paced``) cost the analysis walk and the store::

    python benchmarks/bench_fit.py myopic                 # 2,000 games of solver:temperature=1, best of 3

Walks the same recorded games with the decision tables alone, with the myopic values too, and
with both the myopic and the paced values (:meth:`harness.decisions.analysis.Analyser.walk`; CPU time of the
process, best of ``--repeat``), and stores their informative decisions in a
:class:`harness.players.fit.ChoicesBuilder` likewise (its bytes, buffers as allocated).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from harness.decisions.analysis import Analyser  # noqa: E402
from harness.players.fit import FitOptions, fit_table, mixes, play_table  # noqa: E402
from harness.game.rules import load_rules  # noqa: E402

#: bot spec -> (model fitted, {parameter: true value})
BOTS = {
    "solver:temperature=0.5": ("solver:temperature", {"temperature": 0.5}),
    "solver:temperature=1": ("solver:temperature", {"temperature": 1.0}),
    "solver:temperature=2": ("solver:temperature", {"temperature": 2.0}),
    "solver:blunder=0.05": ("solver:blunder", {"blunder": 0.05}),
    "solver:blunder=0.1": ("solver:blunder", {"blunder": 0.1}),
    "solver:temperature=1,blunder=0.05": ("solver:temperature,blunder", {"temperature": 1.0, "blunder": 0.05}),
}


def power(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_fit.py power", description="decisions needed to flag a bot POOR")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bot", default="greedy")
    ap.add_argument("--games", default="1,2,5,10,20,50", help="games per record, comma-separated")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument(
        "--models", default="solver:temperature;solver:blunder;solver:temperature,blunder", help="';'-separated"
    )
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    sizes = [int(x) for x in args.games.split(",")]
    models = args.models.split(";")
    print(f"rules {args.rules}, bot {args.bot}, seeds 1..{args.seeds} per size\n")
    print("| model | games | decisions (mean) | flagged POOR | median p (LR vs per-kind) | median p (regret X2) |")
    print("|---|---:|---:|---:|---:|---:|")
    for model in models:
        for g in sizes:
            dec, flagged, p_lr, p_rt = [], 0, [], []
            for seed in range(1, args.seeds + 1):
                table = play_table(an, [args.bot], g, seed, paced="paced" in mixes([model]))
                f = fit_table(table, model, options=FitOptions(pooled=False)).players[0]
                dec.append(f.decisions)
                flagged += f.poor
                p_lr.append(f.lr.p if f.lr is not None else math.nan)
                p_rt.append(f.regret_test.p if f.regret_test is not None else math.nan)
            print(
                f"| {model} | {g} | {np.mean(dec):,.0f} | {flagged}/{args.seeds} | {np.nanmedian(p_lr):.2g} | "
                f"{np.nanmedian(p_rt):.2g} |",
                flush=True,
            )
    return 0


def choice(argv: list[str]) -> int:
    from harness.players.fit import parse_models

    ap = argparse.ArgumentParser(prog="bench_fit.py choice", description="the model chosen on held-out games")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bot", default="bonus")
    ap.add_argument("--games", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--models", default="all")
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    models = parse_models(args.models)
    held: dict[str, list[tuple[float, float]]] = {m: [] for m in models}
    chosen: dict[str | None, int] = {}
    decisions = []
    for seed in range(1, args.seeds + 1):
        table = play_table(an, [args.bot], args.games, seed, paced="paced" in mixes(models))
        (c,) = fit_table(table, args.models, options=FitOptions(pooled=False)).choice
        decisions.append(c.test_decisions)
        chosen[c.chosen] = chosen.get(c.chosen, 0) + 1
        for h in c.models:
            held[h.model].append((h.loglik_per_decision, h.top1))
    print(
        f"rules {args.rules}, bot {args.bot}, {args.games} games per record, seeds 1..{args.seeds}, "
        f"held-out decisions {min(decisions):,} to {max(decisions):,}\n"
    )
    print("| model | median held-out loglik/decision | median held-out top-1 | chosen |")
    print("|---|---:|---:|---:|")
    for m in models:
        ll, top = zip(*held[m])
        print(f"| {m} | {np.median(ll):.3f} | {100 * np.median(top):.1f} % | {chosen.get(m, 0)}/{args.seeds} |")
    return 0


#: model -> (weight, keep temperature, box temperature, blunder) of a synthetic player of the family
TRUTHS = (
    ("mixed", (0.3, 0.5, 1.5, 0.03)),
    ("mixed", (0.7, 0.3, 1.0, 0.05)),
    ("kinds", (0.0, 0.8, 2.0, 0.02)),
    ("paced", (0.4, 0.5, 1.5, 0.03)),
    ("paced", (0.8, 0.3, 1.0, 0.05)),
)


def redraw(table, theta, rng, mixes="myopic"):
    """The chosen option of every informative decision of ``table`` drawn again from the family at
    ``theta`` (weight, keep temperature, box temperature, blunder), the weight on the table's
    ``mixes`` values (``myopic`` or ``paced``): a Choices with the positions' options, those values
    and the new choices."""
    from harness.players.fit import Choices

    w, tk, tb, p = theta
    keep = table.n >= 2
    v, m, n, kind = table.values[keep], getattr(table, mixes)[keep], table.n[keep].astype(np.int64), table.kind[keep]
    legal = np.arange(v.shape[1])[None, :] < n[:, None]
    vv, mm = np.where(legal, v, 0.0), np.where(legal, m, 0.0)
    x = (1 - w) * (vv.max(axis=1, where=legal, initial=-np.inf)[:, None] - vv) + w * (
        mm.max(axis=1, where=legal, initial=-np.inf)[:, None] - mm
    )
    t = np.where(kind == 0, tk, tb)[:, None]
    e = np.where(legal, np.exp(-(x - x.min(axis=1, where=legal, initial=np.inf)[:, None]) / t), 0.0)
    prob = p * legal / n[:, None] + (1 - p) * e / e.sum(axis=1, keepdims=True)
    cum = np.cumsum(prob, axis=1)
    chosen = np.minimum((cum < rng.random(len(n))[:, None] * cum[:, -1:]).sum(axis=1), n - 1)
    return Choices.of_arrays(v, n, chosen, kind, **{mixes: m})


def family(argv: list[str]) -> int:
    from harness.players.fit import FAMILY, MIXES, MODELS, fit_choices

    ap = argparse.ArgumentParser(prog="bench_fit.py family", description="recovery by the extended family")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--base", default="solver:temperature=1", help="the bot whose games give the positions")
    ap.add_argument("--replicates", type=int, default=100)
    ap.add_argument("--games", type=int, default=25, help="games per replicate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", default="kinds,mixed,paced", help="the truths of these models (comma-separated)")
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    table = play_table(
        an, [args.base], args.replicates * args.games, args.seed, paced="paced" in mixes(args.models.split(","))
    )
    block = np.asarray(table.games)[table.seatgame] // args.games
    print(
        f"rules {args.rules}, positions of {args.base}, {args.replicates} replicates x {args.games} games, "
        f"seed {args.seed}\n"
    )
    print(
        "| model | truth (weight, keep T, box T, blunder) | parameter | decisions per replicate | coverage | "
        "median estimate | median half-width (rel.) | POOR | fit time per replicate |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(args.seed)
    chosen = args.models.split(",")
    for model, theta in TRUTHS:
        if model not in chosen:
            continue
        truth = dict(zip(FAMILY, theta))
        hits = dict.fromkeys(MODELS[model], 0)
        est: dict[str, list[float]] = {k: [] for k in hits}
        rel: dict[str, list[float]] = {k: [] for k in hits}
        poor, sizes, secs = 0, [], []
        for b in range(args.replicates):
            ch = redraw(_rows(table, block == b), theta, rng, MIXES.get(model, "myopic"))
            t = time.perf_counter()
            f = fit_choices(ch, model)
            secs.append(time.perf_counter() - t)
            sizes.append(f.decisions)
            poor += f.poor
            for k in hits:
                e = f.params[k]
                hits[k] += e.lo <= truth[k] <= e.hi
                est[k].append(e.value)
                rel[k].append((e.hi - e.lo) / 2 / truth[k] if math.isfinite(e.hi) else math.nan)
        for k in hits:
            print(
                f"| {model} | {', '.join(f'{x:g}' for x in theta)} | {k} = {truth[k]:g} | {np.mean(sizes):,.0f} | "
                f"{hits[k]}/{args.replicates} | {np.median(est[k]):.4g} | ±{100 * np.nanmedian(rel[k]):.1f} % | "
                f"{poor}/{args.replicates} | {np.median(secs):.2f} s |",
                flush=True,
            )
    return 0


def myopic(argv: list[str]) -> int:
    from harness.game import registry
    from harness.records.codec import arrays_of_recording
    from harness.game.loop import play
    from harness.players.fit import ChoicesBuilder

    ap = argparse.ArgumentParser(prog="bench_fit.py myopic", description="the cost of the myopic values")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bot", default="solver:temperature=1")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    rules = an.rules
    rec = play(rules, [registry.make(args.bot, rules)], np.arange(args.games), 1, record=True).recording
    arrays = arrays_of_recording(rec)[:3]
    an.walk(*(a[:4] for a in arrays), decisions=True, myopic=True, paced=True)  # compiled before it is timed
    print(
        f"rules {args.rules}, {args.games:,} games of {args.bot}, best of {args.repeat} (CPU s), load average "
        f"{os.getloadavg()[0]:.2f}\n"
    )
    print("| walk | CPU time | decisions | store rows | store bytes | bytes per row |")
    print("|---|---:|---:|---:|---:|---:|")
    for mine, paced, what in (
        (False, False, ""),
        (True, False, " and myopic values"),
        (True, True, ", myopic and paced values"),
    ):
        best = math.inf
        for _ in range(args.repeat):
            t = time.process_time()
            _, d = an.walk(*arrays, decisions=True, myopic=mine, paced=paced)
            best = min(best, time.process_time() - t)
        b = ChoicesBuilder(1 << 16, myopic=mine, paced=paced)
        b.add(
            d["values"],
            d["n"],
            d["chosen"],
            d["kind"],
            np.zeros(len(d["n"]), np.int32),
            d.get("myopic"),
            d.get("paced"),
        )
        b.choices()  # drops the hash table: the bytes a fit holds
        print(
            f"| decision tables{what} | {best:.2f} s | {len(d['n']):,} | "
            f"{b.rows:,} | {b.nbytes:,} | {b.nbytes / b.rows:.0f} |",
            flush=True,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["power"]:
        return power(argv[1:])
    if argv[:1] == ["myopic"]:
        return myopic(argv[1:])
    if argv[:1] == ["family"]:
        return family(argv[1:])
    if argv[:1] == ["choice"]:
        return choice(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--games", type=int, default=25, help="games per block")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    print(f"rules {args.rules}, {args.blocks} blocks x {args.games} games per bot, seed {args.seed}\n")
    print(
        "| bot | model | parameter | decisions per block | median half-width (rel.) | coverage | "
        "median estimate | decisions for ±10 % | for ±5 % | fit time per block |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for spec, (model, truth) in BOTS.items():
        table = play_table(an, [spec], args.blocks * args.games, args.seed)
        block = np.asarray(table.games)[table.seatgame] // args.games
        rel: dict[str, list[float]] = {k: [] for k in truth}
        est: dict[str, list[float]] = {k: [] for k in truth}
        hits = dict.fromkeys(truth, 0)
        sizes, secs = [], []
        for b in range(args.blocks):
            sub = _rows(table, block == b)
            t = time.perf_counter()
            f = fit_table(sub, model, options=FitOptions(pooled=False)).players[0]
            secs.append(time.perf_counter() - t)
            sizes.append(f.decisions)
            for k, v in truth.items():
                e = f.params[k]
                hi = e.hi if math.isfinite(e.hi) else math.nan
                rel[k].append((hi - e.lo) / 2 / v)
                est[k].append(e.value)
                hits[k] += e.lo <= v <= e.hi
        d = float(np.mean(sizes))
        for k, v in truth.items():
            h = float(np.nanmedian(rel[k]))
            need10, need5 = d * (h / 0.10) ** 2, d * (h / 0.05) ** 2
            print(
                f"| `{spec}` | {model} | {k} = {v:g} | {d:,.0f} | ±{100 * h:.1f} % | "
                f"{hits[k]}/{args.blocks} | {np.median(est[k]):.4g} | {need10:,.0f} | {need5:,.0f} | "
                f"{np.median(secs):.2f} s |"
            )
        sys.stdout.flush()
    return 0


def _rows(table, mask):  # a DecisionTable restricted to some decisions (labels kept)
    from harness.decisions.analysis import DecisionTable

    cols = {
        k: getattr(table, k)[mask]
        for k in ("values", "n", "chosen", "kind", "seatgame", "turn", "roll", "upper", "regret")
    }
    return DecisionTable(
        **cols,
        labels=table.labels,
        games=table.games,
        seats=table.seats,
        myopic=None if table.myopic is None else table.myopic[mask],
        paced=None if table.paced is None else table.paced[mask],
    )


if __name__ == "__main__":
    sys.exit(main())

"""The sampled statistics checked against the exact truth (issue 19, item 5).

The exact figures of a solitaire bot (:func:`harness.exact.evaluate.evaluate`) are the truth the sampled
methods estimate; this script repeats each sampled method on independent seeds and counts how
often it is right:

* ``compare``: ``--reps`` independent paired comparisons (``harness.reports.compare.compare`` on two run
  configs, each on its own seed) of two greedy bots on scandinavian with upper_bonus_threshold 63
  (BASE) and 62 (CANDIDATE), ``--games`` games each, the analysis on (compare's default); for
  every figure compare gives an interval for, how often the interval holds the exact value, at
  ``--games`` and at each of ``--prefixes`` (the first N games of the same runs: dice are keyed
  by seed and game index, so that is what ``compare --games N`` gives).
* ``sprt``: on the same runs (played first if absent), compare's SPRT (``sprt_mean`` on the per-game difference,
  two-sided, alpha = beta = 0.05, a look every ``--step`` games from ``--min-games`` on, as
  ``compare --sequential`` does) with its hypotheses placed so that the exact difference is H0
  (mu0 = exact, mu1 = exact + 1 point) and then H1 (mu0 = exact - 1, mu1 = exact): the rate of
  "change" verdicts at H0 (false positives, nominal alpha) and of "no change" at H1 (false
  negatives, nominal beta). Replicate 0 is also played with ``compare(..., sequential=True)`` to
  check that the looks here are the ones compare makes.
* ``calibrate``: the exact dial value for a target (root of the exact response along
  ``solver:temperature`` on the mini rule set of the tests, to 1e-9), then ``--reps`` sampled
  calibrations (``harness.players.calibrate.calibrate`` with the runner, ``--games`` games per evaluation,
  each on its own seed): how often ``value_ci`` holds the exact value.

Every rate comes with its 95 % Wilson interval. One process, one worker, so numba compiles once;
run it under ``nice`` on a shared machine. Raw results are written to ``--out`` as JSON lines.

    nice python benchmarks/bench_coverage.py compare --reps 400 --games 1000 --prefixes 200
    nice python benchmarks/bench_coverage.py sprt --reps 400 --games 1000 --step 20 --estimators luck-adjusted,plain
    nice python benchmarks/bench_coverage.py sprt --reps 400 --games 1000 --step 100 --estimators luck-adjusted,plain
    nice python benchmarks/bench_coverage.py calibrate --reps 200 --games 300
    nice python benchmarks/bench_coverage.py calibrate --reps 100 --games 300 --kind win_rate
    nice python benchmarks/bench_coverage.py calibrate --reps 100 --games 300 --engine

``--engine`` calibrates the test engine ``tests/engines/solver_dial.py`` (it plays exactly
``solver:temperature=T``, T its option) through the engine protocol instead: ``--param
opt.temperature`` of ``engine:cmd="python tests/engines/solver_dial.py --rules mini.toml"``, every
replicate in one session (the engine process kept, each value sent in a newgame).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.util.cache import select_cache_dir  # noqa: E402
from harness.stats import wilson  # noqa: E402

RULES = "scandinavian"
BOT = "greedy"
THRESHOLDS = (63, 62)  # BASE, CANDIDATE
SEED0 = 10_000  # replicate i plays seed SEED0 + i
#: An interval holds the exact value when it does to within this (the forward pass is exact to
#: ~1e-12: greedy's chance box moves by 9e-12 between the thresholds, which is rounding, not play)
TOL = 1e-9


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]" if n else "-"


def _header(what: str, args: argparse.Namespace) -> None:
    print(
        f"# {what}: {' '.join(sys.argv[1:])}; {time.strftime('%Y-%m-%d %H:%M')}, load average {_load()}, "
        f"{os.cpu_count()} cores",
        flush=True,
    )


def _footer(t0: float, c0: float) -> None:
    print(
        f"\n# wall {time.perf_counter() - t0:.0f} s, CPU of this process {time.process_time() - c0:.0f} s, "
        f"load average {_load()}",
        flush=True,
    )


# ---------------------------------------------------------------------------------------------
# the rule change: exact figures and the replicate runs


def exact_change() -> dict[str, Any]:
    """Exact figures of greedy at both thresholds: per figure compare reports, (base, candidate)."""
    from harness.exact.evaluate import evaluate, versus
    from harness.game.rules import load_rules
    from harness.reports.summary import yatzy_box

    out: dict[str, Any] = {}
    evs = []
    for th in THRESHOLDS:
        rules = load_rules(RULES, [f"upper_bonus_threshold={th}"])
        evs.append((rules, evaluate(rules, BOT)))
    for rules, ev in evs:
        _, draw, _ = versus(ev, ev)
        ybox = yatzy_box(rules)
        fig = {
            "score": ev.mean,
            "bonus_rate": ev.p_bonus,
            "yatzy_rate": float(ev.box_scored[ev.box_names.index(ybox)]),
            # two seats of the same bot: per game the mean of both seats' win flags is (1 - draw) / 2
            "draw_rate": draw,
            "win_rate": (1.0 - draw) / 2,
        }
        fig |= {f"box:{b}": float(m) for b, m in zip(ev.box_names, ev.box_mean)}
        for k, v in fig.items():
            out.setdefault(k, []).append(v)
    return out


def _config(root: Path, th: int) -> Path:
    p = root / f"greedy{th}.toml"
    p.write_text(
        f'rules = "{RULES}"\nseats = ["{BOT}", "{BOT}"]\nseed = 1\n\n[settings]\nupper_bonus_threshold = {th}\n'
    )
    return p


def replicate(root: Path, i: int, games: int) -> tuple[Path, Path, Any]:
    """Replicate i's two run directories (played with ``compare`` on seed SEED0 + i if absent) and
    compare's result on all ``games`` games."""
    from harness.reports.compare import CompareSettings, Playing, compare

    rep = root / "runs" / f"rep-{i:04d}"
    base, cand = rep / "base", rep / "candidate"
    if (base / "manifest.json").is_file() and (cand / "manifest.json").is_file():
        res = compare(base, cand, CompareSettings())
        if res.games >= games:
            return base, cand, res
        shutil.rmtree(rep)
    res = compare(
        _config(root, THRESHOLDS[0]),
        _config(root, THRESHOLDS[1]),
        CompareSettings(),
        Playing(games=games, seed=SEED0 + i, workers=1, out=rep),
    )
    return base, cand, res


def _intervals(res: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    """(estimate, lo, hi) of every figure of compare's result with an interval: differences and
    each side's mean."""
    out = {}
    named = {
        "score": res["score"],
        "score_plain": res["score_plain"],
        "bonus_rate": res["bonus_rate"],
        "yatzy_rate": res["yatzy_rate"],
        "win_rate": res["win_rate"],
        "draw_rate": res["draw_rate"],
    }
    named |= {f"box:{b['box']}": b for b in res["boxes"]}
    for k, x in named.items():
        if x is None:
            continue
        out[f"{k} diff"] = (x["diff"], *x["diff_ci"])
        if not k.startswith("box:"):
            out[f"{k} base"] = (x["base"], *x["base_ci"])
            out[f"{k} candidate"] = (x["candidate"], *x["candidate_ci"])
    return out


def _truth(exact: dict[str, Any], key: str) -> float:
    fig, what = key.rsplit(" ", 1)
    fig = "score" if fig == "score_plain" else fig
    b, c = exact[fig]
    return {"diff": c - b, "base": b, "candidate": c}[what]


def compare_cmd(args: argparse.Namespace, root: Path) -> None:
    from harness.reports.compare import Comparison, CompareSettings

    _header("compare coverage", args)
    t0, c0 = time.perf_counter(), time.process_time()
    exact = exact_change()
    print(
        f"exact (greedy, {RULES}, threshold 63 -> 62): mean {exact['score'][0]:.6f} -> {exact['score'][1]:.6f} "
        f"(diff {exact['score'][1] - exact['score'][0]:+.6f}), P(bonus) {exact['bonus_rate'][0]:.6f} -> "
        f"{exact['bonus_rate'][1]:.6f}, P(yatzy) {exact['yatzy_rate'][0]:.6f} -> {exact['yatzy_rate'][1]:.6f}, "
        f"P(draw) {exact['draw_rate'][0]:.6f} -> {exact['draw_rate'][1]:.6f}; {time.process_time() - c0:.0f} s CPU",
        flush=True,
    )
    sizes = sorted({args.games, *(int(x) for x in args.prefixes.split(",") if x)})
    log = (root / "compare.jsonl").open("w")
    tally: dict[tuple[int, str], list[int]] = {}  # (games, figure) -> [covered, zero width, below, above, n]
    widths: dict[tuple[int, str], float] = {}
    for i in range(args.reps):
        base, cand, full = replicate(root, i, args.games)
        for n in sizes:
            if n == args.games:
                res = full.to_dict()
            else:
                c = Comparison(base, cand, CompareSettings())
                c.update(until=n)
                res = c.result().to_dict()
            row = {"rep": i, "games": n, "intervals": _intervals(res)}
            log.write(json.dumps(row) + "\n")
            for key, (_est, lo, hi) in row["intervals"].items():
                t = _truth(exact, key)
                s = tally.setdefault((n, key), [0, 0, 0, 0, 0])
                s[0] += lo - TOL <= t <= hi + TOL
                s[1] += hi - lo == 0
                s[2] += hi + TOL < t
                s[3] += lo - TOL > t
                s[4] += 1
                widths[(n, key)] = widths.get((n, key), 0.0) + (hi - lo)
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} replicates, {time.process_time() - c0:.0f} s CPU, load {_load()}", flush=True)
    log.close()
    print(
        "\n| games | figure | exact | coverage of the 95 % interval [Wilson 95 %] | zero-width | "
        "interval below / above the truth | mean width |"
    )
    print("|---:|---|---:|---|---:|---|---:|")
    for (n, key), (cov, zero, below, above, m) in sorted(tally.items()):
        print(
            f"| {n} | {key} | {_truth(exact, key):+.6g} | {_rate(cov, m)} | {zero} | {below} / {above} | "
            f"{widths[(n, key)] / m:.4g} |"
        )
    _footer(t0, c0)


# ---------------------------------------------------------------------------------------------
# the SPRT at H0 and at H1


def _sequential(base: Path, cand: Path, settings: Any, step: int, games: int) -> tuple[str, int]:
    """compare --sequential's looks on existing runs: (verdict at the first decisive look, games)."""
    from harness.reports.compare import Comparison

    c = Comparison(base, cand, settings)
    n = 0
    while True:
        n = min(games, n + step)
        c.update(until=n)
        verdict, _ = c.verdict()
        if verdict != "inconclusive" or n >= games:
            return verdict, n


def sprt_cmd(args: argparse.Namespace, root: Path) -> None:
    from harness.reports.compare import CompareSettings, Playing, compare

    _header("SPRT error rates", args)
    t0, c0 = time.perf_counter(), time.process_time()
    exact = exact_change()
    delta = exact["score"][1] - exact["score"][0]
    w = args.width
    scenarios = {"H0 true": (delta, delta + w), "H1 true": (delta - w, delta)}
    estimators = {e: e == "luck-adjusted" for e in args.estimators.split(",")}
    print(
        f"exact difference {delta:+.6f}; H0 true: mu0 = {delta:.6f}, mu1 = {delta + w:.6f} (and "
        f"{delta - w:.6f}); H1 true: mu0 = {delta - w:.6f}, mu1 = {delta:.6f} (and {delta - 2 * w:.6f}); "
        f"alpha = {args.alpha}, beta = {args.beta}, two-sided, min games {args.min_games}, a look every "
        f"{args.step} games, at most {args.games}",
        flush=True,
    )

    def settings(scn: str, adjust: bool) -> CompareSettings:
        mu0, mu1 = scenarios[scn]
        return CompareSettings(
            mu0=mu0, mu1=mu1, alpha=args.alpha, beta=args.beta, min_games=args.min_games, adjust=adjust
        )

    # replicate 0 with compare's own sequential loop: the looks below must give its verdicts
    base, cand, _ = replicate(root, 0, args.games)
    for scn in scenarios:
        out = root / "sequential-check" / scn.replace(" ", "-")
        shutil.rmtree(out, ignore_errors=True)
        seq = compare(
            _config(root, THRESHOLDS[0]),
            _config(root, THRESHOLDS[1]),
            settings(scn, True),
            Playing(games=args.step, seed=SEED0, workers=1, out=out, sequential=True, max_games=args.games),
        )
        mine = _sequential(base, cand, settings(scn, True), args.step, args.games)
        theirs = (seq.verdict, seq.games)
        if mine != theirs:
            raise AssertionError(f"{scn}: looks on the played runs gave {mine}, compare --sequential {theirs}")
        print(f"  check, replicate 0, {scn}: compare --sequential and the looks here agree: {theirs}", flush=True)
    log = (root / f"sprt-step{args.step}-{args.estimators.replace(',', '+')}.jsonl").open("w")
    counts: dict[tuple[str, str], dict[str, list[int]]] = {}
    for i in range(args.reps):
        base, cand, _ = replicate(root, i, args.games)
        for scn in scenarios:
            for est, adjust in estimators.items():
                verdict, n = _sequential(base, cand, settings(scn, adjust), args.step, args.games)
                counts.setdefault((scn, est), {}).setdefault(verdict, []).append(n)
                log.write(
                    json.dumps({"rep": i, "scenario": scn, "estimator": est, "verdict": verdict, "games": n}) + "\n"
                )
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} replicates, {time.process_time() - c0:.0f} s CPU, load {_load()}", flush=True)
    log.close()
    print(
        "\n| truth at | estimator | error: verdict | error rate [Wilson 95 %] | nominal | right verdict | "
        "inconclusive at the limit | median games to a decision |"
    )
    print("|---|---|---|---|---:|---|---:|---:|")
    for (scn, est), by in counts.items():
        m = sum(len(v) for v in by.values())
        wrong, right = ("change", "no change") if scn == "H0 true" else ("no change", "change")
        nominal = args.alpha if scn == "H0 true" else args.beta
        decided = sorted(by.get(wrong, []) + by.get(right, []))
        med = decided[len(decided) // 2] if decided else math.nan
        print(
            f"| {scn.split()[0]} | {est} | {wrong} | {_rate(len(by.get(wrong, [])), m)} | {nominal:g} | "
            f"{len(by.get(right, []))} | {len(by.get('inconclusive', []))} | {med} |"
        )
    _footer(t0, c0)


# ---------------------------------------------------------------------------------------------
# calibrate


def _mini_rules(root: Path) -> Path:
    from tests.report_helpers import MINI_RULES

    p = root / "mini.toml"
    p.write_text(MINI_RULES)
    return p


def calibrate_cmd(args: argparse.Namespace, root: Path) -> None:
    from scipy.optimize import brentq

    from harness.players.calibrate import Problem, calibrate
    from harness.players.responses import RunnerEvaluator
    from harness.exact.evaluate import evaluate, score_rate, versus
    from harness.game.rules import load_rules

    _header(f"calibrate coverage ({args.kind})", args)
    t0, c0 = time.perf_counter(), time.process_time()
    path = _mini_rules(root)
    rules = load_rules(str(path))
    spec = f"solver:{args.param}={{:.12g}}"
    ref = evaluate(rules, args.against) if args.kind == "win_rate" else None

    def exact(v: float) -> float:
        ev = evaluate(rules, spec.format(v))
        if ref is None:
            return ev.mean
        w, d, _ = versus(ev, ref)
        return score_rate(w, d)

    target = args.target if args.target is not None else (100.0 if args.kind == "mean" else 0.4)
    truth = brentq(
        lambda v: exact(v) - target, args.lo + 1e-9 if args.kind == "win_rate" else args.lo, args.hi, xtol=1e-9
    )
    h = 1e-3
    slope = (exact(truth + h) - exact(truth - h)) / (2 * h)
    print(
        f"exact: {args.param} = {truth:.9f} gives {args.kind} {exact(truth):.9f} (target {target:g}); "
        f"exact slope there {slope:.6g} per unit; {time.process_time() - c0:.0f} s CPU",
        flush=True,
    )
    strategy, param = "solver", args.param
    if args.engine:
        relay = Path(__file__).resolve().parent.parent / "tests" / "engines" / "solver_dial.py"
        strategy, param = f'engine:cmd="{sys.executable} {relay} --rules {path}"', f"opt.{args.param}"
    session = RunnerEvaluator(
        Problem(
            rules=str(path),
            settings=(),
            strategy="solver",
            param=args.param,
            lo=args.lo,
            hi=args.hi,
            target_mean=1.0,
            workers=1,
        ),
        root,
    ).session()
    session.__enter__()
    log = (root / f"calibrate-{args.kind}{'-engine' if args.engine else ''}.jsonl").open("w")
    covered = covered_sampling = 0
    rows = []
    for j in range(args.reps):
        p = Problem(
            rules=str(path),
            settings=(),
            strategy=strategy,
            param=param,
            lo=args.lo,
            hi=args.hi,
            target_mean=target if args.kind == "mean" else None,
            target_win_rate=target if args.kind == "win_rate" else None,
            against=args.against if args.kind == "win_rate" else None,
            games=args.games,
            seed=SEED0 + j,
            workers=1,
        )
        out = root / "calibrations" / f"rep-{j:04d}"
        shutil.rmtree(out, ignore_errors=True)
        cal = calibrate(p, RunnerEvaluator(p, out))
        shutil.rmtree(out, ignore_errors=True)
        lo, hi = cal.value_ci
        row = {
            "rep": j,
            "value": cal.value,
            "ci": [lo, hi],
            "sampling": cal.sampling_error,
            "search": cal.search_error,
            "slope": cal.slope,
            "evaluations": len(cal.points),
            "converged": cal.converged,
            "notes": list(cal.notes),
        }
        rows.append(row)
        log.write(json.dumps(row) + "\n")
        covered += lo <= truth <= hi
        covered_sampling += abs(cal.value - truth) <= cal.sampling_error
        if (j + 1) % 25 == 0:
            print(f"  {j + 1} calibrations, {time.process_time() - c0:.0f} s CPU, load {_load()}", flush=True)
    log.close()
    session.__exit__(None, None, None)
    m = len(rows)
    err = sorted(abs(r["value"] - truth) for r in rows)
    below = sum(r["ci"][1] < truth for r in rows)
    above = sum(r["ci"][0] > truth for r in rows)
    mean_half = sum((r["ci"][1] - r["ci"][0]) / 2 for r in rows) / m
    slopes = sorted(r["slope"] / slope for r in rows)
    print(
        f"\n| target | games per evaluation | exact {args.param} | coverage of value_ci [Wilson 95 %] | "
        f"interval below / above | coverage of value ± sampling only | mean half-width | "
        f"95th percentile of the actual error | median slope / exact slope |"
    )
    print("|---|---:|---:|---|---|---|---:|---:|---:|")
    tgt = f"mean {target:g}" if args.kind == "mean" else f"score {target:g} vs {args.against}"
    if args.engine:
        tgt += ", through the engine"
    print(
        f"| {tgt} | {args.games} | {truth:.6f} | {_rate(covered, m)} | {below} / {above} | "
        f"{_rate(covered_sampling, m)} | {mean_half:.4g} | {err[int(0.95 * (m - 1))]:.4g} | "
        f"{slopes[m // 2]:.3f} |"
    )
    _footer(t0, c0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/bench_coverage"), help="runs, caches and JSON lines")
    ap.add_argument("--cache-dir", type=Path, default=None, help="solver cache (default: OUT/cache)")
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--reps", type=int, default=400)
    c.add_argument("--games", type=int, default=1000)
    c.add_argument("--prefixes", default="200", help="also at the first N games of each replicate")
    s = sub.add_parser("sprt")
    s.add_argument("--reps", type=int, default=400)
    s.add_argument("--games", type=int, default=1000, help="the most games per replicate (--max-games)")
    s.add_argument("--step", type=int, default=100)
    s.add_argument("--min-games", type=int, default=100)
    s.add_argument("--width", type=float, default=1.0, help="mu1 - mu0, points")
    s.add_argument("--estimators", default="luck-adjusted", help="luck-adjusted (compare's default), plain")
    s.add_argument("--alpha", type=float, default=0.05)
    s.add_argument("--beta", type=float, default=0.05)
    k = sub.add_parser("calibrate")
    k.add_argument("--reps", type=int, default=200)
    k.add_argument("--games", type=int, default=300)
    k.add_argument("--kind", choices=("mean", "win_rate"), default="mean")
    k.add_argument("--target", type=float, default=None, help="default: mean 100, or score rate 0.4")
    k.add_argument("--against", default="solver")
    k.add_argument("--param", default="temperature")
    k.add_argument("--lo", type=float, default=0.0)
    k.add_argument("--hi", type=float, default=5.0)
    k.add_argument("--engine", action="store_true", help="calibrate tests/engines/solver_dial.py's option instead")
    args = ap.parse_args()
    root = args.out
    root.mkdir(parents=True, exist_ok=True)
    select_cache_dir(args.cache_dir or root / "cache")  # this script's whole process
    {"compare": compare_cmd, "sprt": sprt_cmd, "calibrate": calibrate_cmd}[args.what](args, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())

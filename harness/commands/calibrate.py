"""``yatzy-harness calibrate``: the bot parameter value that hits a target mean score or score rate,
or every difficulty level of a levels file."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

from harness.commands.options import (
    add_backend_options,
    add_cache_dir_option,
    add_records_options,
    add_set_option,
    confidence_arg,
    console_logging,
    describe,
    listed,
    new_out_dir,
    print_json,
    say as progress_line,
    show_bad,
    stream_games,
)
from harness.util.cache import select_cache_dir
from harness.players.calibrate import DEFAULT_EXACT_MAX_EVALS, DEFAULT_MAX_EVALS, EXACT_XTOL, Point, Problem
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Bracketing search (Illinois regula falsi) for the value of a bot parameter that hits a "
        "target mean score, or a target score against a reference bot (win 1, draw ½, both "
        "seatings on the same dice). Every evaluation plays the same games (common random "
        "numbers). With --exact (solitaire bot and reference) no game is played: the response "
        "is exact and Brent's method finds the value to --xtol (default 1e-6) in the dial. "
        "Writes calibration.png and calibration.json.",
        "yatzy-harness calibrate --strategy solver --param temperature --target-mean 200 --lo 0 --hi 20",
        "yatzy-harness calibrate --strategy solver --param temperature --target-win-rate 0.4 --against solver "
        "--lo 0 --hi 10",
        "yatzy-harness calibrate --rules standard --strategy solver --param blunder --target-mean 180 "
        "--games 20000 --json",
        "yatzy-harness calibrate --levels configs/difficulty/default.toml --against results/pop/fit.json",
        "yatzy-harness calibrate --strategy engine:file=greedy-js --param opt.mistakes --target-mean 200 "
        "--precision 0.01",
        "yatzy-harness calibrate --exact --strategy solver --param temperature --target-mean 200 --lo 0 --hi 20",
        "yatzy-harness calibrate --exact --levels configs/difficulty/default.toml",
        "yatzy-harness calibrate --exact --levels configs/difficulty/default.toml --backend dask --scheduler "
        "tcp://HOST:8786 --cache-dir /shared/cache",
        "yatzy-harness calibrate --levels site.toml --against-records games.jsonl",
        "yatzy-harness calibrate --levels site.toml --against-records results/pop --held-out --split-seed 3",
    )
    p.add_argument("--rules", default="scandinavian", metavar="RULES", help="rule set name or .toml path")
    add_set_option(p)
    p.add_argument("--strategy", metavar="SPEC", help="the bot, e.g. solver or solver:blunder=0.1")
    p.add_argument(
        "--param",
        metavar="NAME",
        help="the dial to tune: a float or integer parameter (temperature), or an engine's option "
        "declared in its hello (opt.mistakes: float, integer or choice)",
    )
    p.add_argument(
        "--levels",
        metavar="FILE",
        help="tune every difficulty level of a levels file (configs/difficulty/default.toml): writes "
        "levels.json (each level's spec, its interval and an independent check) and levels.png",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target-mean", type=float, metavar="X", help="target mean final score (points)")
    g.add_argument(
        "--target-win-rate",
        type=float,
        metavar="P",
        help="target score against --against, 0..1: win 1, draw ½ (as in harness.game.outcome)",
    )
    p.add_argument(
        "--against",
        metavar="REF",
        help="the reference player for win rates: a bot spec, or a fit file written by 'fit --out' "
        "(FIT.json: its median player's fitted spec; FIT.json#PLAYER: that player's)",
    )
    p.add_argument(
        "--against-records",
        metavar="LOGS",
        help="with --levels: tune every level against the players of these game records (a .jsonl, "
        ".jsonl.gz or .parquet file, or a run directory played with --record), exactly: each "
        "level's score rate is the mean over the logged games of P(bot > s) + ½ P(bot = s), s the "
        "game's final, with an interval over games clustered by player",
    )
    p.add_argument(
        "--held-out",
        action="store_true",
        help="with --against-records: split the players (--split-seed) into a tuning and a checking "
        "half, tune on the first and measure every level on the second (writes held_out.png)",
    )
    p.add_argument("--split-seed", type=int, default=1, metavar="S", help="seed of the held-out split of the players")
    p.add_argument(
        "--lo", type=float, metavar="V", help="lower end of the search bracket (default: parameter's minimum)"
    )
    p.add_argument(
        "--hi", type=float, metavar="V", help="upper end of the search bracket (default: parameter's maximum)"
    )
    p.add_argument(
        "--games", type=int, metavar="N", help="games per evaluation (default 10,000; with --levels, the file's games)"
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="root seed shared by every evaluation (default 1; with --levels, the file's seed)",
    )
    p.add_argument(
        "--tol",
        type=float,
        metavar="T",
        help="stop when the response is this close to the target (default 0.1 points / 0.002 win rate)",
    )
    p.add_argument(
        "--xtol",
        type=float,
        metavar="T",
        help=f"stop when the bracket is this narrow (default 1e-4 x (hi-lo); with --exact {EXACT_XTOL:g})",
    )
    p.add_argument(
        "--precision",
        type=float,
        metavar="P",
        help="stop when the value's interval is within ±P (then --tol applies only if given); a note "
        "says how many games per evaluation an interval still wider would need",
    )
    p.add_argument(
        "--max-evals",
        type=int,
        metavar="N",
        help=f"most evaluations, bracket ends included (default {DEFAULT_MAX_EVALS}; with --exact "
        f"{DEFAULT_EXACT_MAX_EVALS})",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="exact response (solitaire bot and reference: no games) and root-finding to --xtol in the dial",
    )
    p.add_argument("--confidence", type=confidence_arg, default=0.95, metavar="C", help="interval confidence")
    p.add_argument(
        "--chunk-size", type=int, metavar="N", help="games per chunk (default: games / (2 x workers), at least 500)"
    )
    p.add_argument("--workers", type=int, default=0, metavar="N", help="worker processes (0 = every core)")
    p.add_argument(
        "--out", metavar="DIR", help="where evaluation runs and the plot go (default results/calibrate-<time>)"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--no-analyse",
        action="store_true",
        help="plain estimates: play without the luck analysis (by default each evaluation is analysed "
        "and measured luck-adjusted, or with the luck difference as control variate)",
    )
    add_records_options(p)
    add_backend_options(p)
    add_cache_dir_option(p)


#: Options that only sampled evaluations use: refused with --exact (no game is played).
_SAMPLING_OPTIONS = ("games", "seed", "tol", "chunk_size", "no_analyse", "precision")


def _no_sampling_options(args: argparse.Namespace, why: str = "--exact") -> None:
    given = [f"--{k.replace('_', '-')}" for k in _SAMPLING_OPTIONS if getattr(args, k) not in (None, False)]
    if args.workers and not (why == "--exact" and args.backend == "dask"):  # (a LocalCluster's workers)
        given.append("--workers")
    if given:
        raise UserError(f"{why} plays no games: drop {', '.join(given)}")


@contextlib.contextmanager
def _on_tasks(args: argparse.Namespace) -> Iterator[Any]:
    """With ``--backend dask``, the :class:`harness.jobs.driver.Evaluator` of an exact search's tasks (a
    line per evaluation is printed already: no bar); else None (evaluations in this process)."""
    if args.backend != "dask":
        if args.scheduler:
            raise UserError("--scheduler is for --backend dask")
        yield None
        return
    from harness.commands.options import exact_tasks
    from harness.studies.depth import Evaluator

    with exact_tasks(args, args.workers or 2) as tasks:
        yield Evaluator(tasks=tasks)


def _levels(args: argparse.Namespace) -> int:
    # the levels' calibration (the runner, the exact evaluation), fitting code and matplotlib load
    # only when they are used, not for `calibrate --help`
    from harness.players.fit import reference_of
    from harness.players.levels import Levels, LevelSearch, calibrate_levels, check_levels, levels_text, load_levels
    from harness.players.picture import plot_levels

    lv = load_levels(args.levels)
    if args.exact:
        lv = Levels(**{**lv.__dict__, "exact": True})
    for flag in ("strategy", "param", "target_mean", "target_win_rate", "lo", "hi", "tol", "xtol", "precision"):
        if getattr(args, flag) is not None and not (flag == "xtol" and (lv.exact or args.against_records)):
            # (--xtol: an exact search's tolerance)
            raise UserError(
                f"--levels takes the bot, parameter, bracket and targets from {args.levels}: "
                f"drop --{flag.replace('_', '-')}"
            )
    if args.against_records:
        return _against_records(args, lv)
    if args.held_out:
        raise UserError("--held-out checks levels tuned against game logs: give --against-records LOGS")
    if lv.exact:
        _no_sampling_options(args)
    if args.games is not None:
        lv = Levels(**{**lv.__dict__, "games": args.games})
    if args.seed is not None:
        lv = Levels(**{**lv.__dict__, "seed": args.seed})
    ref_text = args.against or lv.against
    against, source = reference_of(ref_text) if ref_text else (None, None)
    max_evals = args.max_evals or (DEFAULT_EXACT_MAX_EVALS if lv.exact else DEFAULT_MAX_EVALS)
    # every level checked before the first line is printed: nothing on stdout for input that is not good
    search = LevelSearch(
        workers=args.workers,
        analyse=not args.no_analyse,
        confidence=args.confidence,
        max_evals=max_evals,
        xtol=args.xtol,
    )
    check_levels(lv, against, search)
    out = new_out_dir(args.out, "calibrate")
    say = None if args.json else progress_line
    if say:
        ref = f"{against}" + (f" (from {source})" if source else "") if against else "none"
        how = "exact responses (no games)" if lv.exact else f"{lv.games:,} games per evaluation, seed {lv.seed}"
        say(
            f"difficulty levels of {args.levels}: {lv.strategy} {lv.param} in [{lv.lo:g}, {lv.hi:g}], "
            f"{how}; reference {ref}"
        )
    if args.backend == "dask" and not lv.exact:
        raise UserError("--backend dask runs exact searches: add --exact (sampled levels play on --workers)")
    with _on_tasks(args) as ev:
        d = calibrate_levels(
            lv,
            against,
            out,
            replace(search, workers=0 if ev is not None else args.workers),
            progress=say,
            quiet=_quiet(args),
            evaluator=ev,
        )
    d["reference_source"] = source
    return _written(args, out, d, {"levels.png": plot_levels(d)}, levels_text)


def _written(
    args: argparse.Namespace,
    out: Path,
    d: dict[str, Any],
    figs: dict[str, Any],
    lines: Callable[[dict[str, Any]], list[str]],
) -> int:
    """Write the levels' figures and levels.json into ``out``, then print ``lines(d)`` (or the JSON)."""
    from harness.players.picture import plt  # matplotlib, loaded by the plots already drawn

    for name, fig in figs.items():
        fig.savefig(out / name)
        plt.close(fig)
    (out / "levels.json").write_text(json.dumps(d, indent=2) + "\n")
    if args.json:
        print_json(d)
        return 0
    print("\n".join(lines(d)))
    print(f"wrote {out / 'levels.json'} and {', '.join(str(out / n) for n in figs)}")
    return 0


def _against_records(args: argparse.Namespace, lv: Any) -> int:  # lv: harness.players.levels.Levels
    """``--levels FILE --against-records LOGS`` (:mod:`harness.players.opponents`)."""
    # the analysis and evaluation (numba), scipy and matplotlib load only here, not for `calibrate --help`
    from harness.players.logged import read_logged
    from harness.players.opponents import held_out, text, tune
    from harness.players.picture import plot_held_out, plot_log_levels
    from harness.records.record import NoUsableGame
    from harness.game.rules import load_rules

    if args.against:
        raise UserError("give --against REF or --against-records LOGS, not both")
    _no_sampling_options(args, "--against-records")
    cache_dir = select_cache_dir(args.cache_dir)
    stream = stream_games(args.against_records, args)  # a batch at a time; bad games listed as they come
    try:
        logs = read_logged(stream, load_rules(lv.rules, list(lv.settings)), cache_dir)
    except NoUsableGame as exc:
        raise listed(exc, shown=len(stream.errors)) from None
    show_bad(logs.bad[len(stream.errors) :])
    say = None if args.json else progress_line
    header = [
        f"difficulty levels of {args.levels}: {lv.strategy} {lv.param} in [{lv.lo:g}, {lv.hi:g}], exact "
        f"responses against the players of {args.against_records} ({logs.games:,} games, {logs.players:,} "
        f"players)"
    ]

    def progress(line: str) -> None:  # the header once every level is checked: nothing printed for bad input
        if say:
            while header:
                say(header.pop())
            say(line)

    xtra = {k: v for k, v in (("max_evals", args.max_evals), ("xtol", args.xtol)) if v is not None}
    out = new_out_dir(args.out, "calibrate")
    if args.held_out:
        ho = held_out(
            lv, logs, args.split_seed, confidence=args.confidence, cache_dir=cache_dir, progress=progress, **xtra
        )
        res, extra = ho.tuning, {"held_out": ho.to_dict()}
    else:
        res, extra = tune(lv, logs, confidence=args.confidence, cache_dir=cache_dir, progress=progress, **xtra), {}
    d = res.to_dict() | extra
    figs = {"levels.png": plot_log_levels(d)}
    if args.held_out:
        figs["held_out.png"] = plot_held_out(d)
    return _written(args, out, d, figs, text)


def run(args: argparse.Namespace) -> int:
    # the calibration's job (the runner, the exact evaluation) loads when it runs, not for --help
    from harness.players.calibration_job import calibration_problem, run_calibration

    console_logging()
    select_cache_dir(args.cache_dir)
    if args.levels:
        return _levels(args)
    if args.against_records or args.held_out:
        raise UserError("--against-records and --held-out tune the levels of a levels file: give --levels FILE")
    if not args.strategy or not args.param:
        raise UserError("calibrate needs --strategy SPEC and --param NAME (or --levels FILE)")
    if (args.target_mean is None) == (args.target_win_rate is None):
        raise UserError("give exactly one of --target-mean X or --target-win-rate P (or --levels FILE)")
    if args.exact:
        _no_sampling_options(args)
    nan = float("nan")
    problem = calibration_problem(
        Problem(
            rules=args.rules,
            settings=tuple(args.settings),
            strategy=args.strategy,
            param=args.param,
            lo=nan if args.lo is None else args.lo,
            hi=nan if args.hi is None else args.hi,
            target_mean=args.target_mean,
            target_win_rate=args.target_win_rate,
            against=args.against,
            games=10_000 if args.games is None else args.games,
            seed=1 if args.seed is None else args.seed,
            tol=args.tol,
            xtol=args.xtol,
            max_evals=args.max_evals or 0,
            confidence=args.confidence,
            chunk_size=args.chunk_size,
            workers=args.workers,
            analyse=not args.no_analyse,
            exact=args.exact,
            precision=args.precision,
        )
    )
    if args.backend == "dask" and not problem.exact:
        raise UserError("--backend dask runs exact searches: add --exact (sampled calibration plays on --workers)")
    out = new_out_dir(args.out, "calibrate")
    unit = "points" if problem.kind == "mean" else ""

    def show(pt: Point) -> None:
        print(point_line(problem, pt), flush=True)

    def started(estimator: str, adjusted: bool) -> None:
        print(f"response: {estimator}" + ("" if adjusted else " (no luck adjustment)"))

    if not args.json:
        tgt = (
            f"mean {problem.target:g} points"
            if unit
            else f"score {problem.target:g} (win 1, draw ½) against {problem.against}"
        )
        how = (
            f"exact responses, to {problem.v_tol:g} in {args.param}"
            if problem.exact
            else f"{problem.games:,} games per evaluation, seed {problem.seed}"
        )
        where = (
            f"values {', '.join(map(str, problem.values))}"
            if problem.dial == "choice"
            else f"{problem.dial}s in [{problem.lo:g}, {problem.hi:g}]"
            if problem.dial == "integer"
            else f"[{problem.lo:g}, {problem.hi:g}]"
        )
        print(f"calibrating {args.strategy} {args.param} in {where} for {tgt}; {how}")
    with _on_tasks(args) as tasks_ev:
        res = run_calibration(
            problem,
            out,
            quiet=_quiet(args),
            evaluator=tasks_ev,
            on_start=None if args.json else started,
            on_point=None if args.json else show,
        )
    cal, d, png = res.calibration, res.data, res.png
    if args.json:
        print_json(d)
        return 0
    print("\n".join(result_lines(cal, d)))
    print(
        f"{len(cal.points)} {'exact ' if problem.exact else ''}evaluations"
        + ("" if cal.converged or not problem.exact else " (not converged)")
        + (
            f", final bracket [{cal.bracket[0]:.6g}, {cal.bracket[1]:.6g}]"
            if problem.dial == "float" and not problem.exact
            else ""
        )
        + f"; wrote {png} and calibration.json"
    )
    for n in d["notes"]:
        print(f"note: {n}")
    return 0


def point_line(problem: Problem, pt: Point) -> str:
    """One evaluated value: games, the response with its interval, the adjustment's variance factor
    and an engine's faults (or why the value is not used)."""
    scale, u = (1.0, " points") if problem.kind == "mean" else (100.0, " %")
    name = f"{problem.param}={pt.played if pt.played is not None else f'{pt.value:.10g}'}"
    if problem.exact:
        return f"  {name:<26} response {scale * pt.f:12.6f}{u} (exact)"
    if not pt.usable:
        return (
            f"  {name:<{len(problem.param) + 12}} {pt.games:>7,} games  not used for the root: {pt.why}"
            + _faults_text(pt)
        )
    vr = ""
    if pt.variance_reduction is not None:
        vr = "  variance / " + ("∞" if math.isinf(pt.variance_reduction) else f"{pt.variance_reduction:.3g}")
        if pt.beta is not None:
            vr += f", beta = {pt.beta:+.4f}"
    name = f"{problem.param}={pt.played if pt.played is not None else f'{pt.value:.6g}'}"
    return (
        f"  {name:<{len(problem.param) + 12}} {pt.games:>7,} games  response {scale * pt.f:8.3f}{u} "
        f"[{scale * pt.lo:.3f}, {scale * pt.hi:.3f}]{vr}{_faults_text(pt)}"
    )


def _faults_text(pt: Point) -> str:
    if pt.faults is None:
        return ""
    f = pt.faults
    kinds = [(k, f.get(f"faults_{k}", 0)) for k in ("time", "illegal", "crash", "stall")]
    bad = ", ".join(f"{k} {n:,}" for k, n in kinds if n)
    return (
        f"  faults: {bad} in {f.get('engine_decisions', 0):,} decisions, {f.get('corrupted', 0):,} corrupted games"
        if bad
        else "  faults: none"
    )


def result_lines(cal: Any, d: dict[str, Any]) -> list[str]:  # cal: harness.players.calibrate.Calibration
    """The answer: the value with its interval and the spec to copy (an integer or choice dial: the
    adjacent pair bracketing the target, each with its response and interval)."""
    problem = cal.problem
    scale, u = (1.0, " points") if problem.kind == "mean" else (100.0, " %")
    if problem.exact:
        lo_, hi_ = cal.value_ci
        return [
            f"{problem.param} = {cal.value:.10g}: exact response {scale * d['response']:.6f}{u} "
            f"(target {scale * problem.target:g}); the value hitting it lies in [{lo_:.10g}, {hi_:.10g}] "
            f"(within {problem.v_tol:g})  -> {d['spec']}"
        ]
    if cal.pair is not None:
        a, b = cal.pair
        out = [
            f"{problem.param}: the target {scale * problem.target:g}{u} lies between adjacent values"
            if cal.converged
            else f"{problem.param}: the nearest values measured around the target"
        ]
        for q in (a, b):
            out.append(
                f"  {problem.param}={problem.played(q.value)}: response {scale * q.f:.3f}{u} "
                f"[{scale * q.lo:.3f}, {scale * q.hi:.3f}]  -> {problem.spec_at(q.value)}"
            )
        out.append(f"{problem.param} = {problem.played(cal.value)} (nearer the target)  -> {d['spec']}")
        return out
    return [
        f"{problem.param} = {cal.value:.4g}  [{cal.value_ci[0]:.4g}, {cal.value_ci[1]:.4g}] "
        f"({100 * problem.confidence:.4g} %: sampling ±{cal.sampling_error:.2g}, search ±{cal.search_error:.2g})"
        f"  -> {d['spec']}"
    ]


def _quiet(args: argparse.Namespace) -> bool:
    """No progress bar of each evaluation's games with --json or when stderr is not a terminal
    (the line per evaluation stays: a bar would only fill a log)."""
    return bool(args.json) or not sys.stderr.isatty()

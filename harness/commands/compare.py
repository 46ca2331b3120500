"""``yatzy-harness compare``: paired comparison of two runs or run configs, with an SPRT verdict as exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.commands.options import (
    add_cache_dir_option,
    add_depth_mode_options,
    add_quality_options,
    add_set_option,
    confidence_arg,
    console_logging,
    describe,
    first_time,
    print_json,
    quality_options,
)
from harness.reports.compare import (
    DEFAULT_MIN_GAMES,
    DEFAULT_MU0,
    DEFAULT_MU1,
    CompareSettings,
    Playing,
    compare,
    compare_text,
)


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Compare CANDIDATE with BASE, game by game on the same dice: paired mean difference "
        "with CI, KS distribution test, per-box and rate changes, and an SPRT verdict. "
        "BASE/CANDIDATE are run directories or run configs (.toml or a configs/runs name), "
        "which are then played on the same seed. With --out DIR, also draws compare.png and "
        "compare_quality.png there. Exit code: 0 no change, 1 significant change, "
        "2 inconclusive (usage errors also exit 2, with a message on stderr). With --exact, for "
        "solitaire bots: the exact difference per bot (mean, sd, percentiles, P(bonus), P(yatzy), "
        "box means, win rates), no games played; BASE/CANDIDATE may then also be rule sets; "
        "with two run directories their sampled figures are shown beside, each flagged when its "
        "interval misses the exact value. Exit code 0/1 from the exact difference. Both rule sets' "
        "exact depth of skill side by side, by default when cached or small (--depth, --no-depth).",
        "yatzy-harness compare results/bonus63 results/bonus62",
        "yatzy-harness compare configs/runs/bonus63.toml configs/runs/bonus62.toml --games 20000 --out results/cmp",
        "yatzy-harness compare bonus63 bonus62 --sequential --games 1000 --max-games 100000",
        "yatzy-harness compare results/a results/b --entrant greedy --json",
        "yatzy-harness compare --exact bonus63 bonus62 --entrants greedy,solver",
        "yatzy-harness compare --exact scandinavian scandinavian --entrants greedy --candidate-entrants bonus",
        "yatzy-harness compare --exact results/bonus63 results/bonus62",
    )
    p.add_argument("base", metavar="BASE", help="run directory or run config")
    p.add_argument("candidate", metavar="CANDIDATE", help="run directory or run config")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--mu0", type=float, default=DEFAULT_MU0, metavar="POINTS", help="SPRT H0: mean difference in points"
    )
    p.add_argument(
        "--mu1",
        type=float,
        default=DEFAULT_MU1,
        metavar="POINTS",
        help="SPRT H1: mean difference in points (mirrored unless --one-sided)",
    )
    p.add_argument("--alpha", type=float, default=0.05, metavar="A", help="false-alarm rate")
    p.add_argument("--beta", type=float, default=0.05, metavar="B", help="miss rate at mu1")
    p.add_argument("--one-sided", action="store_true", help="test only H1: diff = mu1 (not its mirror)")
    p.add_argument(
        "--min-games", type=int, default=DEFAULT_MIN_GAMES, metavar="N", help="fewest paired games for a verdict"
    )
    p.add_argument("--confidence", type=confidence_arg, default=0.95, metavar="C", help="interval confidence")
    p.add_argument("--entrant", metavar="LABEL", help="compare only the seats holding this entrant")
    p.add_argument(
        "--unpaired",
        action="store_true",
        help="allow runs played on different seeds (independent games, not the same dice)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="play --games (default: the chunk size) more games at a time until the SPRT decides",
    )
    p.add_argument("--max-games", type=int, metavar="N", help="with --sequential: most games per lineup")
    p.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="games per lineup when playing configs (with --sequential: games per step)",
    )
    p.add_argument("--seed", type=int, metavar="S", help="root seed for both sides (default: BASE's)")
    p.add_argument("--chunk-size", type=int, metavar="N", help="games per chunk when playing configs")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes when playing configs")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where played runs go (DIR/base, DIR/candidate) and the pictures: DIR/compare.png (score "
        "distributions and paired differences), DIR/compare_quality.png (game quality)",
    )
    p.add_argument("--no-plots", action="store_true", help="with --out: skip the PNG pictures (faster)")
    p.add_argument("--quiet", action="store_true", help="no progress bars while playing")
    p.add_argument(
        "--no-analyse",
        action="store_true",
        help="plain comparison: play configs without the luck analysis and ignore the runs' luck columns "
        "(by default played configs are analysed and runs that carry luck are compared luck-adjusted)",
    )
    add_quality_options(p)
    add_depth_mode_options(p)
    add_cache_dir_option(p)
    x = p.add_argument_group("exact (--exact: solitaire bots, no sampling)")
    x.add_argument(
        "--exact",
        action="store_true",
        help="the exact difference per bot; BASE/CANDIDATE: run directories, run configs or rule sets",
    )
    x.add_argument(
        "--entrants",
        metavar="A,B,...",
        help="the bots compared (one table of them; a rule set side needs it; replaces a config's tables)",
    )
    x.add_argument(
        "--candidate-entrants",
        metavar="A,B,...",
        help="CANDIDATE's bots instead, paired with --entrants seat by seat (a change of bot)",
    )
    add_set_option(x)
    x.add_argument(
        "--candidate-set",
        dest="candidate_settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule setting of CANDIDATE only, after --set (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.util.cache import select_cache_dir
    from harness.util.errors import UserError

    console_logging()
    select_cache_dir(args.cache_dir)
    exact_only = ("entrants", "candidate_entrants", "settings", "candidate_settings")
    if not args.exact and any(getattr(args, k) for k in exact_only):
        raise UserError("--entrants, --candidate-entrants, --set and --candidate-set are options of --exact")
    settings = CompareSettings(
        mu0=args.mu0,
        mu1=args.mu1,
        alpha=args.alpha,
        beta=args.beta,
        two_sided=not args.one_sided,
        confidence=args.confidence,
        entrant=args.entrant,
        min_games=args.min_games,
        unpaired=args.unpaired,
        adjust=not args.no_analyse,
        quality=quality_options(args),
    )
    if args.exact:
        return _exact(args, settings)
    playing = Playing(
        games=args.games,
        seed=args.seed,
        chunk_size=args.chunk_size,
        workers=args.workers,
        out=Path(args.out) if args.out else None,
        quiet=args.quiet or not sys.stderr.isatty(),
        sequential=args.sequential,
        max_games=args.max_games,
    )
    from harness.records.rundir import load_run

    res = compare(args.base, args.candidate, settings, playing)
    depth = _depths(args, load_run(res.base["path"]).rules, load_run(res.candidate["path"]).rules)
    pngs = []
    if args.out and not args.no_plots:
        from harness.reports.plot import COMPARE_PLOTS, save_plots  # matplotlib (~0.3 s) only when pictures are drawn

        pngs = save_plots(COMPARE_PLOTS, res, args.out)
    if args.json:
        print_json({**res.to_dict(), **({"depth": depth} if depth else {})})
    else:
        print(compare_text(res))
        _print_depths(depth)
        if pngs:
            print(f"\nwrote {', '.join(p.name for p in pngs)} to {args.out}")
    return res.exit_code


def _exact(args: argparse.Namespace, settings: CompareSettings) -> int:
    # the exact comparison loads the evaluation's numba kernels: imported here, not for `compare --help`
    from harness.reports.compare_exact import SideChanges, compare_exact, exact_text
    from harness.util.errors import UserError
    from harness.play.runconfig import split_specs

    played = [
        f"--{k.replace('_', '-')}"
        for k in ("sequential", "max_games", "games", "seed", "chunk_size", "workers", "out")
        if getattr(args, k)
    ]
    if played:
        raise UserError(f"--exact plays no games: drop {', '.join(played)}")
    r_entrants = split_specs(args.entrants) if args.entrants else None
    r_cand = split_specs(args.candidate_entrants) if args.candidate_entrants else None
    changes = SideChanges(r_entrants, r_cand, args.settings, args.candidate_settings)
    r = compare_exact(args.base, args.candidate, settings, changes=changes, progress=False)
    b, c = changes.sides(args.base, args.candidate)
    depth = _depths(args, b.rules, c.rules)
    if args.json:
        print_json({**r, **({"depth": depth} if depth else {})})
    else:
        print(exact_text(r))
        _print_depths(depth)
    return r["exit_code"]


def _depths(args: argparse.Namespace, base: Any, candidate: Any) -> dict[str, Any] | None:
    """Both rule sets' depth of skill as --depth/--no-depth allow (None: --no-depth)."""
    from harness.studies.depth import side_by_side

    return None if args.depth == "off" else side_by_side(base, candidate, args.depth)


def _print_depths(depth: dict[str, Any] | None) -> None:
    from harness.studies.depth import side_by_side_lines

    if not depth:
        return
    # a side's note (why no depth of skill) once in this process: the not-cached one would come back
    # with every compare of the rule sets until the command it names is run
    said = {w for w in {x.get("why") for x in depth.values()} if w and not first_time(w)}
    shown = {k: ({**x, "why": None} if x.get("why") in said else x) for k, x in depth.items()}
    for line in side_by_side_lines(shown):
        print(line)

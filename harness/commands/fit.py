"""``yatzy-harness fit``: maximum-likelihood fit of player models (the solver bot's dial, an extended family) to
players' recorded decisions."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.commands.options import (
    add_cache_dir_option,
    add_records_options,
    confidence_arg,
    describe,
    listed,
    number_arg,
    print_json,
    quiet,
    stream_games,
)
from harness.util.errors import UserError


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Maximum-likelihood fit of the solver bot's dial to each player's recorded decisions "
        "(and to all players pooled): P(option) = blunder/n + (1 - blunder) x softmax(value / "
        "temperature) over the n legal options, the bot's own rule on the exact option values. "
        "Prints each parameter with its profile-likelihood interval, decisions used, "
        "log-likelihood per decision, top-choice agreement, a goodness-of-fit verdict (a player "
        "outside the family is flagged POOR) and the fitted spec for --seats. A fit below the "
        "minimum of evidence (--min-decisions, --max-half-width) is 'too little data': never ok, "
        "never the median player, refused by calibrate --against. --model kinds, mixed or paced fits "
        "the extended family (a temperature per decision kind; a weight between each option's exact "
        "value and its myopic value, the best box score reachable this turn, or its paced value, its "
        "value to a player who plays for the upper bonus), for players the dial cannot explain; several models are compared per player on held-out games. With two players or more, "
        "the population's skill bands (analyse's rating of regret per decision, the bands a levels "
        "file targets). Bad games are listed on stderr and skipped.",
        "yatzy-harness fit results/sg --model solver:temperature",
        "yatzy-harness fit games.jsonl --model solver:temperature,blunder --player alice",
        "yatzy-harness fit results/pop --out results/pop/fit.json --json",
        "yatzy-harness fit results/pop --model all --plot results/pop/population.png",
    )
    p.add_argument(
        "source",
        metavar="RECORDS",
        help="a .jsonl, .jsonl.gz or .parquet file of game records, or a run directory played with --record",
    )
    p.add_argument(
        "--model",
        default="solver:temperature,blunder",
        metavar="MODEL",
        help="the model to fit: the solver's dial (solver:temperature, solver:blunder, or "
        "solver:temperature,blunder = dial, the default), or the extended family: kinds (a "
        "temperature for keeps, one for boxes, a blunder rate) and mixed (utility = (1 - weight) x "
        "exact value + weight x myopic value, the best box score reachable this turn; and the "
        "parameters of kinds) and paced (the same with the paced value, the option's value to a "
        "player who plays for the upper bonus as the bonus bot does); several joined by '+' "
        "(dial+mixed), or all (dial+kinds+paced+mixed): each player's models then compared on "
        "held-out games",
    )
    p.add_argument(
        "--holdout-seed",
        metavar="N",
        type=number_arg(minimum=0, inclusive=True, integer=True),
        default=1,
        help="the seed of the held-out split of each player's seat-games in halves (several models; "
        "default %(default)s)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the population picture (players' regret per decision "
        "with its skill bands, and their fitted parameters) as PNG here",
    )
    p.add_argument("--player", metavar="NAME", help="only this player (a person's name or a bot's label)")
    p.add_argument("--confidence", metavar="C", type=confidence_arg, default=0.95, help="interval confidence")
    # the defaults are harness.players.fit.MIN_DECISIONS and MAX_HALF_WIDTH (not imported here: `fit --help`
    # must not load numba; tests/test_fit.py holds the two equal)
    p.add_argument(
        "--min-decisions",
        metavar="N",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=500,
        help="the fewest informative decisions a fit is an answer with (below: too little "
        "data; default %(default)s, where the tests reliably flag greedy)",
    )
    p.add_argument(
        "--max-half-width",
        metavar="F",
        type=number_arg(),
        default=0.25,
        help="the widest interval a fit is an answer with, as half-width / estimate (an estimate "
        "below 0.1 for a temperature, 0.02 for a blunder rate, counts as that; default "
        "%(default)s)",
    )
    # the default is harness.players.fit.MAX_MEMORY in GiB (tests/test_fit.py holds the two equal)
    p.add_argument(
        "--max-memory",
        metavar="GIB",
        type=number_arg(inclusive=True),
        default=0.125,
        help="the most memory (GiB) the stored decisions take; beyond it they go to a scratch file in "
        "the temporary directory (TMPDIR), read back a block at a time and removed when the fit ends: "
        "the same figures, and memory that does not grow with the log (0: all on disk)",
    )
    p.add_argument("--out", metavar="FILE", help="also write the fit as JSON here (calibrate --against FILE)")
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    add_records_options(p)
    add_cache_dir_option(p)


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `fit --help` must not pay for numba and scipy
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.players.fit import FitOptions, fit_records, parse_models, text
    from harness.records.record import NoUsableGame

    if args.plot and args.player:
        raise UserError("--plot draws the population: it takes every player, not --player")
    cache_dir = select_cache_dir(args.cache_dir)
    model = "+".join(parse_models(args.model))
    stream = stream_games(args.source, args)  # read a batch at a time while the decisions are stored
    try:
        options = FitOptions(
            confidence=args.confidence,
            min_decisions=args.min_decisions,
            max_half_width=args.max_half_width,
            quiet=quiet(args),
            holdout_seed=args.holdout_seed,
            max_memory=int(args.max_memory * 2**30),
        )
        rep = fit_records(stream, model, player=args.player, cache_dir=cache_dir, options=options)
    except NoUsableGame as exc:
        raise listed(exc, shown=len(exc.bad)) from None  # each listed as its batch was read
    d = rep.to_dict()
    if args.out:
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(d, indent=2) + "\n")
        except OSError as exc:
            raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    if args.plot:
        # matplotlib loads only when there is a plot to draw, not for `fit --help`
        from harness.reports.plot import plot_population, plt

        fig = plot_population(d)
        if fig is None:
            raise UserError("--plot: a population picture needs two players or more with decisions")
        try:
            Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(args.plot)
        except OSError as exc:
            raise UserError(f"cannot write {args.plot}: {exc.strerror or exc}") from None
        finally:
            plt.close(fig)
    if args.json:
        print_json(d)
        return 0
    print(text(d))
    for what, where in (("wrote", args.out), ("drew", args.plot)):
        if where:
            print(f"\n{what} {where}")
    return 0

"""``yatzy-harness run``: play a run, a tournament or a gauntlet into a run directory (or resume one)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from harness.commands.options import add_cache_dir_option, add_set_option, console_logging, describe, end_bars
from harness.util.errors import UserError
from harness.play.runconfig import (
    CLI_SOURCE,
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_SIZE,
    MAX_SEATS,
    MIN_TABLE,
    RunConfig,
    resolve_config_path,
    seats_from_text,
)


def configure(p: argparse.ArgumentParser) -> None:
    d = RunConfig.__dataclass_fields__
    describe(
        p,
        "Play seeded games into a run directory (manifest.json + Parquet chunks). Flags override "
        "CONFIG's keys. With no CONFIG, --seats, --entrants or --candidate say what to play and "
        "the other keys take the values marked 'no CONFIG'; with none of those three either, "
        "configs/runs/quick.toml is played.",
        "yatzy-harness run                                        # configs/runs/quick.toml, ~10 s",
        "yatzy-harness run --seats greedy,random --games 100000 --seed 7 --out results/gr",
        "yatzy-harness run --entrants random,timeout,greedy,bonus --table 4 --games 200000",
        "yatzy-harness run --candidate greedy --entrants random,timeout --games 500000",
        "yatzy-harness run configs/runs/round_robin.toml --games 1000000 --workers 2",
        "yatzy-harness run --resume results/gr --games 200000      # finish or grow a run",
    )
    p.add_argument("config", nargs="?", metavar="CONFIG", help="run config .toml (or the name of one in configs/runs)")
    p.add_argument("--rules", metavar="RULES", help=f"rule set name or .toml path (no CONFIG: {d['rules'].default})")
    add_set_option(p)
    p.add_argument(
        "--seats",
        action="append",
        metavar="A,B,...",
        help="one table with these bots (mode run), e.g. greedy,random or 'solver:temperature=0.5,greedy'; "
        "with one bot, that bot plays alone (a solitaire run: its own scores, no opponent; a note "
        "on stderr says so)",
    )
    p.add_argument(
        "--entrants",
        action="append",
        metavar="A,B,...",
        help="round-robin tournament of these bots; with --candidate (or a gauntlet CONFIG) the field",
    )
    p.add_argument("--candidate", metavar="SPEC", help="gauntlet: this bot against each of --entrants")
    p.add_argument(
        "--table",
        type=int,
        metavar="N",
        help=f"seats per tournament table, {MIN_TABLE}..{MAX_SEATS} (no CONFIG: {d['table'].default})",
    )
    p.add_argument("--games", type=int, metavar="N", help=f"games per lineup (no CONFIG: {d['games'].default:,})")
    p.add_argument("--seed", type=int, metavar="N", help=f"root seed, 0..2**64-1 (no CONFIG: {d['seed'].default})")
    p.add_argument(
        "--chunk-size",
        type=int,
        metavar="N",
        help=f"games per chunk, 1..{MAX_CHUNK_SIZE:,} (no CONFIG: {DEFAULT_CHUNK_SIZE:,})",
    )
    p.add_argument("--workers", type=int, metavar="N", help="worker processes, 0 = every core (no CONFIG: 0)")
    p.add_argument("--backend", choices=["local", "dask"], help="local processes or a Dask cluster (no CONFIG: local)")
    p.add_argument(
        "--scheduler", metavar="ADDR", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (implies --backend dask)"
    )
    add_cache_dir_option(p)
    p.add_argument(
        "--record",
        action="store_true",
        help="also write every roll and decision of every game into DIR/records/ (Parquet, one row per "
        "seat-turn; about 95 bytes per seat-game on scandinavian, 190 MB per million two-seat "
        "games; any run size)",
    )
    p.add_argument(
        "--analyse",
        action="store_true",
        help="add each seat-game's exact luck and regret (columns luck, regret, decisions, errors, "
        "keep_decisions, keep_regret, upper_regret, max_regret; needs the rule set's solved table; "
        "about 0.25 ms a seat-game on one core, see BENCHMARKS.md)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="run directory (default: results/<CONFIG name>-<time>; results/run-<time> with no CONFIG)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="when a bot fails, print its traceback here too (it is always in the run's run.log)",
    )
    p.add_argument("--resume", metavar="DIR", help="finish (or, with a larger --games, extend) the run in DIR")
    p.add_argument(
        "--continue-disqualified",
        action="store_true",
        help="with --resume: play on a run stopped because an engine was disqualified (the manifest "
        "records that you did, and reports say so)",
    )


def overrides_from_args(args: argparse.Namespace, base: RunConfig | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The config keys the flags set, and the flag each came from (for error messages).

    ``base`` is the config file's (or resumed run's) config, None when flags alone describe the
    run. A flag overrides its key; the mode follows the what-to-play flag. Flags that ask for two
    different things are refused rather than resolved.
    """
    seats, entrants, cand, table = args.seats, args.entrants, args.candidate, args.table
    if seats and entrants:
        raise UserError(
            "--seats and --entrants do not combine: --seats plays one table (mode run), --entrants "
            "a round-robin tournament (or, with --candidate, the field of a gauntlet)"
        )
    if seats and cand:
        raise UserError(
            "--seats and --candidate do not combine: --seats plays one table (mode run), "
            "--candidate a gauntlet against --entrants"
        )
    if table is not None and seats:
        raise UserError(
            f"--table does not go with --seats: the table is the {len(seats_from_text(seats))} "
            f"bot(s) given (--table is the table size of a tournament)"
        )
    if table is not None and cand:
        raise UserError("--table does not go with --candidate: a gauntlet plays 2-seat tables")
    if table is not None and not entrants and base is not None and base.mode != "tournament":
        raise UserError(
            f"--table is the table size of a tournament, but {base.source} plays mode {base.mode}: "
            f"give --entrants for a tournament"
        )
    plain = {
        "rules": args.rules,
        "games": args.games,
        "seed": args.seed,
        "chunk_size": args.chunk_size,
        "workers": args.workers,
        "backend": args.backend,
        "scheduler": args.scheduler,
        "table": table,
        "cache_dir": args.cache_dir,
        "record": True if args.record else None,
        "analyse": True if args.analyse else None,
    }
    ov = {k: v for k, v in plain.items() if v is not None}
    origins = {k: "--" + k.replace("_", "-") for k in ov}
    default_table = RunConfig.__dataclass_fields__["table"].default
    if seats:
        ov.update(mode="run", seats=tuple(seats_from_text(seats)), entrants=(), candidate=None, table=default_table)
        origins.update(mode="--seats", seats="--seats")
    elif cand:
        field_ = tuple(seats_from_text(entrants)) if entrants else ()
        if not field_ and (base is None or base.mode == "run"):
            raise UserError(
                "--candidate needs --entrants, the field it plays against"
                + (f" ({base.source} has none)" if base is not None else "")
            )
        ov.update(mode="gauntlet", candidate=cand, seats=(), table=default_table)
        origins.update(mode="--candidate", candidate="--candidate")
        if field_:
            ov["entrants"] = field_
            origins["entrants"] = "--entrants"
    elif entrants:
        ov["entrants"] = tuple(seats_from_text(entrants))
        origins["entrants"] = "--entrants"
        if base is None or base.mode == "run":  # a gauntlet config keeps its candidate: --entrants is its field
            ov.update(mode="tournament", seats=(), candidate=None)
            origins["mode"] = "--entrants"
    if args.scheduler and not args.backend:
        ov["backend"] = "dask"
        origins["backend"] = "--scheduler"
    if args.backend == "local" and not args.scheduler and base is not None and base.scheduler:
        ov["scheduler"] = None  # a Dask run resumed (or a Dask config run) on this machine: its address is moot
        origins["scheduler"] = "--backend"
    for kv in args.settings:
        origins[f"settings.{kv.split('=', 1)[0].strip()}"] = "--set"
    return ov, origins


def run(args: argparse.Namespace) -> int:
    # the engine is imported here, not at the top: `run --help` must not pay for numba and pandas
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.game.rules import parse_overrides
    from harness.play.runner import RunDirNotEmpty, RunStopped, config_of, load_manifest, run as play
    from harness.play.summary import summary_lines

    console_logging()  # warnings on the console; a failure's traceback only in run.log (or --verbose)
    what = args.seats or args.entrants or args.candidate
    if args.continue_disqualified and not args.resume:
        raise UserError("--continue-disqualified goes with --resume DIR (a run stopped by a disqualification)")
    if args.resume:
        out = Path(args.resume)
        if args.out and Path(args.out) != out:
            raise UserError("--resume DIR runs in DIR: leave out --out (or give the same directory)")
        manifest = load_manifest(out)
        base: RunConfig | None = (
            RunConfig.from_toml(resolve_config_path(args.config)) if args.config else config_of(manifest, out)
        )
    elif args.config:
        base = RunConfig.from_toml(resolve_config_path(args.config))
    elif not what:
        base = RunConfig.from_toml(resolve_config_path("quick"))  # the bare `yatzy-harness run`
    else:
        base = None  # flags alone: RunConfig's own (documented) defaults, nothing from quick.toml
    ov, origins = overrides_from_args(args, base)
    if args.settings:
        ov["settings"] = {**(base.settings if base is not None else {}), **parse_overrides(args.settings)}
    if base is None:
        cfg = RunConfig(**ov, source=CLI_SOURCE, name="run", origins=origins)
    else:
        cfg = dataclasses.replace(base, **ov, origins={**base.origins, **origins})
    out_dir = out if args.resume else (Path(args.out) if args.out else cfg.default_out())
    quiet = args.quiet
    # allowed, not refused: a solitaire run is a use of its own (a bot's score distribution, the
    # exact figures beside it); but `--seats greedy` may also be a match with its second bot
    # forgotten, so it is said, once, where the one who typed it looks
    solo = cfg.seats[0] if args.seats and len(cfg.seats) == 1 else None
    if not quiet or solo:
        cfg.resolve()  # a bad bot or rule set fails here, before we announce anything
    if solo:
        print(
            f"note: one seat: {solo} plays alone (solitaire); give two specs for a match, e.g. "
            f"--seats {solo},{'random' if solo != 'random' else 'greedy'}",
            file=sys.stderr,
        )
    if not args.resume and out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        from harness.records.rundir import MANIFEST  # (the runner refuses it too, after its set-up)

        hint = f"; resume it with --resume {out_dir}" if (out_dir / MANIFEST).is_file() else ""
        raise UserError(f"{out_dir} exists and is not empty{hint}, or choose another --out")
    if not quiet:
        print(f"playing into {out_dir}", flush=True)
    t0 = time.monotonic()
    try:
        # the bar only on a terminal: in a log file it would be a line of carriage returns
        play(
            cfg,
            out_dir,
            quiet=quiet or not sys.stderr.isatty(),
            resume=bool(args.resume),
            continue_disqualified=args.continue_disqualified,
        )
    except RunDirNotEmpty as exc:  # the library's words, with this command's flags
        hint = f"; resume it with --resume {exc.out}" if exc.resumable else ""
        raise UserError(f"{exc.out} exists and is not empty{hint}, or choose another --out") from None
    except RunStopped as exc:
        exc.verbose = args.verbose  # cli.main prints the block (and the traceback with --verbose)
        raise
    except KeyboardInterrupt as exc:
        end_bars()  # the runner closes its bar; one a step before it left drawn would hold this line
        kept = getattr(exc, "kept", None)
        said = f"{kept:,} of {exc.total:,} games kept; " if kept is not None else ""  # type: ignore[attr-defined]
        print(f"yatzy-harness: interrupted: {said}continue with: yatzy-harness run --resume {out_dir}", file=sys.stderr)
        return 130
    dt = time.monotonic() - t0
    manifest = load_manifest(out_dir)
    played = manifest["games"] * len(manifest["lineups"])
    print(
        f"results: {out_dir}  ({len(manifest['lineups'])} lineup(s) x {manifest['games']:,} games, "
        f"{manifest['kind']}, rules {manifest['rules']['name']}, seed {manifest['seed']}; {dt:.1f} s"
        f"{'' if args.resume else f', {played / max(dt, 1e-9):,.0f} games/s'})"
    )
    for line in summary_lines(manifest):
        print(line)
    print(f"full report: yatzy-harness report {out_dir}")
    return 0

"""Options of exact evaluations: the forward pass's score windows (memory, disk), the depth of
skill's ladder, where the evaluations run (``--backend``, ``--workers``) and their progress lines.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.commands.options.argtypes import number_arg
from harness.commands.options.output import say
from harness.util.address import parse_scheduler
from harness.util.errors import UserError


def add_window_options(p: argparse.ArgumentParser, disk_note: str) -> None:
    """``--max-memory``, ``--max-disk``, ``--scratch-dir``: where a forward pass's score windows go
    (in memory, else in memory-mapped files, else not at all: ``disk_note`` says what then)."""
    p.add_argument(
        "--max-memory",
        type=number_arg(),
        default=3.0,
        metavar="GIB",
        help="largest score-distribution working set kept in memory; beyond it the working set "
        "goes to memory-mapped files in --scratch-dir",
    )
    p.add_argument(
        "--max-disk",
        type=number_arg(inclusive=True),
        default=64.0,
        metavar="GIB",
        help=f"largest working set put on disk, 0 = never; beyond it (or beyond the free space) "
        f"{disk_note} (maxi needs 33)",
    )
    p.add_argument(
        "--scratch-dir",
        default=None,
        metavar="DIR",
        help="directory of the disk-backed working set (default: the cache directory); "
        "its files are unlinked at once, so nothing is left behind",
    )


def window_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`add_window_options`'s flags (bytes) for the library."""
    return {
        "max_bytes": int(args.max_memory * 2**30),
        "max_disk_bytes": int(args.max_disk * 2**30),
        "scratch_dir": args.scratch_dir,
    }


#: The depth of skill's defaults, :data:`harness.studies.chain.DEFAULT_RATES`, ``DEFAULT_WEAKEST`` and
#: ``DEFAULT_DIAL``, and the names of its :data:`harness.studies.chain.DIALS` (repeated here so that ``--help`` does not import the library; tests/test_depth.py
#: checks that they agree).
DEPTH_RATES = "0.6,0.75"
DEPTH_WEAKEST = "random"
DEPTH_DIAL = "solver:temperature"
DEPTH_DIALS = ("solver:temperature", "solver:blunder")


def add_depth_mode_options(p: argparse.ArgumentParser) -> None:
    """``--depth`` / ``--no-depth`` of ``report`` and ``compare`` (``args.depth``: "on", "off" or
    "auto", :data:`harness.studies.depth.MODES`): the exact depth of skill of the rule sets."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--depth",
        dest="depth",
        action="store_const",
        const="on",
        default="auto",
        help="the exact depth of skill of the rule set(s) (steps at 60 %% and 75 %% up the solver's "
        "temperature dial from random) even where it is costly (dozens of softmax evaluations: a "
        "minute to hours of CPU; cached); by default shown when every evaluation is cached or the "
        "rule set is small, else a note says so",
    )
    g.add_argument("--no-depth", dest="depth", action="store_const", const="off", help="no depth of skill")


def add_depth_options(p: argparse.ArgumentParser) -> None:
    """The depth of skill's ladder and rates (``evaluate --depth``, ``sweep``) and the workers that
    evaluate; the command then reads them with :func:`depth_settings`."""
    p.add_argument(
        "--rates",
        default=DEPTH_RATES,
        metavar="P,...",
        help="depth of skill: the score rate of every step of a chain, one chain per rate "
        "(60 %%: Garfield/Elias's skill chain; 75 %%: Robertie's complexity number)",
    )
    p.add_argument(
        "--weakest", default=DEPTH_WEAKEST, metavar="BOT", help="depth of skill: the ladder's bottom, any solitaire bot"
    )
    p.add_argument(
        "--dial",
        default=DEPTH_DIAL,
        metavar="BOT:PARAM",
        help=f"depth of skill: the dial the ladder climbs to the optimal bot ({' or '.join(DEPTH_DIALS)})",
    )
    p.add_argument(
        "--candidates",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=1,
        metavar="K",
        help="depth of skill: dial values evaluated at once in the first round of a level's root-finding (1: "
        "one at a time; 2 or more cut a level's rounds in a row from about three to two on a cluster, "
        "for a few more evaluations; the chain depends on K, never on the workers; docs/cluster.md)",
    )
    p.add_argument(
        "--workers",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=2,
        metavar="N",
        help="exact evaluations run on N forked processes at once (1: in this process), or with "
        "--backend dask on a LocalCluster of N workers",
    )


def add_backend_options(p: argparse.ArgumentParser, *, dry_run: bool = False) -> None:
    """Where exact evaluations run (:mod:`harness.jobs.cluster`): ``--backend local`` (``--workers``
    forked processes) or ``--backend dask`` (``--scheduler ADDR``, or a LocalCluster of
    ``--workers`` processes); the command opens it with :func:`exact_tasks`."""
    p.add_argument(
        "--backend",
        choices=("local", "dask"),
        default="local",
        help="where exact evaluations run: local processes, or tasks on a Dask cluster (one evaluation "
        "a task; value tables solved once into the shared --cache-dir; docs/cluster.md)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="--backend dask: the scheduler's address (default: a LocalCluster of --workers processes); "
        "every worker must see the same --cache-dir and run the same harness code (checked)",
    )
    p.add_argument(
        "--worker-threads",
        type=number_arg(minimum=1, inclusive=True, integer=True),
        default=1,
        metavar="N",
        help="--backend dask: numba and solver threads of each worker (default 1: a task a core)",
    )
    p.add_argument(
        "--worker-memory",
        default="3GiB",
        metavar="SIZE",
        help="--backend dask: memory limit of each LocalCluster worker",
    )
    if dry_run:
        p.add_argument(
            "--dry-run",
            action="store_true",
            help="print how many evaluations (and table solves) the job needs, how many are cached and "
            "about how much CPU the rest takes, then stop",
        )


def exact_tasks(args: argparse.Namespace, workers: int | None = None) -> Any:
    """The :func:`harness.jobs.cluster.open_tasks` of :func:`add_backend_options` (a context manager)."""
    from harness.jobs.cluster import open_tasks

    n = getattr(args, "workers", 1) if workers is None else workers
    if args.backend != "dask" and args.scheduler:
        raise UserError("--scheduler is for --backend dask")
    if args.scheduler:
        parse_scheduler(args.scheduler)  # a malformed address: one line before any set-up
    return open_tasks(
        args.backend, n or 1, args.scheduler, threads=args.worker_threads, memory_limit=args.worker_memory
    )


def shows_progress(args: argparse.Namespace) -> bool:
    """A progress bar over the tasks: on a terminal's stderr, not with --json or --quiet."""
    return not getattr(args, "json", False) and not getattr(args, "quiet", False) and sys.stderr.isatty()


def depth_settings(args: argparse.Namespace) -> tuple[tuple[float, ...], str, str]:
    """(rates, weakest bot, dial) of :func:`add_depth_options`, the rates checked."""
    from harness.studies.depth import check_rates, dial_of

    try:
        rates = [float(x) for x in args.rates.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--rates: expected numbers like 0.6,0.75, got {args.rates!r}") from None
    dial = args.dial.strip()
    dial_of(dial)  # a known dial, before any work
    return check_rates(rates), args.weakest.strip(), dial


def evaluated_line(rules: Any, spec: str, ev: Any) -> None:
    """A progress line on stdout for one exact evaluation (:class:`harness.exact.evaluate.Evaluation`)
    of a bot on a rule set, with its setting overrides; nothing for one from the cache."""
    if ev.cached:
        return
    at = " ".join(f"{k}={v}" for k, v in rules.overrides.items())
    say(f"evaluated {ev.bot}{f' at {at}' if at else ''}: mean {ev.mean:.6f} ({ev.seconds:.1f} s)")

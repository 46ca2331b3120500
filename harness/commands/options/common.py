"""Options many commands take: rule-setting overrides (``--set``), the cache directory
(``--cache-dir``), the game-quality thresholds, and a command's own output directory (``--out``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.util.cache import CACHE_ENV
from harness.util.errors import UserError

if TYPE_CHECKING:
    from harness.reports.quality import QualityOptions


def add_set_option(p: argparse.ArgumentParser) -> None:
    """The repeatable ``--set KEY=VALUE`` rule-setting override."""
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a rule setting (repeatable), e.g. --set upper_bonus_threshold=62",
    )


def add_cache_dir_option(p: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR``: where solved value tables and keep policies are found and written.

    The command then calls :func:`harness.util.cache.select_cache_dir` with ``args.cache_dir`` before it
    makes any bot.
    """
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help=f"solver cache directory: value tables and keep policies are read and written here "
        f"(default: ${CACHE_ENV}, else $XDG_CACHE_HOME/yatzy-harness or ~/.cache/yatzy-harness)",
    )


def add_quality_options(p: argparse.ArgumentParser) -> None:
    """The game-quality thresholds as command-line options (``report`` and ``compare``)."""
    # imported here: the two commands that take these options pay for numpy, not every command's --help
    from harness.reports.quality import QualityOptions

    d = QualityOptions()
    p.add_argument(
        "--close-margin",
        type=int,
        default=d.close_margin,
        metavar="POINTS",
        help=f"game quality: a close game is won by at most POINTS (default {d.close_margin})",
    )
    p.add_argument(
        "--comeback-deficit",
        type=int,
        default=d.comeback_deficit,
        metavar="POINTS",
        help="game quality: a comeback is a win by a seat POINTS or more behind after round 10 "
        f"(default {d.comeback_deficit})",
    )


def quality_options(args: argparse.Namespace) -> QualityOptions:
    from harness.reports.quality import QualityOptions

    return QualityOptions(close_margin=args.close_margin, comeback_deficit=args.comeback_deficit)


def new_out_dir(path: str | None, prefix: str) -> Path:
    """``--out`` of a command that writes a directory of its own: the given one (new or empty) or
    ``results/<prefix>-<time>``; made here, so that an unwritable place fails before any work."""
    out = Path(path) if path else Path("results") / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} exists and is not empty; choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc.strerror or exc}") from None
    return out

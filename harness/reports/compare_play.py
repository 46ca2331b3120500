"""Playing the two sides of a comparison: a run config on either side is played (both on one seed,
analysed unless it cannot be) before the run directories are compared, at once or a step at a time
until the SPRT decides (``compare --sequential``).

The method is described in :mod:`harness.reports.compare`, which gives every public name of this
module.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.game.rules import load_rules
from harness.play.runconfig import RunConfig, resolve_config_path
from harness.records.rundir import load_manifest
from harness.reports.comparison import Comparison, ComparisonResult, compare_runs
from harness.reports.paired import CompareSettings


@dataclass(frozen=True)
class Playing:
    """How :func:`compare` plays BASE or CANDIDATE when it is a run config (both on one seed).

    ``games``: games per lineup (with ``sequential``: games per step; default the config's games,
    or its chunk size per step); ``seed``: both sides' root seed (default BASE's); ``out``: where
    the played runs go (``out/base``, ``out/candidate``; default ``results/compare-<time>``);
    ``sequential``: play a step at a time until the SPRT decides or ``max_games``.
    """

    games: int | None = None
    seed: int | None = None
    chunk_size: int | None = None
    workers: int | None = None
    out: Path | None = None
    quiet: bool = True
    sequential: bool = False
    max_games: int | None = None


def is_run_dir(p: str | Path) -> bool:
    return (Path(p) / "manifest.json").is_file()


def config_of(arg: str | Path) -> RunConfig:
    """A run config for BASE/CANDIDATE: a run directory's own config, or a TOML (or config name)."""
    if is_run_dir(arg):
        m = load_manifest(arg)
        if not m.get("config"):
            raise UserError(f"{arg}: its manifest holds no run config, so no more games can be played into it")
        return RunConfig.from_dict(m["config"], source=f"{arg}/manifest.json")
    return RunConfig.from_toml(resolve_config_path(str(arg)))


def _play(cfg: RunConfig, out: Path, games: int, quiet: bool) -> Path:
    # the engine is loaded only when configs are played: comparing two run directories (and
    # `compare --help`, which reads this module's defaults) does not pay for numba
    from harness.play import runner

    cfg = cfg.with_overrides(games=games, out=str(out))
    return runner.run(cfg, out, quiet=quiet, resume=(out / "manifest.json").is_file())


def _unanalysable(cfg: RunConfig) -> str | None:
    """Why a config's rule set cannot be analysed (``saved_rolls``), or None."""
    rules = load_rules(cfg.rules, dict(cfg.settings))
    if rules.saved_rolls:
        return (
            f"rule set {rules.name} has saved_rolls, which the solver's table does not value: "
            "played without analyse, plain comparison (no luck adjustment)"
        )
    return None


def compare(
    base: str | Path, candidate: str | Path, settings: CompareSettings | None = None, playing: Playing | None = None
) -> ComparisonResult:
    """Compare CANDIDATE with BASE, each a run directory or a run config; returns
    :meth:`Comparison.result`.

    Configs are played first (on one seed, as ``playing`` says) with ``analyse = true``
    (luck-adjusted comparison) unless ``settings.adjust`` is off, a rule set cannot be analysed,
    or an existing run directory on the other side was played without it (its identity cannot
    change when more games are played into it). With ``playing.sequential`` both sides are played
    a step at a time until the SPRT decides.
    """
    settings = settings or CompareSettings()
    playing = playing or Playing()
    specs = [base, candidate]
    dirs = [is_run_dir(x) for x in specs]
    if all(dirs) and not playing.sequential:
        if playing.games or playing.seed is not None:
            raise UserError("--games/--seed apply when BASE/CANDIDATE are run configs (or with --sequential)")
        return compare_runs(base, candidate, settings)
    if playing.sequential and not playing.max_games:
        raise UserError("--sequential needs --max-games N (the most games to play per lineup)")
    cfg_b, cfg_c = config_of(base), config_of(candidate)
    # common random numbers: both sides play the same seed (BASE's unless given)
    over: dict[str, Any] = {"seed": playing.seed if playing.seed is not None else cfg_b.seed}
    if playing.chunk_size:
        over["chunk_size"] = playing.chunk_size
    if playing.workers is not None:
        over["workers"] = playing.workers
    cfg_b, cfg_c = cfg_b.with_overrides(**over), cfg_c.with_overrides(**over)
    notes: list[str] = []
    if settings.adjust:
        why = _unanalysable(cfg_b) or _unanalysable(cfg_c)
        existing = [c.analyse for c, d in ((cfg_b, dirs[0]), (cfg_c, dirs[1])) if d]
        if why:
            notes.append(why)
        elif all(existing):
            cfg_b = cfg_b if dirs[0] else cfg_b.with_overrides(analyse=True)
            cfg_c = cfg_c if dirs[1] else cfg_c.with_overrides(analyse=True)
    root = playing.out if playing.out else Path("results") / f"compare-{time.strftime('%Y%m%d-%H%M%S')}"
    ob = Path(base) if dirs[0] else root / "base"
    oc = Path(candidate) if dirs[1] else root / "candidate"
    if playing.sequential:
        return _sequential(ob, oc, cfg_b, cfg_c, settings, playing, notes)
    games = playing.games or cfg_b.games
    _play(cfg_b, ob, games, playing.quiet)
    _play(cfg_c, oc, games, playing.quiet)
    return compare_runs(ob, oc, settings, notes)


def _sequential(
    ob: Path,
    oc: Path,
    cfg_b: RunConfig,
    cfg_c: RunConfig,
    settings: CompareSettings,
    playing: Playing,
    notes: Sequence[str] = (),
) -> ComparisonResult:
    """Play both sides a step of games at a time until the SPRT decides or ``playing.max_games``."""
    max_games = int(playing.max_games or 0)
    step = playing.games or cfg_b.chunk_size
    step = max(1, min(step, max_games))
    played = 0
    comp: Comparison | None = None
    looks = []
    while True:
        target = min(max_games, played + step)
        _play(cfg_b, ob, target, playing.quiet)
        _play(cfg_c, oc, target, playing.quiet)
        played = target
        if comp is None:
            comp = Comparison(ob, oc, settings)
            comp.extra_notes = list(notes)
        comp.update()
        verdict, tests = comp.verdict()
        looks.append({"games": comp.acc.n, "verdict": verdict, "llr": [t.llr for t in tests]})
        if verdict != "inconclusive" or played >= max_games:
            break
    return replace(comp.result(), sequential={"max_games": max_games, "step": step, "looks": jsonable(looks)})

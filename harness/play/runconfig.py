"""Run configuration: what to play (rules, bots, lineups, games, seed) and how (chunks, workers, backend).

A run config is a TOML file under ``configs/runs/`` or a :class:`RunConfig` built in Python; CLI
flags override it. Every key is validated on construction and a mistake raises one
:class:`~harness.util.errors.UserError` naming where the value came from (the file, or the flag listed
in ``origins``) and the key.

TOML keys (all optional but the bots)::

    description = "what this run is for"        # free text, ignored
    mode = "run"                # run (one table) | tournament (round-robin) | gauntlet
    rules = "scandinavian"      # built-in rule-set name or a .toml path (relative to this file)
    games = 100000              # games per lineup: every lineup plays game indices 0..games-1
    seed = 1                    # root seed, 0..2**64-1
    chunk_size = 50000          # games per chunk (one Parquet file and one unit of work)
    workers = 0                 # processes (local) or Dask workers (LocalCluster); 0 = every core
    backend = "local"           # local | dask
    scheduler = "tcp://host:8786"   # dask only; none = a LocalCluster ("inprocess" = threads in this process)
    out = "results/my-run"      # run directory (default results/<file stem>-<time>)
    cache_dir = "~/solver-cache"   # solver tables (as ``solve --cache-dir``); default $YATZY_HARNESS_CACHE
    record = false              # also write every roll and decision (records/, see harness.records.rundir)
    analyse = false             # add each seat-game's exact luck and regret to the rows (harness.decisions.analysis)
    seats = ["greedy", "random"]            # mode run: one strategy spec per seat (1..8 seats)
    entrants = ["random", "greedy", "solver:temperature=0.5"]  # tournament; gauntlet: the field
    candidate = "greedy"                     # gauntlet: the bot played against each of the field
    table = 2                                # tournament: seats per table, 2..8 (a gauntlet: 2)
    [settings]                               # rule settings (``--set KEY=VALUE``)
    upper_bonus_threshold = 62

``workers``, ``backend``, ``scheduler``, ``out`` and ``cache_dir`` say how a run executes: they may
change when it is resumed. Relative ``out`` and ``cache_dir`` are taken from the working directory.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from harness.game import tournament
from harness.util.address import parse_scheduler
from harness.util.cache import check_cache_dir
from harness.util.errors import UserError
from harness.util.specs import split_specs
from harness.game.rules import SETTINGS, RuleSet, check_toml_settings, load_rules, read_toml
from harness.game.tournament import MAX_SEATS

if TYPE_CHECKING:  # the engine's kernels (numba) are not needed to read a config: `run --help` stays fast
    from harness.game.strategy import Strategy

MODES = ("run", "tournament", "gauntlet")
BACKENDS = ("local", "dask")
#: Games per chunk by default: big enough that the vectorised engine amortises its Python overhead.
DEFAULT_CHUNK_SIZE = 50_000
MAX_CHUNK_SIZE = 1_000_000
#: Chunk file names hold the first game in 12 digits.
MAX_GAMES = 10**12 - 1
#: Seats at a tournament table (a one-seat game is mode run with one seat).
MIN_TABLE = 2
MAX_SEED = 2**64 - 1
#: ``source`` of a config made from command-line flags alone (no file).
CLI_SOURCE = "command line"

#: Keys that say how a run executes, not what it plays: they may change on resume.
EXECUTION_KEYS = ("workers", "backend", "scheduler", "out", "cache_dir")

_TOML_KEYS = (
    "description",
    "mode",
    "rules",
    "settings",
    "seats",
    "entrants",
    "candidate",
    "table",
    "games",
    "seed",
    "chunk_size",
    "workers",
    "backend",
    "scheduler",
    "out",
    "cache_dir",
    "record",
    "analyse",
)
_META = ("name", "source", "origins")


@dataclass(frozen=True)
class RunConfig:
    """A validated run or tournament description (see the module docstring for the keys).

    ``source`` names the file (or ``"<python>"``) in error messages; ``origins`` maps a key (or
    ``settings.KEY``) that came from elsewhere, such as a command-line flag, to what to call it
    instead (``{"games": "--games"}``); ``name`` seeds the default output directory. None of the
    three is part of what the run plays.
    """

    seats: tuple[str, ...] = ()
    entrants: tuple[str, ...] = ()
    candidate: str | None = None
    mode: str = "run"
    rules: str = "scandinavian"
    settings: Mapping[str, Any] = field(default_factory=dict)
    table: int = 2
    games: int = 10_000
    seed: int = 1
    chunk_size: int = DEFAULT_CHUNK_SIZE
    workers: int = 0
    backend: str = "local"
    scheduler: str | None = None
    out: str | None = None
    cache_dir: str | None = None
    #: also write every roll and decision of every game (``records/`` beside ``chunks/``)
    record: bool = False
    #: add each seat-game's exact luck and regret to the rows (``harness.decisions.analysis``)
    analyse: bool = False
    name: str = field(default="run", compare=False)
    source: str = field(default="<python>", compare=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # each step checks one topic, in this order (a config with several faults names the first)
        object.__setattr__(self, "origins", dict(self.origins))
        self._parse_specs()
        self._check_mode()
        self._check_rules()
        self._check_settings()
        self._check_numbers()
        self._check_backend()
        self._check_switches()
        self._check_dirs()
        self._check_lineup()

    def _parse_specs(self) -> None:
        """The seats, entrants and candidate as bot specs (one string, a list of them)."""
        name, setv = self._name, object.__setattr__
        setv(self, "seats", _specs(self.seats, "seats", name("seats")))
        setv(self, "entrants", _specs(self.entrants, "entrants", name("entrants")))
        if self.candidate is not None:
            setv(self, "candidate", _specs([self.candidate], "candidate", name("candidate"))[0])

    def _check_mode(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"{self._name('mode')} must be one of {', '.join(MODES)}, got {self.mode!r}")

    def _check_rules(self) -> None:
        """The rule set's name or path; a path to a file made absolute."""
        if not isinstance(self.rules, str) or not self.rules.strip():
            raise UserError(f"{self._name('rules')} must be a rule-set name or .toml path, got {self.rules!r}")
        if _looks_like_path(self.rules) and Path(self.rules).is_file():
            # absolute, so that a manifest's config resumes from any working directory
            object.__setattr__(self, "rules", str(Path(self.rules).resolve()))

    def _check_settings(self) -> None:
        """The setting overrides: a table of numbers, booleans and strings, each parsed to its type."""
        if not isinstance(self.settings, Mapping):
            raise UserError(f"{self._name('settings')} must be a table of KEY = VALUE, got {self.settings!r}")
        for k, v in self.settings.items():
            if not isinstance(k, str) or not isinstance(v, (bool, int, str)):
                raise UserError(
                    f"{self._where('settings.' + str(k))}: settings.{k} must be a number, true/false or a "
                    f"string, got {v!r}"
                )
        object.__setattr__(self, "settings", {k: _setting_value(k, v) for k, v in self.settings.items()})

    def _check_numbers(self) -> None:
        """The table size, games, seed, chunk size and workers, each a whole number in its range."""
        name = self._name
        _int(self.table, name("table"), MIN_TABLE, MAX_SEATS)
        _int(self.games, name("games"), 1, MAX_GAMES)
        _int(self.seed, name("seed"), 0, MAX_SEED)
        _int(self.chunk_size, name("chunk_size"), 1, MAX_CHUNK_SIZE)
        _int(self.workers, name("workers"), 0, 4096)

    def _check_backend(self) -> None:
        """The backend, and a scheduler's address only with the Dask one."""
        at, name = self._where, self._name
        if self.backend not in BACKENDS:
            raise UserError(f"{name('backend')} must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.scheduler is not None:
            if not isinstance(self.scheduler, str) or not self.scheduler.strip():
                raise UserError(f"{name('scheduler')} must be an address like tcp://host:8786, got {self.scheduler!r}")
            if self.backend != "dask":
                raise UserError(f'{at("scheduler", "backend")}: scheduler {self.scheduler!r} needs backend = "dask"')
            if self.scheduler != "inprocess":
                parse_scheduler(self.scheduler)  # a malformed address: one line now, not after the set-up

    def _check_switches(self) -> None:
        for key in ("record", "analyse"):
            if not isinstance(getattr(self, key), bool):
                raise UserError(f"{self._name(key)} must be true or false, got {getattr(self, key)!r}")

    def _check_dirs(self) -> None:
        """The output and cache directories: paths when given; the cache's made absolute."""
        for key in ("out", "cache_dir"):
            v = getattr(self, key)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise UserError(f"{self._name(key)} must be a directory path, got {v!r}")
        if self.cache_dir is not None:
            # absolute, like rules: a resumed run finds the same tables from any working directory
            object.__setattr__(self, "cache_dir", str(Path(self.cache_dir).expanduser().resolve()))

    def _check_lineup(self) -> None:
        """Who plays, as the mode wants it: seats for a run, entrants for a tournament, a candidate
        and its field for a gauntlet."""
        at = self._where
        if self.mode == "run":
            if not 1 <= len(self.seats) <= MAX_SEATS:
                raise UserError(
                    f"{at('seats', 'mode')}: mode run needs seats = [1..{MAX_SEATS} strategy specs], "
                    f"got {len(self.seats)}"
                )
            if self.entrants or self.candidate:
                raise UserError(
                    f"{at('entrants', 'candidate', 'mode')}: entrants/candidate are for mode tournament "
                    f"or gauntlet, not run (use seats)"
                )
        elif self.mode == "tournament":
            if self.seats or self.candidate:
                raise UserError(
                    f"{at('seats', 'candidate', 'mode')}: mode tournament takes entrants (and table), "
                    f"not seats/candidate"
                )
            if len(self.entrants) < self.table:
                raise UserError(
                    f"{at('entrants', 'table')}: a tournament at {self.table}-seat tables needs at least "
                    f"{self.table} entrants, got {len(self.entrants)}"
                )
        else:
            if self.seats:
                raise UserError(
                    f"{at('seats', 'mode')}: mode gauntlet takes candidate and entrants (the field), not seats"
                )
            if not self.candidate:
                raise UserError(f'{at("candidate", "mode")}: mode gauntlet needs candidate = "SPEC"')
            if not self.entrants:
                raise UserError(
                    f"{at('entrants', 'mode')}: mode gauntlet needs entrants = [the field, one or more specs]"
                )
            if self.table != 2:
                raise UserError(f"{at('table', 'mode')}: a gauntlet plays 2-seat tables, got table = {self.table}")

    def _where(self, *keys: str) -> str:
        """Where the values of ``keys`` came from: their flags and/or the file, in that order (a
        command line without a file names only its flags: the other values are the defaults)."""
        got: list[str] = []
        for k in keys:
            w = self.origins.get(k, self.source)
            if w not in got and (w != CLI_SOURCE or k in self.origins):
                got.append(w)
        return " and ".join(got or [self.source])

    def _name(self, key: str) -> str:
        """A key as the user wrote it: ``--games``, or ``bad.toml: games``."""
        return self.origins.get(key) or f"{self.source}: {key}"

    def __hash__(self) -> int:  # settings is a dict: hash the canonical JSON instead

        return hash(json.dumps(self.to_dict(), sort_keys=True))

    # ---------------------------------------------------------------------------------------

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> RunConfig:
        """Read and validate a run config file."""
        p = Path(path)
        if not p.is_file():
            raise UserError(f"run config not found: {p}")
        data = read_toml(p, "run config")
        if isinstance(data.get("settings"), dict):  # a file's settings have TOML's types; --set gives strings
            check_toml_settings(data["settings"], lambda key: f"{p}: settings.{key}")
        return cls.from_dict(data, source=str(p), base=p.parent, name=p.stem)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, source: str = "<python>", base: Path | None = None, name: str = "run"
    ) -> RunConfig:
        """Build from a mapping with the TOML keys (also what :meth:`to_dict` and manifests hold).

        A relative rules path is taken relative to ``base`` when that file exists there.
        """
        unknown = [k for k in data if k not in _TOML_KEYS]
        if unknown:
            raise UserError(f"{source}: unknown key {unknown[0]!r} (keys: {', '.join(_TOML_KEYS)})")
        kw = {k: v for k, v in data.items() if k != "description"}
        for key in ("seats", "entrants"):
            if key in kw:
                if isinstance(kw[key], str):
                    kw[key] = split_specs(kw[key])
                elif not isinstance(kw[key], list):
                    raise UserError(f"{source}: {key} must be a list of strategy specs, got {kw[key]!r}")
        rules = kw.get("rules")
        if isinstance(rules, str) and base is not None and _looks_like_path(rules) and not Path(rules).is_absolute():
            candidate = base / rules
            if candidate.is_file():
                kw["rules"] = str(candidate)
        return cls(**kw, source=source, name=name)

    def to_dict(self) -> dict[str, Any]:
        """The TOML keys as a JSON-able dict (``None`` values left out); ``from_dict`` inverts it."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in _META:
                continue
            v = getattr(self, f.name)
            if v is None or (f.name in ("seats", "entrants") and not v) or (f.name in ("record", "analyse") and not v):
                continue  # (record = false is left out: manifests written before the key resume alike)
            out[f.name] = list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, Mapping) else v
        return out

    def with_overrides(self, **changes: Any) -> RunConfig:
        """A copy with fields changed (``None`` values are ignored), validated again."""
        changes = {k: v for k, v in changes.items() if v is not None}
        unknown = [k for k in changes if k not in {f.name for f in dataclasses.fields(self)}]
        if unknown:
            raise UserError(f"unknown run config key {unknown[0]!r}")
        return dataclasses.replace(self, **changes)

    def identity(self) -> dict[str, Any]:
        """What decides the rows a chunk holds: every key but games and the execution keys."""
        d = self.to_dict()
        for k in EXECUTION_KEYS + ("games",):
            d.pop(k, None)
        return d

    def resolve(self) -> ResolvedRun:
        """Load the rule set and make every bot (``prepare()`` not yet called); validates the specs.

        A ``cache_dir`` is checked here; :func:`harness.play.runner.run` makes it the solver cache
        directory for the run's length (:func:`harness.util.cache.using_cache_dir`), where the
        bots' ``prepare()`` looks.
        """
        check_cache_dir(self.cache_dir, self._name("cache_dir"))

        def origin(key: str) -> str:  # a setting from --set is named so; one from the file as its key
            return "--set" if self.origins.get(f"settings.{key}") == "--set" else "settings"

        try:
            rules = load_rules(self.rules, self.settings, origin=origin)
        except UserError as exc:
            where, msg = self._rules_origin(str(exc)), str(exc)
            raise UserError(msg if msg.startswith((f"{where}:", f"{where} ")) else f"{where}: {msg}") from None
        made: dict[str, tuple[str, Strategy]] = {}

        def make(spec: str, key: str, i: int | None = None) -> str:
            # the bots (and the engine's numba kernels under them) load when a config is resolved, not
            # when one is read: `run --help` imports this module (benchmarks/BENCHMARKS.md, 'Start-up')
            from harness.game.registry import make as registry_make

            # a flag names itself; a file names the key and index (``bad.toml: seats[1]``)
            where = self.origins.get(key) or f"{self.source}: {key}{'' if i is None else f'[{i}]'}"
            try:
                strat = registry_make(spec, rules)
            except UserError as exc:
                raise UserError(f"{where}: {exc}") from None
            label = strat.label
            if label in made:
                if key == "seats":
                    return label
                raise UserError(f"{where}: {spec!r} duplicates entrant {made[label][0]!r} (label {label})")
            made[label] = (spec, strat)
            return label

        if self.mode == "run":
            lineups = tournament.single([make(s, "seats", i) for i, s in enumerate(self.seats)])
        elif self.mode == "tournament":
            labels = [make(s, "entrants", i) for i, s in enumerate(self.entrants)]
            lineups = tournament.round_robin(labels, self.table)
        else:
            cand = make(self.candidate or "", "candidate")
            field_ = [make(s, "entrants", i) for i, s in enumerate(self.entrants)]
            lineups = tournament.gauntlet(cand, field_)
        return ResolvedRun(
            self,
            rules,
            tuple((lab, spec) for lab, (spec, _) in made.items()),
            {lab: s for lab, (_, s) in made.items()},
            tuple(lineups),
        )

    def _rules_origin(self, message: str) -> str:
        """Where a rule-set error comes from: a setting it names, else the rules (or all settings)."""
        named = [k for k in self.settings if k in message]
        if named:
            return self._where(*(f"settings.{k}" for k in named))
        if "setting" in message and self.settings:
            return self._where(*(f"settings.{k}" for k in self.settings))
        return self._where("rules")

    def default_out(self) -> Path:
        """``out`` if set, else ``results/<name>-<YYYYmmdd-HHMMSS>`` (a fresh directory)."""
        if self.out:
            return Path(self.out)

        base = Path("results") / f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        p, i = base, 1
        while p.exists():
            p, i = Path(f"{base}-{i}"), i + 1
        return p


@dataclass(frozen=True)
class ResolvedRun:
    """A config with its rule set compiled and its bots made.

    entrants: (label, spec) in config order; strategies: one instance per label, shared by every
    seat and lineup it plays in; lineups: entrant labels per seat.
    """

    config: RunConfig
    rules: RuleSet
    entrants: tuple[tuple[str, str], ...]
    strategies: Mapping[str, Strategy]
    lineups: tuple[tournament.Lineup, ...]


def _specs(value: Any, key: str, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise UserError(f"{name} must be a list of strategy specs, got {value!r}")
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v.strip():
            item = f"{name}[{i}]" if key != "candidate" else name
            raise UserError(f'{item} must be a strategy spec like "greedy" or "solver:temperature=0.5", got {v!r}')
    return tuple(v.strip() for v in value)


def _int(value: Any, name: str, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{name} must be a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise UserError(f"{name} must be {lo}..{hi}, got {value}")


def _setting_value(key: str, value: Any) -> Any:
    """``--set`` gives strings: store ``"45"`` as 45 and ``"true"`` as True (as TOML would), so that
    a config is the same whether a setting came from the file or the command line. Wrong values are
    left for the rule set to reject with its own message."""

    kind = SETTINGS.get(key, (str,))[0]
    if not isinstance(value, str) or kind is str:
        return value
    text = value.strip().lower()
    if kind is bool and text in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return text in ("true", "1", "yes", "on")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            return value
    return value


def _looks_like_path(name: str) -> bool:
    return name.endswith(".toml") or os.sep in name or "/" in name


def builtin_run_configs_dir() -> Path:
    """``configs/runs`` beside the package (``$YATZY_HARNESS_CONFIGS/runs`` overrides it)."""
    root = os.environ.get("YATZY_HARNESS_CONFIGS")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / "configs"
    return base / "runs"


def resolve_config_path(name_or_path: str) -> Path:
    """A run config path, or the name of one in ``configs/runs`` (``quick`` -> configs/runs/quick.toml)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    shipped = builtin_run_configs_dir()
    if not _looks_like_path(name_or_path):
        candidate = shipped / f"{name_or_path}.toml"
    else:  # a bare file name not in the working directory: a shipped config of that name
        candidate = shipped / p.name if p.parent == Path(".") else None
    if candidate is not None and candidate.is_file():
        return candidate
    names = ", ".join(sorted(x.stem for x in shipped.glob("*.toml")))
    raise UserError(f"run config not found: {name_or_path} (not a file; shipped configs: {names})")


def seats_from_text(text: str | Sequence[str]) -> list[str]:
    """CLI ``--seats A,B`` (or repeated) -> specs."""
    if isinstance(text, str):
        return split_specs(text)
    out: list[str] = []
    for t in text:
        out.extend(split_specs(t))
    return out


def config_of(manifest: Mapping[str, Any], run_dir: str | os.PathLike[str] = "") -> RunConfig:
    """The :class:`RunConfig` a run directory was played with (from its manifest)."""
    from harness.records.rundir import MANIFEST  # (numpy's import: not for reading a config file)

    where = f"{Path(run_dir) / MANIFEST}" if run_dir else "manifest"
    name = Path(run_dir).name if run_dir else "run"
    return RunConfig.from_dict(manifest["config"], source=where, name=name)


def check_resumable(old: Mapping[str, Any], resolved: ResolvedRun, out: Path) -> None:
    """Refuse to resume a run directory with a config that would play other rows."""
    try:
        old_cfg = config_of(old, out)
    except (UserError, KeyError, TypeError) as exc:
        raise UserError(f"cannot resume {out}: its manifest's config is unreadable: {exc}") from None
    new_cfg = resolved.config
    a, b = old_cfg.identity(), new_cfg.identity()
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if diff:
        parts = [f"{k} (run has {a.get(k)!r}, now {b.get(k)!r})" for k in diff]
        raise UserError(
            f"cannot resume {out}: the config differs in "
            + "; ".join(parts)
            + ". Resume with the same config, or start a new run directory."
        )
    if old["rules"]["digest"] != resolved.rules.digest:
        raise UserError(
            f"cannot resume {out}: rule set {resolved.rules.name} ({resolved.rules.source}) has changed "
            f"since the run started (digest {old['rules']['digest'][:12]} -> {resolved.rules.digest[:12]})"
        )
    lineups = [list(x) for x in resolved.lineups]
    if old["lineups"] != lineups:
        raise UserError(
            f"cannot resume {out}: the bots' labels differ (run has {old['lineups']}, now {lineups}); "
            f"did a strategy's parameters change?"
        )
    if int(old["games"]) > new_cfg.games:
        raise UserError(
            f"cannot resume {out} with games = {new_cfg.games}: it already plays {old['games']} "
            f"games per lineup (a run never shrinks)"
        )

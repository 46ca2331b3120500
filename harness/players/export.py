"""A level exported to JavaScript: the module, the compact value table and the manifest with the level's exact figures.

:func:`export_level` writes into a directory ``level.mjs`` (the self-contained ES module,
``harness/exact/js/level.mjs`` stamped with this harness's version), ``engine.mjs`` (the module as a
``yatzy-engine/1`` engine under Node), ``table.bin.gz`` (:mod:`harness.exact.compact`) and
``manifest.json``: the harness version, the rule set (the protocol's ``newgame`` description and its
digest), the bot spec, the table's sha256 and kind, the sizes (gzip bytes, what a page transfers),
and the exact figures of the level played from this very table (:mod:`harness.exact.evaluate`):
its mean, the loss against the full-precision table, and its score rate against the reference the
level was tuned against. Everything but the manifest's figures depends only on the level and the
rule set, so exporting twice gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from harness.exact import evaluate as EV
from harness.exact.compact import DEFAULT_SHIFT, KINDS, MANIFEST_FORMAT, encode, harness_version
from harness.exact.solver import solve
from harness.game.registry import make
from harness.game.rules import RuleSet, load_rules
from harness.play.protocol.messages import describe_rules
from harness.util.errors import UserError
from harness.util.specs import parse_spec

TABLE_FILE = "table.bin.gz"
MODULE_FILE = "level.mjs"
ENGINE_FILE = "engine.mjs"


@dataclass(frozen=True)
class LevelSpec:
    """What to export: a level's name (None for a bare spec), its bot spec, the reference it was
    tuned against (a spec, or None) and the rule set."""

    name: str | None
    spec: str
    against: str | None
    rules: RuleSet


def resolve_level(level_or_spec: str, rules_name: str | None, levels_file: str | None = None) -> LevelSpec:
    """A level of a ``levels.json`` (``calibrate --levels``) by name, or a bot spec such as
    ``solver:temperature=1.2,blunder=0.03``; the rule set from ``rules_name`` (or the levels file's)."""
    if levels_file is not None:
        try:
            d = json.loads(Path(levels_file).read_text())
        except FileNotFoundError:
            raise UserError(f"--levels {levels_file}: no such file") from None
        except ValueError as exc:
            raise UserError(f"--levels {levels_file}: not JSON ({exc})") from None
        rows = {row.get("name"): row for row in d.get("levels", []) if isinstance(row, dict)}
        if level_or_spec not in rows:
            raise UserError(f"--levels {levels_file}: no level {level_or_spec!r} (levels: {', '.join(map(str, rows))})")
        row = rows[level_or_spec]
        file_rules = str(d.get("rules"))
        if rules_name is not None and rules_name != file_rules:
            raise UserError(f"level {level_or_spec!r} was tuned on {file_rules}, not {rules_name}")
        if d.get("settings"):
            raise UserError(
                f"level {level_or_spec!r}: rule-set settings {d['settings']} are not exported (built-in rule sets only)"
            )
        rules = load_rules(file_rules)
        target = row.get("target") or {}
        return LevelSpec(level_or_spec, str(row["spec"]), target.get("against"), rules)
    if rules_name is None:
        raise UserError("export needs --rules NAME with a bot spec (or --levels FILE with a level name)")
    return LevelSpec(None, level_or_spec, None, load_rules(rules_name))


def _dial(spec: str, rules: RuleSet) -> dict[str, float]:
    """The solver dial of a spec (a :class:`UserError` for any other bot or parameter)."""
    name, params = parse_spec(spec)
    if name != "solver":
        raise UserError(
            f"{spec!r} is neither a solver spec (solver:temperature=T,blunder=P: export plays the "
            f"solver bot and its dial) nor a level (give --levels FILE with a level's name)"
        )
    bad = sorted(set(params) - {"temperature", "blunder"})
    if bad:
        raise UserError(f"export: solver parameter {', '.join(bad)} cannot be exported (only temperature and blunder)")
    bot = make(spec, rules)  # the spec's values checked as the harness checks them
    return {"temperature": float(bot.config["temperature"]), "blunder": float(bot.config["blunder"])}


def _with_table(spec: str, out: Path) -> str:
    name, params = parse_spec(spec)
    items = [f"{k}={v}" for k, v in params.items()] + [f"table={out}"]
    return f"{name}:{','.join(items)}"


def _gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9, mtime=0))


def module_text(name: str) -> str:
    """The module's source (``level.mjs`` stamped with this harness's version, or ``engine.mjs``)."""
    src = resources.files("harness.exact").joinpath("js", name).read_text()
    return src.replace("__HARNESS_VERSION__", harness_version())


@dataclass(frozen=True)
class ExportOptions:
    """How to store the table: ``kind`` (``q`` quantised, ``f64`` full precision), ``shift`` (q:
    values to 2**-shift points); ``figures``: evaluate the level exactly (off: sizes only);
    ``cache_dir``: the solver's."""

    kind: str = "q"
    shift: int = DEFAULT_SHIFT
    figures: bool = True
    cache_dir: str | None = None


def export_level(level: LevelSpec, out: Path, opts: ExportOptions = ExportOptions()) -> dict[str, Any]:
    """Write the export of ``level`` into ``out`` (see the module docstring); returns the manifest."""
    if opts.kind not in KINDS:
        raise UserError(f"--table must be one of {', '.join(KINDS)}, got {opts.kind!r}")
    rules = level.rules
    if rules.saved_rolls or rules.columns > 1:
        raise UserError(f"rule set {rules.name}: export plays one column of ordinary turns (no saved rolls)")
    dial = _dial(level.spec, rules)
    sol = solve(rules, opts.cache_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = encode(rules, sol.values, opts.kind, opts.shift)
    (out / TABLE_FILE).write_bytes(table)
    module = module_text(MODULE_FILE).encode()
    (out / MODULE_FILE).write_bytes(module)
    (out / ENGINE_FILE).write_bytes(module_text(ENGINE_FILE).encode())
    desc = describe_rules(rules)
    desc["scores"] = rules.table.tolist()
    if "scores_first" in desc:
        desc["scores_first"] = rules.table_first.tolist()
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "harness": harness_version(),
        "level": level.name,
        "spec": level.spec,
        "dial": dial,
        "digest": rules.digest,
        "table": {
            "file": TABLE_FILE,
            "kind": opts.kind,
            "shift": opts.shift if opts.kind == "q" else None,
            "states": int(sol.states),
            "sha256": hashlib.sha256(table).hexdigest(),
            "bytes": len(table),
        },
        "module": {"file": MODULE_FILE, "bytes": len(module), "gzip_bytes": _gz(module)},
        "rules": desc,
    }
    manifest["sizes"] = {
        "module_gzip": manifest["module"]["gzip_bytes"],
        "table_gzip": len(table),
        "transferred": manifest["module"]["gzip_bytes"] + len(table),
    }
    manifest["figures"] = None
    # the manifest the bot playing this table reads (its sha256), then again with the figures
    _write_manifest(out, manifest)
    if opts.figures:
        manifest["figures"] = _figures(level, out, opts)
        _write_manifest(out, manifest)
    return manifest


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """manifest.json, its own gzip size in ``sizes`` (measured with that entry at 0: a few bytes under)."""
    sizes = manifest["sizes"]
    sizes["manifest_gzip"] = 0
    sizes["manifest_gzip"] = _gz((json.dumps(manifest, indent=1) + "\n").encode())
    sizes["transferred"] = sizes["module_gzip"] + sizes["table_gzip"] + sizes["manifest_gzip"]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _figures(level: LevelSpec, out: Path, opts: ExportOptions) -> dict[str, Any]:
    """The level's exact figures from the exported table, the full-precision level's, the loss, and
    the score rate against the reference (None without one). The table's evaluation is never taken
    from the cache: the same path may hold another table."""
    rules = level.rules
    mine = EV.evaluate(rules, _with_table(level.spec, out), opts.cache_dir, use_cache=False)
    full = EV.evaluate(rules, level.spec, opts.cache_dir)
    fig: dict[str, Any] = {
        "mean": mine.mean,
        "std": mine.std,
        "full_precision_mean": full.mean,
        "loss": full.mean - mine.mean,
        "against": level.against,
        "score_rate": None,
    }
    if level.against:
        ref = EV.evaluate(rules, level.against, opts.cache_dir)
        win, draw, _ = EV.versus(mine, ref)
        full_win, full_draw, _ = EV.versus(full, ref)
        fig |= {
            "p_win": win,
            "p_draw": draw,
            "score_rate": EV.score_rate(win, draw),
            "full_precision_score_rate": EV.score_rate(full_win, full_draw),
        }
    return fig


__all__ = [
    "ENGINE_FILE",
    "ExportOptions",
    "LevelSpec",
    "MODULE_FILE",
    "TABLE_FILE",
    "export_level",
    "module_text",
    "resolve_level",
]

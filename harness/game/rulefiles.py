"""Rule files: where the built-in rule sets are, reading a rule set's TOML (``extends`` resolved),
finding a rule set by built-in name or path, what untrusted input may load
(:class:`AllowedRules`), and :func:`load_rules`, which compiles a file once per process while it
is unchanged. The compiling is :mod:`harness.game.ruleset`'s; all of it is importable from
:mod:`harness.game.rules`.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.game.rulesettings import Origin, _shown
from harness.game.ruleset import INLINE_KEYS, RuleSet, compile_rules
from harness.util.errors import UserError


def rules_dir() -> Path:
    """Directory of the built-in rule sets (``$YATZY_HARNESS_CONFIGS/rules`` overrides it)."""
    root = os.environ.get("YATZY_HARNESS_CONFIGS")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / "configs"
    return base / "rules"


def builtin_rule_sets() -> list[str]:
    """Names of the built-in rule sets, sorted."""
    return sorted(p.stem for p in rules_dir().glob("*.toml"))


def read_toml(path: str | os.PathLike[str], what: str) -> dict[str, Any]:
    """A TOML file (a rule set, a run config, a levels file: ``what``) as a dict. One-line
    :class:`UserError` naming the file when it cannot be read, is not UTF-8 (TOML is; the line and
    column of the first byte that is not) or not TOML."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - data.rfind(b"\n", 0, exc.start)
        raise UserError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, column {col}); "
            f"a {what} is a TOML file, which is UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None


def read_rules_file(path: Path, _chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Parse a rule-set TOML file, resolving ``extends`` (a built-in name, or a path relative to the
    extending file's directory).

    The child's top-level keys replace the parent's (``[[boxes]]`` as a whole list); ``[settings]``
    merges key by key. ``name`` defaults to the file's stem and ``title``/``description`` are not
    inherited, so a house rule never presents itself as its parent.
    """
    chain = (*_chain, path)
    if path.resolve() in {p.resolve() for p in _chain}:
        raise UserError("circular extends: " + " -> ".join(str(p) for p in chain))
    spec = read_toml(path, "rule set")
    spec.setdefault("name", path.stem)
    if "extends" in spec:
        ext = spec["extends"]
        if not isinstance(ext, str) or not ext:
            raise UserError(f"{path}: extends must be a rule-set name or a .toml path, got {_shown(ext)}")
        try:
            parent_path = resolve_rules_path(ext, relative_to=path.parent)
        except UserError as exc:
            raise UserError(f"{path}: extends: {exc}") from None
        spec = _extend(spec, read_rules_file(parent_path, chain), str(path))
    spec["_source"] = str(path)
    return spec


def _extend(spec: Mapping[str, Any], parent: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``spec`` (which ``extends`` ``parent``) merged onto its parent: top-level keys replace the
    parent's, ``[settings]`` merge key by key, ``title`` and ``description`` are not inherited."""
    own = spec.get("settings", {})
    if not isinstance(own, dict):
        raise UserError(f"{where}: [settings] must be a table")
    theirs = parent.get("settings", {})
    if not isinstance(theirs, dict):
        raise UserError(f"{parent.get('_source', 'extends')}: [settings] must be a table")
    changes = [f"{k}={v}" for k, v in own.items()]
    changes += [f"own {k}" for k in spec if k not in ("extends", "settings", "name", "title", "description")]
    merged = {
        **{k: v for k, v in parent.items() if k not in ("title", "description")},
        **{k: v for k, v in spec.items() if k not in ("extends", "settings")},
    }
    merged["settings"] = {**theirs, **own}
    merged.setdefault(
        "description",
        f"{parent.get('title') or parent['name']} with " + (", ".join(changes) if changes else "no changes"),
    )
    return merged


def resolve_rules_path(name_or_path: str, relative_to: Path | None = None) -> Path:
    """A built-in rule-set name or a path to a TOML file -> the file's path.

    A relative path is taken from ``relative_to`` when given (the directory of a file that
    ``extends`` it), else from the current directory.
    """
    p = Path(name_or_path)
    if p.suffix == ".toml" or os.sep in name_or_path or "/" in name_or_path:
        if relative_to is not None and not p.is_absolute():
            p = Path(os.path.normpath(relative_to / p))
        if not p.is_file():
            raise UserError(f"rule set file not found: {p}")
        return p
    candidate = rules_dir() / f"{name_or_path}.toml"
    if not candidate.is_file():
        raise UserError(
            f"unknown rule set {name_or_path!r} (built-in: {', '.join(builtin_rule_sets())}; or give a .toml path)"
        )
    return candidate


def looks_like_path(name: str) -> bool:
    """A rule set named this is a file (``.toml``, or a directory in it), not a built-in name."""
    return name.endswith(".toml") or os.sep in name or "/" in name


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class AllowedRules:
    """Which rule sets a name from untrusted input (a game record) may load: a built-in rule set
    always, a rule file only inside ``dirs``, the directories the user allowed (``--rules-dir``;
    the current directory is not implied).

    A relative path is taken from the current directory, else from each allowed directory; either
    way the file must lie inside one of them, symbolic links followed. A name outside them is
    refused before anything is opened, and no message shows a file's content.
    """

    dirs: tuple[Path, ...] = ()

    @classmethod
    def of(cls, dirs: Iterable[str | os.PathLike[str]] = ()) -> AllowedRules:
        """The rule sets allowed with ``dirs``; :class:`UserError` for one that is no directory."""
        out = []
        for d in dirs:
            p = Path(d)
            if not p.is_dir():
                raise UserError(f"rules directory {p}: not a directory")
            out.append(Path(os.path.abspath(p)))
        return cls(tuple(out))

    def path_of(self, name: str) -> Path:
        """The file a record's rules ``name`` loads; :class:`UserError` when it may not."""
        if not looks_like_path(name):
            if name not in builtin_rule_sets():  # no file system look-up with the record's text
                raise UserError(
                    f"unknown rule set {_shown(name)} (built-in: {', '.join(builtin_rule_sets())}; "
                    "or carry the rule set in the record, or name a rule file in a --rules-dir)"
                )
            return rules_dir() / f"{name}.toml"
        given = Path(name)
        tries = [given] if given.is_absolute() else [Path.cwd() / given, *(d / given for d in self.dirs)]
        for t in tries:
            lexical = Path(os.path.abspath(t))
            if not any(_within(lexical, d) for d in self.dirs):
                continue
            try:
                real = lexical.resolve()
                if any(_within(real, d.resolve()) for d in self.dirs) and real.is_file():
                    return lexical
            except (OSError, ValueError):  # a name too long, a NUL byte: no such file
                continue
        if any(_within(Path(os.path.abspath(t)), d) for t in tries for d in self.dirs):
            raise UserError(
                f"rule set file not found: {_shown(name)} (in the rules directories {', '.join(map(str, self.dirs))})"
            )
        allowed = f"the rules directories {', '.join(map(str, self.dirs))}" if self.dirs else "no rules directory"
        raise UserError(
            f"rule file {_shown(name)} is outside the rules directories allowed ({allowed}; "
            "allow one with --rules-dir DIR, or carry the rule set in the record)"
        )

    def load(
        self,
        name: str,
        overrides: Mapping[str, Any] | None = None,
        *,
        spec: Mapping[str, Any] | None = None,
        where: str = "",
        origin: Origin = "--set",
    ) -> RuleSet:
        """The rule set a record names (``name``), or carries (``spec``: the keys of a rule file,
        its ``extends`` allowed as ``name`` is), with setting ``overrides``."""
        if spec is None:
            path = self.path_of(name)
            if isinstance(origin, str):
                try:
                    st = path.stat()
                    return _compiled_file(
                        str(path), st.st_mtime_ns, st.st_size, json.dumps(dict(overrides or {}), sort_keys=True), origin
                    )
                except (OSError, TypeError, ValueError):  # not cached: compiled below, errors and all
                    pass
            return compile_rules(read_rules_file(path), overrides, source=str(path), origin=origin)
        full = dict(spec)
        unknown = sorted(set(full) - INLINE_KEYS)
        if unknown:
            raise UserError(f"{where}: unknown key {_shown(unknown[0])} (keys: {', '.join(sorted(INLINE_KEYS))})")
        if "extends" in full:
            ext = full["extends"]
            if not isinstance(ext, str) or not ext:
                raise UserError(f"{where}: extends must be a rule-set name or a .toml path, got {_shown(ext)}")
            try:
                parent = read_rules_file(self.path_of(ext))
            except UserError as exc:
                raise UserError(f"{where}: extends: {exc}") from None
            full = _extend(full, parent, where)
        return compile_rules(full, overrides, source=where, origin=origin)


@lru_cache(maxsize=32)
def _compiled_file(path: str, mtime_ns: int, size: int, overrides: str, origin: str) -> RuleSet:
    """A rule file compiled once per process while it is unchanged (reading a records file names
    the same few rule sets over and over; compiling one takes ~0.1 s)."""
    return compile_rules(read_rules_file(Path(path)), json.loads(overrides), source=path, origin=origin)


def load_rules(
    name_or_path: str, overrides: Mapping[str, Any] | Iterable[str] | None = None, origin: Origin = "--set"
) -> RuleSet:
    """Load and compile a rule set by built-in name or TOML path, with optional setting overrides
    (from ``origin``, for messages). A file is compiled once per process while it is unchanged
    (:func:`_compiled_file`: a run directory's rules are loaded by each reader of the run, ~0.1 s
    each)."""
    path = resolve_rules_path(name_or_path)
    if isinstance(origin, str):
        try:
            st = path.stat()
            key = dict(overrides) if isinstance(overrides, Mapping) else list(overrides or [])
            # no overrides is one key whatever their form: a run's reader loads its rules with {} and
            # with None (rundir.rules_of_manifest, settings_changed), and compiling them again is ~0.07 s
            return _compiled_file(str(path), st.st_mtime_ns, st.st_size, json.dumps(key or {}, sort_keys=True), origin)
        except (OSError, TypeError, ValueError):  # not cached: compiled below, errors and all
            pass
    return compile_rules(read_rules_file(path), overrides, source=str(path), origin=origin)


__all__ = [
    "AllowedRules",
    "builtin_rule_sets",
    "load_rules",
    "looks_like_path",
    "read_rules_file",
    "read_toml",
    "resolve_rules_path",
    "rules_dir",
]

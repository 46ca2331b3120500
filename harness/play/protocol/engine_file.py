"""An engine as configured: its file (``configs/engines/NAME.toml`` or a path: the command or
address, options, time control, referee limits) read into flat settings, and the
:class:`EngineConf` the referee holds (:mod:`harness.play.protocol.referee`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.game.rules import read_toml, rules_dir
from harness.util.errors import UserError

__all__ = ["EngineConf", "engines_dir", "read_engine_file"]


def engines_dir() -> Path:
    """The built-in engine files' folder, ``configs/engines/`` (beside ``configs/rules/``)."""
    return rules_dir().parent / "engines"


@dataclass(frozen=True)
class EngineConf:
    """An engine as configured: how to reach it, its options, time control and referee limits."""

    label: str
    argv: tuple[str, ...] = ()
    url: str = ""
    cwd: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    move_ms: float = 100.0
    game_ms: float = 0.0
    margin_ms: float = 100.0
    stall_ms: float = 2000.0
    start_ms: float = 10_000.0
    max_faulty: float = 0.1
    max_corrupted: float = 0.1
    min_games: int = 20
    max_batch: int = 10_000
    memory_mb: int = 0
    stderr_kb: int = 1024
    token_file: str = ""
    source: str = ""

    def files(self) -> dict[str, str]:
        """sha256 of every file the command names: its script, and its program when given by a
        path inside the working directory (an interpreter found elsewhere, like python or node,
        is the machine's, recorded in the handshake's version rather than hashed)."""
        out: dict[str, str] = {}
        base = Path(self.cwd or ".").resolve()
        for i, word in enumerate(self.argv):
            path = (base / word).resolve()
            if not path.is_file() or (i == 0 and len(self.argv) > 1 and not path.is_relative_to(base)):
                continue
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            out[word] = h.hexdigest()
        return out


_TIME_KEYS = ("move_ms", "game_ms", "margin_ms", "stall_ms", "start_ms")
_REFEREE_KEYS = ("max_faulty", "max_corrupted", "min_games", "max_batch")
_FILE_KEYS = {
    "name",
    "command",
    "url",
    "cwd",
    "options",
    "time",
    "referee",
    "memory_mb",
    "stderr_kb",
    "token_file",
    "description",
}


def read_engine_file(name_or_path: str) -> dict[str, Any]:
    """An engine TOML file as flat settings (``command``, ``cwd`` relative to the file, ``options``,
    ``[time]``, ``[referee]``); a bare name is looked up in ``configs/engines/``."""
    path = Path(name_or_path)
    if not path.is_file() and path.suffix == "" and (engines_dir() / f"{name_or_path}.toml").is_file():
        path = engines_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in engines_dir().glob("*.toml")) if engines_dir().is_dir() else []
        raise UserError(
            f"engine file {name_or_path!r} not found" + (f" (configs/engines: {', '.join(known)})" if known else "")
        )
    data = read_toml(path, "engine file")
    where = str(path)
    unknown = set(data) - _FILE_KEYS
    if unknown:
        raise UserError(f"{where}: unknown key {sorted(unknown)[0]!r} (keys: {', '.join(sorted(_FILE_KEYS))})")
    out: dict[str, Any] = {"source": where}
    if "name" in data:
        out["name"] = str(data["name"])
    cmd = data.get("command")
    if cmd is not None:
        if isinstance(cmd, str):
            out["cmd"] = cmd
        elif isinstance(cmd, list) and all(isinstance(x, str) for x in cmd) and cmd:
            out["argv"] = tuple(cmd)
        else:
            raise UserError(f"{where}: command must be a string or a list of strings")
    if "url" in data:
        out["url"] = str(data["url"])
    out["cwd"] = str((path.parent / str(data.get("cwd", "."))).resolve())
    opts = data.get("options", {})
    if not isinstance(opts, dict):
        raise UserError(f"{where}: [options] must be a table")
    out["options"] = dict(opts)
    for table, keys in (("time", _TIME_KEYS), ("referee", _REFEREE_KEYS)):
        sub = data.get(table, {})
        if not isinstance(sub, dict):
            raise UserError(f"{where}: [{table}] must be a table")
        for k, v in sub.items():
            if k not in keys:
                raise UserError(f"{where}: [{table}] unknown key {k!r} (keys: {', '.join(keys)})")
            out[k] = v
    for k in ("memory_mb", "stderr_kb", "token_file"):
        if k in data:
            out[k] = data[k]
    return out

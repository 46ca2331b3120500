"""The run directory on disk: manifest.json, chunk file names, the chunk plan, atomic writes, row digests.

Layout (the contract shared with ``harness.report``)::

    RUN_DIR/manifest.json                                   written first, rewritten as chunks land
    RUN_DIR/chunks/part-L{lineup:04d}-G{start:012d}.parquet one file per (lineup, chunk of games)
    RUN_DIR/chunks/*.tmp                                    a chunk being written (never read)
    RUN_DIR/run.log                                         the run's log (worker records included)

A chunk file appears under its final name only once complete (written to ``.tmp`` in the same
directory, fsynced, renamed), so a crash leaves complete files and temporary debris, never a
truncated ``.parquet``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.errors import UserError

FORMAT = 1
MANIFEST = "manifest.json"
CHUNK_DIR = "chunks"
LOG = "run.log"
TMP_SUFFIX = ".tmp"


@dataclass(frozen=True, order=True)
class Chunk:
    """Games ``start..stop-1`` of lineup ``lineup``: one unit of work and one Parquet file."""

    lineup: int
    start: int
    stop: int

    @property
    def file(self) -> str:
        """Path relative to the run directory."""
        return chunk_file(self.lineup, self.start)

    @property
    def games(self) -> int:
        return self.stop - self.start

    def to_dict(self) -> dict[str, Any]:
        return {"lineup": self.lineup, "start": self.start, "stop": self.stop, "file": self.file}


def chunk_file(lineup: int, start: int) -> str:
    return f"{CHUNK_DIR}/part-L{lineup:04d}-G{start:012d}.parquet"


def plan(n_lineups: int, games: int, chunk_size: int, done: Iterable[Chunk] = ()) -> list[Chunk]:
    """The chunks still to play so that every lineup covers games ``0..games-1``.

    Gaps left by ``done`` are cut at multiples of ``chunk_size``, so an interrupted run resumes
    into exactly the chunks an uninterrupted one would have written. Ordered game-major (every
    lineup's first chunk, then every lineup's second...), so a stopped tournament stays balanced.
    """
    covered: dict[int, list[tuple[int, int]]] = {i: [] for i in range(n_lineups)}
    for c in done:
        covered[c.lineup].append((c.start, c.stop))
    todo: list[Chunk] = []
    for lineup, spans in covered.items():
        pos = 0
        for a, b in sorted(spans) + [(games, games)]:
            gap_stop = min(a, games)
            while pos < gap_stop:
                nxt = min((pos // chunk_size + 1) * chunk_size, gap_stop)
                todo.append(Chunk(lineup, pos, nxt))
                pos = nxt
            pos = max(pos, b)
    return sorted(todo, key=lambda c: (c.start, c.lineup))


def dumps_manifest(manifest: Mapping[str, Any]) -> str:
    """JSON text of a manifest: one top-level key per line, one chunk per line (compact, diffable)."""
    lines = []
    for key, value in manifest.items():
        if key == "chunks" and value:
            body = ",\n  ".join(json.dumps(c) for c in value)
            lines.append(f' "{key}": [\n  {body}\n ]')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write a manifest (or any JSON object) to ``path`` through a temporary file and a rename,
    so readers never see half a file."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    text = dumps_manifest(obj) if isinstance(obj, Mapping) else json.dumps(obj) + "\n"
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``path.tmp``: fsync then rename."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a run directory as a dict (format 1); a clear error if it is not one."""
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise UserError(f"{run_dir} is not a run directory (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: unknown manifest format {data.get('format') if isinstance(data, dict) else None!r} "
                        f"(this harness reads format {FORMAT})")
    return data


def manifest_chunks(manifest: Mapping[str, Any]) -> list[Chunk]:
    """The complete chunks a manifest records, sorted by (lineup, start)."""
    return sorted(Chunk(int(c["lineup"]), int(c["start"]), int(c["stop"])) for c in manifest.get("chunks", []))


def parse_chunk_name(name: str) -> tuple[int, int] | None:
    """``part-L0001-G000000050000.parquet`` -> (1, 50000); None for anything else."""
    if not (name.startswith("part-L") and name.endswith(".parquet")):
        return None
    body = name[len("part-L"):-len(".parquet")]
    lineup, sep, start = body.partition("-G")
    if not (sep and lineup.isdigit() and start.isdigit()):
        return None
    return int(lineup), int(start)


def parquet_rows(path: Path) -> int | None:
    """Row count from a Parquet footer, None if the file is unreadable."""
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(path).num_rows)
    except Exception:  # any damage means "redo this chunk"
        return None


def rows_digest(run_dir: str | os.PathLike[str]) -> str:
    """sha256 of every row of a run, sorted by (lineup, game, seat), independent of chunking.

    One hash per column over the concatenated column values (numeric columns as little-endian
    bytes of their Parquet type, ``strategy`` as its labels), then a hash of the column names,
    types and column hashes. Two runs with the same config and seed give the same digest whatever
    their chunk size, worker count or backend.
    """
    import numpy as np
    import pyarrow.parquet as pq

    run = Path(run_dir)
    manifest = load_manifest(run)
    hashers: dict[str, Any] = {}
    types: dict[str, str] = {}
    for c in manifest_chunks(manifest):
        table = pq.read_table(run / c.file)
        for name in table.column_names:
            col = table.column(name).combine_chunks()
            h = hashers.setdefault(name, hashlib.sha256())
            if name == "strategy":
                values = col.cast("string") if hasattr(col.type, "value_type") else col
                h.update("\n".join(values.to_pylist()).encode() + b"\n")
                types[name] = "label"
            else:
                arr = col.to_numpy(zero_copy_only=False)
                h.update(np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes())
                types[name] = str(col.type)
    top = hashlib.sha256()
    for name, h in hashers.items():
        top.update(f"{name}:{types[name]}:{h.hexdigest()}\n".encode())
    return top.hexdigest()

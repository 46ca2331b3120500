"""The run directory: its layout, the manifest, chunk files with their checksums, and reading it back.

Layout (written by :mod:`harness.play.runner`, read by reports and comparisons)::

    RUN_DIR/manifest.json                                   written first, rewritten as chunks land
    RUN_DIR/chunks/part-L{lineup:04d}-G{start:012d}.parquet one file per (lineup, chunk of games)
    RUN_DIR/chunks/*.tmp                                    a chunk being written (never read)
    RUN_DIR/records/part-L{lineup:04d}-G{start:012d}.parquet with ``record = true``: every roll and
                                                            decision of the chunk's games
    RUN_DIR/run.log                                         the run's log (worker records included)

A chunk file appears under its final name only once complete (written to ``.tmp`` in the same
directory, fsynced, renamed), so a crash leaves complete files and temporary debris, never a
truncated ``.parquet``. The manifest lists each complete chunk with the sha256 of its bytes;
resuming replays a chunk whose bytes no longer match, and reading refuses one (naming the
resume command). Chunk files a crash left unlisted are replayed on resume; a report of a run in
progress reads them unverified.

Reading: :func:`load_run` gives a :class:`RunInfo` (manifest, rule set, the complete chunks of
every lineup); :func:`iter_windows` walks game windows across several (run, lineup) streams at
once, one chunk file per stream in memory, so memory never grows with the number of games.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from harness.util.errors import UserError
from harness.game.rules import RuleSet, load_rules

FORMAT = 1
MANIFEST = "manifest.json"
CHUNK_DIR = "chunks"
RECORD_DIR = "records"
LOG = "run.log"
TMP_SUFFIX = ".tmp"


@dataclass(frozen=True, order=True)
class Chunk:
    """Games ``start..stop-1`` of lineup ``lineup``: one unit of work and one Parquet file."""

    lineup: int
    start: int
    stop: int
    #: sha256 of the file's bytes, once written (None: not known, e.g. a chunk still to play)
    sha256: str | None = field(default=None, compare=False)
    #: sha256 of the chunk's records file, when the run records
    records_sha256: str | None = field(default=None, compare=False)

    @property
    def file(self) -> str:
        """Path relative to the run directory."""
        return chunk_file(self.lineup, self.start)

    @property
    def records_file(self) -> str:
        """Path of the chunk's records file relative to the run directory (``record = true``)."""
        return f"{RECORD_DIR}/{Path(self.file).name}"

    @property
    def games(self) -> int:
        return self.stop - self.start

    def to_dict(self) -> dict[str, Any]:
        d = {"lineup": self.lineup, "start": self.start, "stop": self.stop, "file": self.file}
        if self.sha256:
            d["sha256"] = self.sha256
        if self.records_sha256:
            d["records_sha256"] = self.records_sha256
        return d


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
    text = dumps_manifest(obj) if isinstance(obj, Mapping) else json.dumps(obj) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``path.tmp``: fsync then rename.

    On any failure (a full disk, a read-only directory) the temporary file is removed and the
    ``OSError`` re-raised: ``path`` keeps its old content, and nothing is left behind.
    """
    tmp = path.with_name(path.name + TMP_SUFFIX)
    try:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of a chunk's bytes (what the manifest records)."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    """Hex sha256 of a file's bytes, None if it cannot be read."""
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def load_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a run directory as a dict (format 1); a clear error if it is not one."""
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise UserError(f"{run_dir} is not a run directory (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise UserError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(
            f"{path}: unknown manifest format {data.get('format') if isinstance(data, dict) else None!r} "
            f"(this harness reads format {FORMAT})"
        )
    return data


def manifest_chunks(manifest: Mapping[str, Any]) -> list[Chunk]:
    """The complete chunks a manifest records (with their checksums), sorted by (lineup, start)."""
    return sorted(
        Chunk(int(c["lineup"]), int(c["start"]), int(c["stop"]), c.get("sha256"), c.get("records_sha256"))
        for c in manifest.get("chunks", [])
    )


def parse_chunk_name(name: str) -> tuple[int, int] | None:
    """``part-L0001-G000000050000.parquet`` -> (1, 50000); None for anything else."""
    if not (name.startswith("part-L") and name.endswith(".parquet")):
        return None
    body = name[len("part-L") : -len(".parquet")]
    lineup, sep, start = body.partition("-G")
    if not (sep and lineup.isdigit() and start.isdigit()):
        return None
    return int(lineup), int(start)


def parquet_rows(path: Path) -> int | None:
    """Row count from a Parquet footer, None if the file is unreadable."""
    # pyarrow (~0.3 s) loads where a Parquet file is read: reading a manifest, and `compare --help`
    # or `report --help` (which import this module), do not pay for it
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(path).num_rows)
    except Exception:  # any damage means "redo this chunk"
        return None


def read_parquet(source: Any, columns: Sequence[str] | None = None) -> Any:
    """One Parquet file (a path or a ``pyarrow.BufferReader``) as a ``pyarrow.Table``, of
    ``columns`` or every column. Not ``pq.read_table``: that goes through ``pyarrow.dataset``,
    which imports pandas, 0.4 s of CPU that reading one file does not need (`review` of one game,
    benchmarks/BENCHMARKS.md "Game review"); the table is the same, schema and metadata included."""
    import pyarrow.parquet as pq  # lazily, as in parquet_rows

    return pq.ParquetFile(source).read(columns=None if columns is None else list(columns))


def numpy_of(column: Any) -> Any:
    """A pyarrow column (a ``ChunkedArray`` or an ``Array``) as a numpy array. A boolean, integer or
    float column without nulls is read from its buffers (numbers: zero copy for one chunk,
    read-only as pyarrow's own); pyarrow's ``to_numpy`` would import pandas (0.4 s of CPU, a third of `review`'s own work:
    benchmarks/BENCHMARKS.md "Game review"). Any other column goes through ``to_numpy``."""
    import numpy as np
    import pyarrow as pa

    t = column.type
    chunks = [c for c in (column.chunks if isinstance(column, pa.ChunkedArray) else [column]) if len(c)]
    if column.null_count:
        return column.to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(t):  # bits, least significant first
        dt = np.dtype(bool)
        parts = [
            np.unpackbits(np.frombuffer(c.buffers()[1], np.uint8), count=c.offset + len(c), bitorder="little")[
                c.offset :
            ].astype(bool)
            for c in chunks
        ]
    elif pa.types.is_integer(t) or pa.types.is_floating(t):
        kind = "f" if pa.types.is_floating(t) else ("i" if pa.types.is_signed_integer(t) else "u")
        dt = np.dtype(f"<{kind}{t.bit_width // 8}")
        parts = [np.frombuffer(c.buffers()[1], dtype=dt, count=len(c), offset=c.offset * dt.itemsize) for c in chunks]
    else:
        return column.to_numpy(zero_copy_only=False)
    if not parts:
        return np.empty(0, dt)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def rows_digest(run_dir: str | os.PathLike[str]) -> str:
    """sha256 of every row of a run, sorted by (lineup, game, seat), independent of chunking.

    One hash per column over the concatenated column values (numeric columns as little-endian
    bytes of their Parquet type, ``strategy`` as its labels), then a hash of the column names,
    types and column hashes. Two runs with the same config and seed give the same digest whatever
    their chunk size, worker count or backend.
    """
    run = Path(run_dir)
    manifest = load_manifest(run)
    hashers: dict[str, Any] = {}
    types: dict[str, str] = {}
    for c in manifest_chunks(manifest):
        table = read_parquet(run / c.file)
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


# ---------------------------------------------------------------------------------------------
# reading a run back


@dataclass(frozen=True)
class ChunkRef:
    """One complete chunk file: games ``start..stop-1`` of one lineup (``sha256`` None: unlisted)."""

    lineup: int
    start: int
    stop: int
    path: Path
    sha256: str | None = None


@dataclass(frozen=True)
class RunInfo:
    """A run directory's manifest, rule set and complete chunks.

    ``games`` is the number of games present in *every* lineup as a contiguous prefix
    ``0..games-1`` (what a report uses); ``games_planned`` is the manifest's target.
    ``chunks[l]`` lists lineup ``l``'s chunk files in game order, covering at least ``games``.
    """

    path: Path
    manifest: Mapping[str, Any]
    rules: RuleSet
    kind: str
    entrants: tuple[str, ...]
    lineups: tuple[tuple[str, ...], ...]
    seed: int
    games_planned: int
    games: int
    complete: bool
    chunks: tuple[tuple[ChunkRef, ...], ...]
    warnings: tuple[str, ...] = ()

    @property
    def box_names(self) -> list[str]:
        return self.rules.box_names

    def entrant_index(self) -> list[list[int]]:
        """Per lineup, the entrant index of each seat."""
        pos = {e: i for i, e in enumerate(self.entrants)}
        return [[pos[lab] for lab in lineup] for lineup in self.lineups]


@functools.lru_cache(maxsize=32)
def _cached_rules(name: str, over: tuple[tuple[str, Any], ...]) -> RuleSet:
    # compiling a rule set takes ~0.2 s; compare --sequential re-reads both manifests at every look
    return load_rules(name, dict(over))


def rules_of_manifest(manifest: Mapping[str, Any], where: str) -> tuple[RuleSet, list[str]]:
    """Rebuild the run's rule set from ``manifest["rules"]``; returns (rules, warnings).

    The manifest records the *effective* settings; only those differing from the rule file's
    own defaults are passed as overrides (some settings may not be overridden on every rule set).
    The digest is checked so that a rule file edited since the run is reported, not trusted.
    """
    spec = manifest.get("rules")
    if not isinstance(spec, Mapping) or not spec.get("name"):
        raise UserError(f"{where}: manifest has no rules.name")
    source = spec.get("source")
    name = source if source and Path(str(source)).is_file() else str(spec["name"])
    base = _cached_rules(name, ())
    settings = spec.get("settings") or {}
    over = {k: v for k, v in settings.items() if base.settings.get(k) != v}
    rules = _cached_rules(name, tuple(sorted(over.items()))) if over else base
    warns = []
    digest = spec.get("digest")
    if digest and digest != rules.digest:
        warns.append(
            f"rule set {spec['name']!r} ({name}) has changed since the run (digest differs); "
            "box names and kinds are taken from the current file"
        )
    return rules, warns


def settings_changed(rules: RuleSet) -> dict[str, Any]:
    """The settings that differ from the rule file's own (what a ``--set`` changed)."""
    try:
        base = load_rules(rules.source)
    except UserError:
        return dict(rules.settings)
    return {k: v for k, v in rules.settings.items() if base.settings.get(k) != v}


def load_run(run_dir: str | os.PathLike[str]) -> RunInfo:
    """Read ``RUN_DIR/manifest.json`` and find the complete chunk files.

    Chunk files are found on disk (temporary files of a run in progress do not match), so a report
    can be made of an unfinished run: it then covers the games every lineup has finished. Raises
    :class:`UserError` for anything missing.
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run directory not found: {path}")
    manifest = load_manifest(path)
    mpath = path / MANIFEST
    lineups = tuple(tuple(str(x) for x in lu) for lu in manifest.get("lineups") or [])
    if not lineups or any(not lu for lu in lineups):
        raise UserError(f"{mpath}: manifest has no lineups")
    entrants = [str(e["label"]) for e in manifest.get("entrants") or []]
    for lu in lineups:
        entrants += [lab for lab in lu if lab not in entrants]
    rules, warns = rules_of_manifest(manifest, str(mpath))
    planned = int(manifest.get("games", 0))

    listed = {(c.lineup, c.start): c for c in manifest_chunks(manifest)}
    found: list[list[ChunkRef]] = [[] for _ in lineups]
    cdir = path / CHUNK_DIR
    for f in sorted(cdir.iterdir()) if cdir.is_dir() else []:
        key = parse_chunk_name(f.name)
        if key is None:
            continue
        li, start = key
        if li >= len(lineups):
            raise UserError(f"{f}: lineup {li} is not in the manifest ({len(lineups)} lineups)")
        c = listed.get(key)
        if c is not None:
            found[li].append(ChunkRef(li, start, c.stop, f, c.sha256))
        else:
            found[li].append(ChunkRef(li, start, _chunk_stop(f, start, len(lineups[li])), f))
    chunks = []
    covered = []
    for refs in found:
        refs.sort(key=lambda c: c.start)
        run, end = [], 0
        for c in refs:
            if c.start != end:
                break  # a gap: a chunk still being played (or lost); stop at the contiguous prefix
            run.append(c)
            end = c.stop
        chunks.append(tuple(run))
        covered.append(end)
    games = min(covered)
    if planned:
        games = min(games, planned)
    complete = bool(manifest.get("complete")) and games >= planned
    if games == 0:
        raise UserError(f"{path}: no complete games yet (no chunk files under {cdir})")
    if not complete:
        warns.append(f"incomplete run: {games:,} of {planned:,} games in every lineup")
    return RunInfo(
        path,
        manifest,
        rules,
        str(manifest.get("kind", "run")),
        tuple(entrants),
        lineups,
        int(manifest.get("seed", 0)),
        planned,
        games,
        complete,
        tuple(chunks),
        tuple(warns),
    )


def _chunk_stop(path: Path, start: int, seats: int) -> int:
    rows = parquet_rows(path)
    if rows is None:
        raise UserError(
            f"{path}: unreadable chunk file; replay it with: yatzy-harness run --resume {path.parent.parent}"
        )
    if rows % seats:
        raise UserError(f"{path}: {rows} rows is not a whole number of {seats}-seat games")
    return start + rows // seats


def read_chunk(ref: ChunkRef, columns: Sequence[str]) -> Any:
    """The chunk's table (pyarrow) with ``columns``, after checking its bytes against the manifest."""
    import pyarrow as pa

    resume = f"yatzy-harness run --resume {ref.path.parent.parent}"
    try:
        data = ref.path.read_bytes()
    except OSError as exc:
        raise UserError(f"{ref.path}: cannot read: {exc.strerror or exc}") from None
    if ref.sha256 is not None and sha256_bytes(data) != ref.sha256:
        raise UserError(f"{ref.path}: damaged (its sha256 differs from the manifest's); replay it with: {resume}")
    try:
        return read_parquet(pa.BufferReader(data), columns)
    except Exception as exc:  # pyarrow raises several types for unreadable/missing columns
        raise UserError(f"{ref.path}: cannot read: {exc}") from None


class _Cursor:
    """Reads one lineup's chunks in game order, one file at a time, as (B, S) arrays per column."""

    def __init__(self, refs: Sequence[ChunkRef], seats: int, columns: Sequence[str]) -> None:
        self.refs, self.seats, self.columns = refs, seats, list(columns)
        self.i = -1
        self.start = self.stop = 0
        self.data: dict[str, np.ndarray] = {}

    def ensure(self, a: int) -> int:
        """Load the chunk holding game ``a``; returns that chunk's stop."""
        while a >= self.stop:
            self.i += 1
            if self.i >= len(self.refs):
                raise UserError(f"game {a} is missing from the run's chunk files")
            ref = self.refs[self.i]
            if a >= ref.stop:  # skip without reading (a resumed comparison starts mid-run)
                self.start = self.stop = ref.stop
                continue
            table = read_chunk(ref, ["game"] + self.columns)
            b, s = ref.stop - ref.start, self.seats
            if table.num_rows != b * s:
                raise UserError(f"{ref.path}: {table.num_rows} rows, expected {b} games x {s} seats")
            g = table.column("game").to_numpy().reshape(b, s)
            if not (np.array_equal(g[:, 0], np.arange(ref.start, ref.stop)) and (g == g[:, :1]).all()):
                raise UserError(f"{ref.path}: rows are not games {ref.start}..{ref.stop - 1} in (game, seat) order")
            self.data = {c: table.column(c).to_numpy().reshape(b, s) for c in self.columns}
            self.start, self.stop = ref.start, ref.stop
        return self.stop

    def take(self, a: int, b: int) -> dict[str, np.ndarray]:
        off = a - self.start
        return {c: v[off : off + b - a] for c, v in self.data.items()}


def iter_windows(
    runs: Sequence[tuple[RunInfo, int]], columns: Sequence[str], games: int, start: int = 0
) -> Iterator[tuple[int, int, list[dict[str, np.ndarray]]]]:
    """Walk games ``start..games-1`` in windows across several (run, lineup) streams at once.

    Yields ``(a, b, data)`` where ``data[k][column]`` is a (b-a, S_k) array of stream ``k``'s rows
    for games ``a..b-1``. A window ends at the nearest chunk boundary of any stream, so each
    stream holds one chunk file in memory.
    """
    cursors = [_Cursor(info.chunks[li], len(info.lineups[li]), columns) for info, li in runs]
    a = start
    while a < games:
        b = min(games, min(c.ensure(a) for c in cursors))
        yield a, b, [c.take(a, b) for c in cursors]
        a = b


def chunk_columns(info: RunInfo) -> set[str]:
    """The row columns present in every chunk of the run (runs played before a column existed, or
    resumed across that change, lack it in some chunks)."""
    import pyarrow.parquet as pq

    out: set[str] | None = None
    for refs in info.chunks:
        for ref in refs:
            try:
                names = set(pq.read_schema(ref.path).names)
            except (OSError, ValueError):
                continue  # a damaged file: reading its rows reports it, naming the repair
            out = names if out is None else out & names
    return out or set()

"""Run reports: stream a run directory's chunks into per-entrant and per-pairing summaries and write them out.

A run directory (see the run-directory format in the project docs) holds one Parquet file per
(lineup, chunk of games). :func:`load_run` reads the manifest and finds the complete chunks;
:func:`iter_windows` walks game windows across several lineups at once, reading one chunk file per
lineup at a time with only the needed columns, so memory depends on the chunk size and the number
of lineups, never on the number of games. :func:`summarize` folds the windows into a
:class:`RunSummary` (integer histograms, streamed moments, outcome counts); :func:`write_report`
writes ``summary.json``, ``summary.md``, ``report.html`` and the PNGs of :mod:`harness.plot`.

Statistical choices (the "why" behind the numbers):

* An entrant's mean CI is computed over *games*, not rows: for each game index the entrant's
  totals over every (lineup, seat) it holds are averaged first. In a tournament the same entrant
  sees the same dice in the same seat of every lineup, so its rows are not independent; games are.
  The reported ``std`` is the per-row spread of scores (from the exact histogram).
* Win/draw/loss: ``outcome`` 2 = sole win, 1 = shared win (a draw in two-player play), 0 = loss.
  Rates carry Wilson intervals over games, which treat games as independent. For seat-swapped
  lineups (A,B)+(B,A) the game pairs on identical dice are counted as a pentanomial (the pair's
  points 0, .5, 1, 1.5, 2 for A), whose Elo interval respects the correlation inside a pair.
* Head-to-head: every pair of seats holding different entrants is one comparison of their ranking
  scores (the total, or the best column when columns are not added). Bradley-Terry ratings with
  intervals come from that matrix (:func:`harness.stats.bradley_terry`).
* Yatzy rate: share of rows whose yatzy-kind box (the first box of kind ``yatzy`` that does not
  need the key box: ``yatzy``, ``maxi_yatzy``, ``generala``) scored > 0; with several columns, in
  any column. Bonus rate: share of rows with a non-zero upper bonus.
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from harness.errors import UserError
from harness.rules import RuleSet, load_rules
from harness.stats import (
    IntHistogram,
    Moments,
    Ratings,
    bradley_terry,
    elo_ci_from_pentanomial,
    elo_from_score,
    mean_ci,
    rate,
)

#: Percentiles reported for every entrant (same keys as ``solve --json``).
PERCENTILES: tuple[int, ...] = (1, 5, 25, 50, 75, 95, 99)

_CHUNK_RE = re.compile(r"^part-L(\d{4,})-G(\d{12,})\.parquet$")

# ---------------------------------------------------------------------------------------------
# reading a run directory


@dataclass(frozen=True)
class ChunkRef:
    """One complete chunk file: games ``start..stop-1`` of one lineup."""

    lineup: int
    start: int
    stop: int
    path: Path


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
        warns.append(f"rule set {spec['name']!r} ({name}) has changed since the run (digest differs); "
                     "box names and kinds are taken from the current file")
    return rules, warns


def settings_changed(rules: RuleSet) -> dict[str, Any]:
    """The settings that differ from the rule file's own (what a ``--set`` changed)."""
    try:
        base = load_rules(rules.source)
    except UserError:
        return dict(rules.settings)
    return {k: v for k, v in rules.settings.items() if base.settings.get(k) != v}


def _chunk_stop(path: Path, start: int, seats: int) -> int:
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(path).metadata.num_rows
    if rows % seats:
        raise UserError(f"{path}: {rows} rows is not a whole number of {seats}-seat games")
    return start + rows // seats


def load_run(run_dir: str | Path) -> RunInfo:
    """Read ``RUN_DIR/manifest.json`` and find the complete chunk files.

    Chunk files are found on disk (``chunks/part-L{lineup}-G{start}.parquet``; temporary files
    of a run in progress do not match), so a report can be made of an unfinished run: it then
    covers the games every lineup has finished. Raises :class:`UserError` for anything missing.
    """
    path = Path(run_dir)
    mpath = path / "manifest.json"
    if not path.is_dir():
        raise UserError(f"run directory not found: {path}")
    if not mpath.is_file():
        raise UserError(f"{path}: not a run directory (no manifest.json)")
    try:
        manifest = json.loads(mpath.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{mpath}: cannot read: {exc}") from None
    if manifest.get("format") != 1:
        raise UserError(f"{mpath}: unsupported format {manifest.get('format')!r} (expected 1)")
    lineups = tuple(tuple(str(x) for x in lu) for lu in manifest.get("lineups") or [])
    if not lineups or any(not lu for lu in lineups):
        raise UserError(f"{mpath}: manifest has no lineups")
    entrants = [str(e["label"]) for e in manifest.get("entrants") or []]
    for lu in lineups:
        entrants += [lab for lab in lu if lab not in entrants]
    rules, warns = rules_of_manifest(manifest, str(mpath))
    planned = int(manifest.get("games", 0))

    listed = {str(c["file"]): int(c["stop"]) for c in manifest.get("chunks") or []}
    found: list[list[ChunkRef]] = [[] for _ in lineups]
    cdir = path / "chunks"
    for f in sorted(cdir.iterdir()) if cdir.is_dir() else []:
        m = _CHUNK_RE.match(f.name)
        if not m:
            continue
        li, start = int(m.group(1)), int(m.group(2))
        if li >= len(lineups):
            raise UserError(f"{f}: lineup {li} is not in the manifest ({len(lineups)} lineups)")
        rel = f"chunks/{f.name}"
        stop = listed[rel] if rel in listed else _chunk_stop(f, start, len(lineups[li]))
        found[li].append(ChunkRef(li, start, stop, f))
    chunks = []
    covered = []
    for li, refs in enumerate(found):
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
    return RunInfo(path, manifest, rules, str(manifest.get("kind", "run")), tuple(entrants), lineups,
                   int(manifest.get("seed", 0)), planned, games, complete, tuple(chunks), tuple(warns))


class _Cursor:
    """Reads one lineup's chunks in game order, one file at a time, as (B, S) arrays per column."""

    def __init__(self, refs: Sequence[ChunkRef], seats: int, columns: Sequence[str]) -> None:
        self.refs, self.seats, self.columns = refs, seats, list(columns)
        self.i = -1
        self.start = self.stop = 0
        self.data: dict[str, np.ndarray] = {}

    def ensure(self, a: int) -> int:
        """Load the chunk holding game ``a``; returns that chunk's stop."""
        import pyarrow.parquet as pq

        while a >= self.stop:
            self.i += 1
            if self.i >= len(self.refs):
                raise UserError(f"game {a} is missing from the run's chunk files")
            ref = self.refs[self.i]
            if a >= ref.stop:  # skip without reading (a resumed comparison starts mid-run)
                self.start = self.stop = ref.stop
                continue
            try:
                table = pq.read_table(ref.path, columns=["game"] + self.columns)
            except Exception as exc:  # pyarrow raises several types for unreadable/missing columns
                raise UserError(f"{ref.path}: cannot read: {exc}") from None
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
        return {c: v[off:off + b - a] for c, v in self.data.items()}


def iter_windows(runs: Sequence[tuple[RunInfo, int]], columns: Sequence[str], games: int, start: int = 0
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


def yatzy_box(rules: RuleSet) -> str | None:
    """Name of the rule set's yatzy-kind box (not one that needs the key box), or None."""
    for b in rules.boxes:
        if b.kind == "yatzy" and not b.requires_key:
            return b.name
    return None


def rank_column(rules: RuleSet) -> str:
    """The column that decides who wins: ``total``, or ``best_column`` when columns are not added."""
    return "best_column" if rules.columns > 1 and not rules.add_columns else "total"


# ---------------------------------------------------------------------------------------------
# summaries


@dataclass(frozen=True, eq=False)
class EntrantStats:
    """Streamed summary of one entrant's rows.

    ``hist``: exact histogram of totals; ``per_game``: moments of the entrant's per-game mean
    total (the unit for the mean's CI); ``box_sum``/``box_sumsq``: (NB,) int64 sums of each box
    and of its square; ``played``: rows at tables of two or more seats (where outcomes mean
    something) and ``wins``/``draws``/``losses`` among them.
    """

    label: str
    hist: IntHistogram
    per_game: Moments
    bonus: int
    yatzy: int
    played: int
    wins: int
    draws: int
    losses: int
    box_sum: np.ndarray
    box_sumsq: np.ndarray

    @property
    def rows(self) -> int:
        return self.hist.n

    def box_means(self) -> np.ndarray:
        return self.box_sum / max(1, self.rows)

    def box_stds(self) -> np.ndarray:
        n = self.rows
        if n < 2:
            return np.full(self.box_sum.shape, math.nan)
        var = (self.box_sumsq - self.box_sum.astype(np.float64) ** 2 / n) / (n - 1)
        return np.sqrt(np.clip(var, 0.0, None))


@dataclass(frozen=True)
class PairingStats:
    """Win/draw/loss of entrant ``a`` against ``b`` (``b`` None: against the field at N-seat tables).

    For ``a == b`` (self-play) the counts are seat 1's against seat 2. ``pentanomial`` (length 5,
    pairs in which ``a`` scored 0, .5, 1, 1.5, 2) is set when seat-swapped lineups were played.
    """

    a: str
    b: str | None
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int] | None = None

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def name(self) -> str:
        if self.b is None:
            return f"{self.a} vs field"
        if self.a == self.b:
            return f"{self.a} (seat 1) vs {self.b} (seat 2)"
        return f"{self.a} vs {self.b}"


@dataclass(frozen=True, eq=False)
class RunSummary:
    """Everything a report shows; ``h2h_points[i, j]`` = points of entrant i against j (win 1,
    draw 0.5), ``h2h_games[i, j]`` = comparisons between them (float64 / int64, shape (K, K))."""

    info: RunInfo
    entrants: tuple[EntrantStats, ...]
    pairings: tuple[PairingStats, ...]
    h2h_points: np.ndarray
    h2h_games: np.ndarray
    ratings: Ratings | None
    confidence: float = 0.95
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able summary written to ``summary.json`` (NaN becomes null)."""
        return _clean(_summary_dict(self))


def _pair_seat_swaps(lineups: Sequence[tuple[str, ...]]) -> list[tuple[int, int]]:
    """Lineup index pairs ((A,B), (B,A)) with A != B, each lineup used at most once."""
    used: set[int] = set()
    out = []
    for i, lu in enumerate(lineups):
        if len(lu) != 2 or lu[0] == lu[1] or i in used:
            continue
        for j in range(i + 1, len(lineups)):
            if j not in used and lineups[j] == (lu[1], lu[0]):
                used |= {i, j}
                out.append((i, j))
                break
    return out


def summarize(run: str | Path | RunInfo, confidence: float = 0.95) -> RunSummary:
    """Stream every chunk of a run once and build its :class:`RunSummary`.

    Memory: one chunk per lineup (only the columns used), plus O(entrants x boxes) counters.
    """
    info = run if isinstance(run, RunInfo) else load_run(run)
    rules = info.rules
    boxes = rules.box_names
    ybox = yatzy_box(rules)
    rcol = rank_column(rules)
    cols = list(dict.fromkeys(["total", "bonus", "outcome", rcol] + boxes))
    k, nb = len(info.entrants), len(boxes)
    eidx = info.entrant_index()
    slots = np.zeros(k, dtype=np.int64)  # (lineup, seat) places each entrant holds, per game
    for row in eidx:
        for e in row:
            slots[e] += 1

    hists = [IntHistogram.empty() for _ in range(k)]
    per_game = [Moments.empty() for _ in range(k)]
    bonus = np.zeros(k, np.int64)
    yatzy = np.zeros(k, np.int64)
    played = np.zeros(k, np.int64)
    wdl = np.zeros((k, 3), np.int64)  # wins, draws, losses
    box_sum = np.zeros((k, nb), np.int64)
    box_sq = np.zeros((k, nb), np.int64)
    h2h_pts = np.zeros((k, k))
    h2h_n = np.zeros((k, k), np.int64)
    # pairings: key (a, b) entrant indices, b = -1 for the field at N-seat tables
    pair_wdl: dict[tuple[int, int], np.ndarray] = {}
    swaps = _pair_seat_swaps(info.lineups)
    penta: dict[tuple[int, int], np.ndarray] = {}

    streams = [(info, li) for li in range(len(info.lineups))]
    for a, b, datas in iter_windows(streams, cols, info.games):
        csum = np.zeros((k, b - a))
        parts: list[list[np.ndarray]] = [[] for _ in range(k)]
        for li, d in enumerate(datas):
            row = eidx[li]
            n_seats = len(row)
            tot = d["total"]
            bx = np.stack([d[n] for n in boxes], axis=2).astype(np.int64)  # (B, S, NB)
            bsum, bsq = bx.sum(axis=0), (bx * bx).sum(axis=0)
            outc = d["outcome"]
            for s, e in enumerate(row):
                x = tot[:, s]
                parts[e].append(x)
                csum[e] += x
                bonus[e] += int(np.count_nonzero(d["bonus"][:, s]))
                if ybox is not None:
                    yatzy[e] += int(np.count_nonzero(d[ybox][:, s]))
                box_sum[e] += bsum[s]
                box_sq[e] += bsq[s]
                if n_seats >= 2:
                    cnt = np.bincount(outc[:, s], minlength=3)
                    played[e] += b - a
                    wdl[e] += (cnt[2], cnt[1], cnt[0])
            rank = d[rcol].astype(np.int32)
            for s in range(n_seats):
                for t in range(s + 1, n_seats):
                    es, et = row[s], row[t]
                    if es == et:
                        continue
                    sign = np.sign(rank[:, s] - rank[:, t])
                    win, draw = int(np.count_nonzero(sign > 0)), int(np.count_nonzero(sign == 0))
                    h2h_pts[es, et] += win + 0.5 * draw
                    h2h_pts[et, es] += (b - a - win - draw) + 0.5 * draw
                    h2h_n[es, et] += b - a
                    h2h_n[et, es] += b - a
            if n_seats == 2:
                e0, e1 = row
                flip = e1 < e0
                key = (e1, e0) if flip else (e0, e1)
                cnt = np.bincount(outc[:, 1 if flip else 0], minlength=3)
                pair_wdl.setdefault(key, np.zeros(3, np.int64))[:] += (cnt[2], cnt[1], cnt[0])
            elif n_seats > 2:
                for s, e in enumerate(row):
                    cnt = np.bincount(outc[:, s], minlength=3)
                    pair_wdl.setdefault((e, -1), np.zeros(3, np.int64))[:] += (cnt[2], cnt[1], cnt[0])
        for li, lj in swaps:
            e0, e1 = eidx[li]
            flip = e1 < e0
            key = (e1, e0) if flip else (e0, e1)
            # outcome is 2/1/0 = twice the game's points, so the pair's points x2 is their sum (0..4)
            seat_i, seat_j = (1, 0) if flip else (0, 1)
            pts = datas[li]["outcome"][:, seat_i].astype(np.int64) + datas[lj]["outcome"][:, seat_j]
            penta.setdefault(key, np.zeros(5, np.int64))[:] += np.bincount(pts, minlength=5)[:5]
        for e in range(k):
            if parts[e]:
                hists[e] = hists[e].add(np.concatenate(parts[e]))
                per_game[e] = per_game[e].merge(Moments.of(csum[e] / slots[e]))

    entrants = tuple(
        EntrantStats(info.entrants[e], hists[e], per_game[e], int(bonus[e]), int(yatzy[e]), int(played[e]),
                     int(wdl[e, 0]), int(wdl[e, 1]), int(wdl[e, 2]), box_sum[e].copy(), box_sq[e].copy())
        for e in range(k) if slots[e] > 0
    )
    pairings = []
    for (ea, eb), c in sorted(pair_wdl.items(), key=lambda kv: (kv[0][0], kv[0][1] if kv[0][1] >= 0 else 1 << 30)):
        pen = penta.get((ea, eb))
        pairings.append(PairingStats(info.entrants[ea], info.entrants[eb] if eb >= 0 else None,
                                     int(c[0]), int(c[1]), int(c[2]),
                                     tuple(int(x) for x in pen) if pen is not None else None))
    ratings = None
    present = [e for e in range(k) if slots[e] > 0]
    sub_n = h2h_n[np.ix_(present, present)]
    if len(present) >= 2 and sub_n.sum() > 0:
        ratings = bradley_terry([info.entrants[e] for e in present], h2h_pts[np.ix_(present, present)], confidence)
    return RunSummary(info, entrants, tuple(pairings), h2h_pts[np.ix_(present, present)], sub_n, ratings,
                      confidence, info.warnings)


# ---------------------------------------------------------------------------------------------
# dict / markdown / html


def _clean(o: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, np.ndarray):
        return _clean(o.tolist())
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        f = float(o)
        return f if math.isfinite(f) else None
    return o


def entrant_dict(e: EntrantStats, boxes: Sequence[str], confidence: float) -> dict[str, Any]:
    """One entrant's JSON summary (see :func:`summarize` for the definitions)."""
    ci = mean_ci(e.per_game, confidence)
    n = e.rows
    pct = e.hist.percentiles(np.array(PERCENTILES, dtype=float))
    br, yr = rate(e.bonus, n, confidence), rate(e.yatzy, n, confidence)
    w, d, l = (rate(x, e.played, confidence) for x in (e.wins, e.draws, e.losses))
    return {
        "strategy": e.label,
        "games": n,
        "mean": e.hist.mean,
        "mean_ci": [ci.lo, ci.hi],
        "std": e.hist.std,
        "min": e.hist.min,
        "max": e.hist.max,
        "percentiles": {str(p): int(v) for p, v in zip(PERCENTILES, pct)},
        "bonus_rate": br.rate, "bonus_ci": [br.lo, br.hi],
        "yatzy_rate": yr.rate, "yatzy_ci": [yr.lo, yr.hi],
        "played": e.played, "wins": e.wins, "draws": e.draws, "losses": e.losses,
        "win_rate": w.rate, "win_ci": [w.lo, w.hi],
        "draw_rate": d.rate, "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate, "loss_ci": [l.lo, l.hi],
        "box_means": {b: float(m) for b, m in zip(boxes, e.box_means())},
        "box_std": {b: float(s) for b, s in zip(boxes, e.box_stds())},
    }


def pairing_dict(p: PairingStats, confidence: float) -> dict[str, Any]:
    """One pairing's JSON summary: W/D/L with Wilson intervals, score, Elo (pentanomial CI if paired)."""
    n = p.games
    w, d, l = (rate(x, n, confidence) for x in (p.wins, p.draws, p.losses))
    score = (p.wins + 0.5 * p.draws) / n if n else math.nan
    out: dict[str, Any] = {
        "a": p.a, "b": p.b, "name": p.name, "games": n, "wins": p.wins, "draws": p.draws, "losses": p.losses,
        "win_rate": w.rate, "win_ci": [w.lo, w.hi], "draw_rate": d.rate, "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate, "loss_ci": [l.lo, l.hi], "score": score,
        # against the field of an N-seat table, par is 1/N, not 1/2: an Elo figure would mislead
        "elo": elo_from_score(score) if n and p.b is not None else math.nan, "elo_ci": None, "pentanomial": None,
    }
    if p.pentanomial is not None and sum(p.pentanomial):
        elo, lo, hi = elo_ci_from_pentanomial(p.pentanomial, confidence)
        out.update(elo=elo, elo_ci=[lo, hi], pentanomial=list(p.pentanomial))
    return out


def _summary_dict(s: RunSummary) -> dict[str, Any]:
    info = s.info
    boxes = info.box_names
    names = [e.label for e in s.entrants]
    out: dict[str, Any] = {
        "run": {
            "path": str(info.path), "kind": info.kind, "complete": info.complete,
            "games": info.games, "games_planned": info.games_planned, "seed": info.seed,
            "rules": {"name": info.rules.name, "settings": dict(info.rules.settings),
                      "settings_changed": settings_changed(info.rules), "digest": info.rules.digest},
            "lineups": [list(lu) for lu in info.lineups],
            "yatzy_box": yatzy_box(info.rules), "rank_by": rank_column(info.rules),
        },
        "confidence": s.confidence,
        "notes": list(s.notes),
        "entrants": [entrant_dict(e, boxes, s.confidence) for e in s.entrants],
        "pairings": [pairing_dict(p, s.confidence) for p in s.pairings],
        "head_to_head": None,
        "ratings": None,
    }
    if len(names) >= 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(s.h2h_games > 0, s.h2h_points / np.maximum(s.h2h_games, 1), np.nan)
        out["head_to_head"] = {"names": names, "score": share, "points": s.h2h_points, "games": s.h2h_games}
    if s.ratings is not None:
        out["ratings"] = s.ratings.table()
    return out


def _f(x: Any, nd: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:.{nd}f}"


def _pct(x: Any, ci: Sequence[Any] | None = None) -> str:
    if x is None:
        return "–"
    s = f"{100 * x:.1f} %"
    if ci and ci[0] is not None:
        s += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return s


def _tables(d: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables as (title, header, rows) of strings: shared by Markdown, HTML and stdout."""
    conf = f"{100 * d['confidence']:.4g} %"
    out = []
    rows = []
    for e in d["entrants"]:
        p = e["percentiles"]
        rows.append([e["strategy"], f"{e['games']:,}", f"{_f(e['mean'])} [{_f(e['mean_ci'][0])}, {_f(e['mean_ci'][1])}]",
                     _f(e["std"]), " / ".join(str(p[k]) for k in ("1", "5", "25", "50", "75", "95", "99")),
                     _pct(e["bonus_rate"], e["bonus_ci"]), _pct(e["yatzy_rate"], e["yatzy_ci"]),
                     _pct(e["win_rate"]), _pct(e["draw_rate"]), _pct(e["loss_rate"])])
    out.append((f"Entrants (mean with {conf} CI over games)",
                ["entrant", "games", "mean score", "std", "percentiles 1/5/25/50/75/95/99", "upper bonus",
                 "yatzy", "win", "draw", "loss"], rows))
    if d["pairings"]:
        rows = []
        for p in d["pairings"]:
            elo = _f(p["elo"], 1)
            if p["elo_ci"]:
                elo += f" [{_f(p['elo_ci'][0], 1)}, {_f(p['elo_ci'][1], 1)}]"
            rows.append([p["name"], f"{p['games']:,}", _pct(p["win_rate"], p["win_ci"]),
                         _pct(p["draw_rate"], p["draw_ci"]), _pct(p["loss_rate"], p["loss_ci"]), elo])
        out.append((f"Pairings (Wilson {conf} intervals; Elo interval from game pairs when seats were swapped)",
                    ["pairing", "games", "win", "draw", "loss", "Elo"], rows))
    if d["ratings"]:
        rows = [[str(r["rank"]), r["name"], _f(r["elo"], 1), f"[{_f(r['lo'], 1)}, {_f(r['hi'], 1)}]"]
                for r in d["ratings"]]
        out.append((f"Bradley-Terry ratings (Elo scale, mean 0, {conf} intervals)",
                    ["rank", "entrant", "Elo", "interval"], rows))
    if d["head_to_head"] and len(d["head_to_head"]["names"]) >= 3:
        h = d["head_to_head"]
        rows = [[n] + [("–" if x is None else f"{100 * x:.1f} %") for x in r] for n, r in zip(h["names"], h["score"])]
        out.append(("Head to head (row's score against column: win 1, draw ½)", ["entrant"] + h["names"], rows))
    if d["entrants"]:
        boxes = list(d["entrants"][0]["box_means"])
        rows = [[b] + [_f(e["box_means"][b]) for e in d["entrants"]] for b in boxes]
        out.append(("Mean score per box (points)", ["box"] + [e["strategy"] for e in d["entrants"]], rows))
    return out


def _header_lines(d: Mapping[str, Any]) -> list[str]:
    r = d["run"]
    st = ", ".join(f"{k}={v}" for k, v in r["rules"]["settings_changed"].items()) or "settings as in the rule file"
    lines = [f"Run: {r['path']} ({r['kind']}, {'complete' if r['complete'] else 'INCOMPLETE'})",
             f"Rules: {r['rules']['name']} ({st})",
             f"Games: {r['games']:,} per lineup x {len(r['lineups'])} lineup(s), seed {r['seed']}"]
    return lines + [f"Note: {n}" for n in d["notes"]]


def summary_markdown(d: Mapping[str, Any]) -> str:
    """``summary.md``: the header and every table as GitHub Markdown."""
    out = ["# Run report", ""] + [f"- {x}" for x in _header_lines(d)] + [""]
    for title, head, rows in _tables(d):
        out += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        out.append("")
    return "\n".join(out)


def summary_text(d: Mapping[str, Any]) -> str:
    """A plain-text rendering for the terminal (aligned columns)."""
    out = _header_lines(d)
    for title, head, rows in _tables(d):
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]
        out += ["", title]
        out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;
text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}img{max-width:100%;
margin:0.5em 0 1.5em;border:1px solid #eee}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.5em}
.note{color:#a40}"""


def report_html(d: Mapping[str, Any], pngs: Sequence[Path]) -> str:
    """``report.html``: self-contained (CSS inline, every PNG embedded as base64)."""
    esc = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>Run report: {esc(str(d['run']['path']))}</title><style>{_CSS}</style></head><body>",
             "<h1>Run report</h1><ul>"]
    for line in _header_lines(d):
        cls = " class='note'" if line.startswith("Note:") else ""
        parts.append(f"<li{cls}>{esc(line)}</li>")
    parts.append("</ul>")
    for title, head, rows in _tables(d):
        parts.append(f"<h2>{esc(title)}</h2><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows]
        parts.append("</table>")
    if pngs:
        parts.append("<h2>Plots</h2>")
    for p in pngs:
        b64 = base64.b64encode(Path(p).read_bytes()).decode("ascii")
        parts.append(f"<img alt='{esc(Path(p).stem)}' src='data:image/png;base64,{b64}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(summary: RunSummary, out_dir: str | Path | None = None, plots: bool = True) -> dict[str, Any]:
    """Write ``summary.json``, ``summary.md``, ``report.html`` and the PNGs; returns the summary dict.

    ``out_dir`` defaults to the run directory. The dict gains ``"files"``: the paths written.
    """
    out = Path(out_dir) if out_dir is not None else summary.info.path
    out.mkdir(parents=True, exist_ok=True)
    d = summary.to_dict()
    pngs: list[Path] = []
    if plots:
        from harness.plot import save_all_plots

        pngs = save_all_plots(summary, out)
    files = [out / "summary.json", out / "summary.md", out / "report.html"] + pngs
    d["files"] = [str(f) for f in files]
    (out / "summary.json").write_text(json.dumps(d, indent=2) + "\n")
    (out / "summary.md").write_text(summary_markdown(d))
    (out / "report.html").write_text(report_html(d, pngs))
    return d


# ---------------------------------------------------------------------------------------------
# CLI


def _cmd_report(args: argparse.Namespace) -> int:
    from harness.console import print_json

    summary = summarize(args.run_dir, confidence=args.confidence)
    d = write_report(summary, args.out, plots=not args.no_plots)
    if args.json:
        print_json(d)
    else:
        print(summary_text(d))
        print(f"\nwrote {', '.join(Path(f).name for f in d['files'])} to {Path(d['files'][0]).parent}")
    return 0


def _confidence(raw: str) -> float:
    try:
        v = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {raw!r}")
    return v


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The ``report`` subcommand."""
    p = sub.add_parser("report", help="summarise a run directory (tables, plots, HTML)",
                       description="Summarise a run directory: per entrant score distribution with a CI, "
                                   "bonus and yatzy rates, per-box means; per pairing win/draw/loss with Wilson "
                                   "intervals; head-to-head matrix and Bradley-Terry ratings. Writes summary.json, "
                                   "summary.md, report.html and PNG plots into the run directory.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by `yatzy-harness run`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    p.add_argument("--out", metavar="DIR", help="write the report files here instead of RUN_DIR")
    p.add_argument("--confidence", type=_confidence, default=0.95, help="interval confidence (default 0.95)")
    p.set_defaults(func=_cmd_report)

if __name__ == "__main__":  # pragma: no cover
    from harness.cli import main

    sys.exit(main(["report"] + sys.argv[1:]))

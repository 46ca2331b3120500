"""Test helper: write small run directories in the documented format without the runner.

Used by the report, compare and calibrate tests to build runs whose every row is known, so the
statistics can be checked against a plain pandas computation on the same rows.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.game.loop import play
from harness.game.registry import make
from harness.game.rules import load_rules


@functools.lru_cache(maxsize=16)
def _rules(name: str, settings: tuple[str, ...]):
    return load_rules(name, list(settings))


def write_run(
    out: Path,
    rules_name: str,
    lineups: Sequence[Sequence[str]],
    games: int,
    seed: int,
    chunk_size: int,
    settings: Sequence[str] = (),
    kind: str | None = None,
    complete: bool = True,
) -> tuple[Path, pd.DataFrame]:
    """Play every lineup on games 0..games-1 and write RUN_DIR; returns (dir, all rows as one frame)."""
    out = Path(out)
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    rules = _rules(rules_name, tuple(settings))
    labels: list[str] = []
    seats_of = []
    for lineup in lineups:
        bots = [make(spec, rules) for spec in lineup]
        seats_of.append(bots)
        for b in bots:
            if b.label not in labels:
                labels.append(b.label)
    chunks, frames = [], []
    for li, bots in enumerate(seats_of):
        for start in range(0, games, chunk_size):
            stop = min(games, start + chunk_size)
            frame = play(rules, bots, np.arange(start, stop, dtype=np.int64), seed).to_frame()
            frame.insert(0, "lineup", np.full(len(frame), li, dtype=np.int16))
            name = f"chunks/part-L{li:04d}-G{start:012d}.parquet"
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), out / name, compression="zstd")
            chunks.append({"lineup": li, "start": start, "stop": stop, "file": name})
            frames.append(frame)
    if kind is None:
        kind = "run" if len(lineups) == 1 else "tournament"
    manifest = {
        "format": 1,
        "kind": kind,
        "complete": complete,
        "rules": {"name": rules.name, "source": rules.source, "settings": dict(rules.settings), "digest": rules.digest},
        "entrants": [{"label": lab, "spec": lab} for lab in labels],
        "lineups": [[b.label for b in bots] for bots in seats_of],
        "games": games,
        "seed": seed,
        "chunk_size": chunk_size,
        "chunks": chunks,
        "created": "2026-11-01T00:00:00",
        "versions": {},
        "git": None,
        "config": {},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    rows = pd.concat(frames, ignore_index=True)
    rows["strategy"] = rows["strategy"].astype(str)
    return out, rows


def rechunk(run_dir: Path, out: Path, chunk_size: int) -> Path:
    """Copy a run directory with its rows cut into chunks of another size (no games replayed)."""
    run_dir, out = Path(run_dir), Path(out)
    (out / "chunks").mkdir(parents=True)
    m = json.loads((run_dir / "manifest.json").read_text())
    chunks = []
    for li in range(len(m["lineups"])):
        files = sorted((run_dir / "chunks").glob(f"part-L{li:04d}-G*.parquet"))
        rows = pa.concat_tables([pq.read_table(f) for f in files]).to_pandas()
        seats = len(m["lineups"][li])
        for start in range(0, m["games"], chunk_size):
            stop = min(m["games"], start + chunk_size)
            part = rows.iloc[start * seats : stop * seats]
            name = f"chunks/part-L{li:04d}-G{start:012d}.parquet"
            pq.write_table(pa.Table.from_pandas(part, preserve_index=False), out / name, compression="zstd")
            chunks.append({"lineup": li, "start": start, "stop": stop, "file": name})
    m["chunks"], m["chunk_size"] = chunks, chunk_size
    (out / "manifest.json").write_text(json.dumps(m, indent=2))
    return out


# ---------------------------------------------------------------------------------------------
# reading a drawn matplotlib Figure back (what the pictures' tests assert on)


# The layout (constrained) is computed at draw time: draw_without_rendering runs it without
# rasterising the picture, several times cheaper than canvas.draw() for the same extents.


def inside(fig, artist) -> bool:
    """Whether ``artist`` (a legend, an axes, a title) is drawn wholly inside ``fig``."""
    fig.draw_without_rendering()
    box, bb = artist.get_window_extent(), fig.bbox
    return bb.x0 <= box.x0 and box.x1 <= bb.x1 and bb.y0 <= box.y0 and box.y1 <= bb.y1


def layout_problems(fig) -> list[str]:
    """What is wrong with ``fig``'s layout (one layout pass): an artist (axes with their labels and
    titles, legends, suptitles) reaching outside the figure, or two of the figure's parts -- each
    visible axes with everything it draws, each figure legend, each (sub)figure's suptitle and
    supxlabel -- overlapping. [] when nothing is."""
    fig.draw_without_rendering()
    r = fig.canvas.get_renderer()
    out = []
    box, bb = fig.get_tightbbox(r), fig.bbox_inches
    eps = 1e-6
    if not (bb.x0 - eps <= box.x0 and box.x1 <= bb.x1 + eps and bb.y0 - eps <= box.y0 and box.y1 <= bb.y1 + eps):
        out.append(f"drawn {box.bounds} outside the figure {bb.bounds} (inches)")
    parts = [(f"axes {i}", ax.get_tightbbox(r)) for i, ax in enumerate(fig.axes) if ax.get_visible()]
    for k, f in enumerate([fig, *fig.subfigs]):
        parts += [(f"legend {j} of figure {k}", g.get_window_extent(r)) for j, g in enumerate(f.legends)]
        for name in ("_suptitle", "_supxlabel"):
            t = getattr(f, name, None)
            if t is not None and t.get_text() and t.get_visible():
                parts.append((f"{name[1:]} of figure {k}", t.get_window_extent(r)))
    out += [
        f"{m} and {n} overlap"
        for k, (m, a) in enumerate(parts)
        for n, b in parts[k + 1 :]
        if a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1
    ]
    return out


def errorbars(ax) -> list[tuple[float, float, float | None, float | None]]:
    """(x, y, low end, high end) of every horizontal error bar drawn on ``ax`` (ends None without a bar)."""
    from matplotlib.container import ErrorbarContainer

    out = []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            line, _, bars = c.lines
            for k, (x, y) in enumerate(zip(line.get_xdata(), line.get_ydata())):
                if bars:
                    (x0, _), (x1, _) = bars[0].get_segments()[k]
                    out.append((float(x), float(y), float(x0), float(x1)))
                else:
                    out.append((float(x), float(y), None, None))
    return out


#: A rule set with the upper boxes, chance and yatzy only: the solver solves it in about a second.
MINI_RULES = (
    """name = "mini"
title = "Mini Yatzy"
description = "upper boxes, chance and yatzy: small enough to solve in a second"
dice = 5

[settings]
upper_bonus_threshold = 63
upper_bonus_value = 50
"""
    + "".join(
        f'\n[[boxes]]\nname = "{n}"\nkind = "upper"\nface = {i + 1}\n'
        for i, n in enumerate(["ones", "twos", "threes", "fours", "fives", "sixes"])
    )
    + """
[[boxes]]
name = "chance"
kind = "chance"

[[boxes]]
name = "yatzy"
kind = "yatzy"
value = 50
"""
)

"""The closed loop of an exported level: the module under Node as an engine plays the games the
in-process bot plays from the same table, to the bit (issue 51; the longer form: benchmarks/bench_export.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from harness.play.runner import RunConfig, run
from harness.players.export import ExportOptions, export_level, resolve_level

# without node the tests skip, but not under CI (.ci/run), where they must run
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and not os.environ.get("CI"), reason="needs node (Node 20)"
)

GAMES = 1000


def rows(out: Path) -> pd.DataFrame:
    r = pd.read_parquet(out / "chunks").sort_values(["game", "seat"]).reset_index(drop=True)
    return r.drop(
        columns=[
            c
            for c in r.columns
            if c in ("strategy", "lineup") or c.startswith(("faults_", "engine_")) or c == "corrupted"
        ]
    )


@pytest.mark.parametrize(
    "rules,spec",
    [
        ("forced", "solver"),
        ("forced", "solver:temperature=1.2,blunder=0.03"),  # a randomised level: softmax and blunders
        ("scandinavian", "solver"),
        ("scandinavian", "solver:temperature=2,blunder=0.05"),
    ],
)
def test_the_exported_level_under_node_plays_the_in_process_games(tmp_path: Path, rules: str, spec: str) -> None:
    d = tmp_path / "level"
    export_level(resolve_level(spec, rules), d, ExportOptions(figures=False))
    table = f"{spec}{',' if ':' in spec else ':'}table={d}"
    engine = f'engine:cmd="node {d / "engine.mjs"}",name=js,move_ms=50,margin_ms=5000'
    cfg = dict(rules=rules, games=GAMES, seed=51, chunk_size=500, workers=2)
    js = run(RunConfig(seats=(engine, "greedy"), **cfg), tmp_path / "js")
    local = run(RunConfig(seats=(table, "greedy"), **cfg), tmp_path / "local")
    pd.testing.assert_frame_equal(rows(js), rows(local))
    f = json.loads((js / "manifest.json").read_text())["faults"]["js"]
    assert f["engine_decisions"] > GAMES * 15 and sum(f[k] for k in f if k.startswith("faults_")) == 0, f

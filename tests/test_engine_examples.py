"""The example engines (examples/engines/): greedy in Python and in JavaScript over the engine
protocol play exactly like the built-in greedy bot, game for game, with no faults.

Each game test plays 1,000 games of an example engine (``engine:file=greedy-py`` or
``engine:file=greedy-js``, the engine files in configs/engines/) against built-in greedy and
checks the engine seat's rows (total, upper subtotal, bonus and every box) equal those of
built-in greedy in the same seat of greedy,greedy with the same seed, and that the manifest
counts no fault. The tests of one module share the built-in runs (one xdist group) and take a few
seconds each. The JavaScript engine's tests skip when ``node`` is missing, except under CI=true,
where that fails.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main
from harness.game.rules import load_rules

pytestmark = pytest.mark.xdist_group("engine_examples")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "engines"
ENGINES = {
    "greedy-py": ([sys.executable, "greedy.py"], EXAMPLES / "python"),
    "greedy-js": (["node", "greedy.js"], EXAMPLES / "js"),
}
GAMES = 1_000
SEED = 20240535


def need(engine: str) -> None:
    """Skip a JavaScript test when node is missing (fail under CI, where it must be there)."""
    if engine == "greedy-js" and shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is not installed, and CI=true: the JavaScript example engine must be tested")
        pytest.skip("node is not installed")


def play(seats: str, rules: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[pd.DataFrame, dict]:
    """Play GAMES games of ``seats`` (one worker, in this process): (rows by game and seat, manifest)."""
    code = main(
        [
            "run",
            "--rules",
            rules,
            "--seats",
            seats,
            "--games",
            str(GAMES),
            "--seed",
            str(SEED),
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    rows = pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(str(out / "chunks" / "*.parquet"))))
    manifest = json.loads((out / "manifest.json").read_text())
    return rows.sort_values(["game", "seat"]).reset_index(drop=True), manifest


_BUILTIN: dict[str, pd.DataFrame] = {}


@pytest.fixture
def builtin(tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]):
    """The rows of greedy,greedy (both in process) for a rule set, played once per test process."""

    def rows(rules: str) -> pd.DataFrame:
        if rules not in _BUILTIN:
            _BUILTIN[rules], _ = play("greedy,greedy", rules, tmp_path_factory.mktemp(f"greedy-{rules}"), capsys)
        return _BUILTIN[rules]

    return rows


@pytest.mark.parametrize("rules", ["scandinavian", "yahtzee"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_example_engine_plays_exactly_like_builtin_greedy(engine, rules, builtin, tmp_path, capsys):
    need(engine)
    got, manifest = play(f"engine:file={engine},greedy", rules, tmp_path / "run", capsys)
    want = builtin(rules)
    columns = ["game", "seat", "total", "upper", "bonus"] + list(load_rules(rules).box_names)
    mine, ref = got[got.seat == 0][columns], want[want.seat == 0][columns]
    assert len(mine) == GAMES and len(ref) == GAMES
    differ = (mine.reset_index(drop=True) != ref.reset_index(drop=True)).any(axis=1)
    first = mine[differ.to_numpy()].head(3).to_dict("records")
    assert not differ.any(), (
        f"{engine} plays {int(differ.sum())} of {GAMES} {rules} games unlike built-in greedy; "
        f"first: {first} (built-in: {ref[differ.to_numpy()].head(3).to_dict('records')})"
    )
    # the built-in opponent saw the same games too
    assert got[got.seat == 1]["total"].tolist() == want[want.seat == 1]["total"].tolist()
    faults = manifest["faults"][engine]
    assert faults["games"] == GAMES and faults["engine_decisions"] > 0
    assert {k: v for k, v in faults.items() if k.startswith("faults_") or k == "corrupted"} == {
        "faults_time": 0,
        "faults_illegal": 0,
        "faults_crash": 0,
        "faults_stall": 0,
        "corrupted": 0,
    }
    described = manifest["engines"][engine]
    assert Path(described["file"]).name == f"{engine}.toml" and rules in described["handshake"]["rules"]


@pytest.mark.parametrize("engine", list(ENGINES))
def test_example_engine_answers_bad_input_with_errors_and_keeps_running(engine):
    """Malformed or unknown messages get an ``error`` (with the id when there is one), never a crash;
    ``ping`` still answers after them, and ``quit`` ends the process."""
    need(engine)
    argv, cwd = ENGINES[engine]
    lines = [
        {"type": "hello", "protocol": "yatzy-engine/1", "harness": "test"},
        "not json at all",
        [1, 2, 3],
        {"type": "decide", "id": 3, "kind": "keep", "game": [0], "dice": ["12345"]},  # before newgame
        {"type": "warp", "id": 4},
        {"type": "newgame", "id": 5, "rules": {"dice": "many"}},
        {"type": "ping", "id": 6},
        {"type": "quit"},
    ]
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    done = subprocess.run(argv, cwd=cwd, input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(x) for x in done.stdout.splitlines()]
    assert [r["type"] for r in replies] == ["hello", "error", "error", "error", "error", "error", "pong"]
    hello = replies[0]
    assert hello["protocol"] == "yatzy-engine/1" and hello["name"] == engine
    assert {"scandinavian", "yahtzee"} <= set(hello["rules"])
    assert [r.get("id") for r in replies[1:]] == [None, None, 3, 4, 5, 6]

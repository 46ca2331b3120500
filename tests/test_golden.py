"""Golden outputs: the JSON of run, report, analyse, fit and evaluate on fixed seeds, as recorded.

Recorded before the house is rebuilt by layers (issue 38) so that the move is proved to change
no result: the run's rows (their digest) and every figure of the commands' ``--json`` output
must stay what ``tests/golden/`` holds. Fields that are not results (paths, times, cache hits,
versions) are left out. After a change that is meant to move a figure, regenerate with
``GOLDEN_REGENERATE=1 python -m pytest -n 0 tests/test_golden.py`` and say why in the commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"

#: Keys that say where or when, not what: left out of the comparison wherever they appear.
VOLATILE = {"path", "source", "seconds", "time", "created", "updated", "cached", "evaluated", "from_cache",
            "versions", "git", "history", "out", "run_dir", "file", "elapsed", "games_per_second", "wall"}

RUN = ["run", "--rules", "forced", "--seats", "greedy,solver:temperature=1", "--games", "400", "--seed", "7",
       "--record", "--analyse", "--quiet", "--out", "results/g"]
COMMANDS = {
    "report": ["report", "results/g", "--json", "--no-plots"],
    "analyse": ["analyse", "results/g", "--json"],
    "fit": ["fit", "results/g", "--json", "--quiet"],
    "evaluate": ["evaluate", "forced", "--entrants", "greedy,bonus,solver:temperature=1", "--json"],
}


def _clean(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("golden")
    (work / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "YATZY_HARNESS_CACHE": str(work / ".cache")}

    def cli(argv: list[str]) -> str:
        done = subprocess.run([sys.executable, "-m", "harness.cli", *argv], cwd=work, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    cli(RUN)
    return work, {name: cli(argv) for name, argv in COMMANDS.items()}


def _check(name: str, got: object) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if os.environ.get("GOLDEN_REGENERATE"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.is_file(), f"no golden output {path}: GOLDEN_REGENERATE=1 records it"
    assert text == path.read_text(), f"{name}: the output differs from {path} (a changed result?)"


def test_the_runs_rows_are_the_recorded_ones(played):
    from harness.play.runner import load_manifest, rows_digest

    work, _ = played
    m = load_manifest(work / "results" / "g")
    _check("run", {"rows_digest": rows_digest(work / "results" / "g"), "totals": m["totals"],
                   "chunks": [c.get("sha256") for c in m["chunks"]]})


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_commands_json_is_the_recorded_one(played, name):
    _, outputs = played
    _check(name, _clean(json.loads(outputs[name])))

"""Golden outputs: the JSON of run, report, analyse, fit and evaluate on fixed seeds, as recorded,
compared by the reproducibility contract (docs/scale.md, "The same result on another machine").

Recorded before the house is rebuilt by layers (issue 38) so that the move is proved to change
no result: the run's rows (their digest) and every figure of the commands' ``--json`` output
must stay what ``tests/golden/`` holds. Fields that are not results (paths, times, cache hits,
versions) are left out. After a change that is meant to move a figure, regenerate with
``GOLDEN_REGENERATE=1 python -m pytest -n 0 tests/test_golden.py`` and say why in the commit.

The contract (issue 53). On one machine two runs are byte-identical whatever the workers, chunks
and backend (tests/test_runner.py, tests/test_cluster.py compare two runs' bytes). Across machines
every game is the same: the dice, the integer scores and the deterministic bots' decisions, so
the rows' digest, the chunks' hashes and every integer and string here are compared exactly.
Every floating-point figure agrees within a relative tolerance (:func:`tolerance_of`):
:data:`tests.tolerance.EXACT_REL` (1e-12) for exact figures, and for a value found by a search the
search's own tolerance (:data:`SEARCHED`), and the figures computed from that value with it. A
figure below 1e-15 counts as zero. The numbers inside a string (a level's
``solver:temperature=...``) are compared like the figures of its path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tolerance import EXACT_REL, json_differences

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"

#: Keys that say where or when, not what: left out of the comparison wherever they appear.
VOLATILE = {
    "path",
    "source",
    "seconds",
    "time",
    "created",
    "updated",
    "cached",
    "evaluated",
    "from_cache",
    "versions",
    "git",
    "history",
    "out",
    "run_dir",
    "file",
    "elapsed",
    "games_per_second",
    "wall",
}

#: Figures found by a search, by the start of their path: (relative tolerance, why). The searches'
#: steps are the same on every machine as no comparison in them turns on a last bit, so
#: in practice these agree to about 1e-12 too; the contract promises only the search's tolerance.
SEARCHED: dict[str, tuple[float, str]] = {
    "fit/": (
        1e-5,
        "maximum likelihood: the temperature to 1e-5 in log T (likelihood.py's minimize_scalar), "
        "a profile interval's ends to 1e-5 (temperature) or 1e-6 (blunder rate); the figures at the fit "
        "follow it",
    ),
    "report/depth/": (
        1e-7,
        "each level's dial value is a root of its score rate to 1e-10 (rate_tolerance); on the "
        "chain's slopes (~0.1 of rate per unit of log temperature) that is ~1e-9 of the value, "
        "and a level's search starts from the one below: 100x that",
    ),
}


def tolerance_of(path: str) -> float:
    """The relative tolerance of the figure at a JSON path (``"report/depth/chains[0]/levels[3]/value"``)."""
    return next((rel for prefix, (rel, _) in SEARCHED.items() if path.startswith(prefix)), EXACT_REL)


RUN = [
    "run",
    "--rules",
    "forced",
    "--seats",
    "greedy,solver:temperature=1",
    "--games",
    "400",
    "--seed",
    "7",
    "--record",
    "--analyse",
    "--quiet",
    "--out",
    "results/g",
]
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
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", *argv], cwd=work, env=env, capture_output=True, text=True, timeout=600
        )
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
    problems = differences(name, json.loads(path.read_text()), json.loads(text))
    assert not problems, (
        f"{name}: the output differs from {path} beyond the contract (a changed result?):\n  "
        + "\n  ".join(problems[:40])
        + (f"\n  ... and {len(problems) - 40} more" if len(problems) > 40 else "")
    )


def differences(name: str, recorded: object, got: object) -> list[str]:
    """Where ``got`` leaves the contract around the ``recorded`` output of ``name``, path by path."""
    return json_differences(recorded, got, tolerance_of, name)


def test_the_runs_rows_are_the_recorded_ones(played):
    from harness.play.runner import load_manifest, rows_digest

    work, _ = played
    m = load_manifest(work / "results" / "g")
    _check(
        "run",
        {
            "rows_digest": rows_digest(work / "results" / "g"),
            "totals": m["totals"],
            "chunks": [c.get("sha256") for c in m["chunks"]],
        },
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_commands_json_is_the_recorded_one(played, name):
    _, outputs = played
    _check(name, _clean(json.loads(outputs[name])))


def _leaves(obj: object, path: str) -> list[tuple[str, object, object, object]]:
    """(path, parent, key, value) of every leaf, in order."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    out = []
    for k, v in items:
        p = f"{path}/{k}" if isinstance(obj, dict) else f"{path}[{k}]"
        out += _leaves(v, p) if isinstance(v, (dict, list)) else [(p, obj, k, v)]
    return out


def _perturbed(name: str, pick, change) -> tuple[str, list[str]]:
    """The recorded output of ``name`` with its first leaf ``pick`` accepts changed by ``change``:
    (that leaf's path, what the comparison says)."""
    recorded = json.loads((GOLDEN / f"{name}.json").read_text())
    got = json.loads((GOLDEN / f"{name}.json").read_text())
    path, parent, key, value = next(x for x in _leaves(got, name) if pick(x[0], x[3]))
    parent[key] = change(value)
    assert parent[key] != value
    return path, differences(name, recorded, got)


def _is_float(path: str, v: object) -> bool:
    return type(v) is float and abs(v) > 1e-3


def test_a_recorded_float_moved_by_1e_15_still_passes_and_by_1e_9_fails():
    for name in ("evaluate", "analyse", "report"):
        assert differences(name, *[json.loads((GOLDEN / f"{name}.json").read_text())] * 2) == []
        path, found = _perturbed(name, _is_float, lambda x: x * (1 + 1e-15))
        assert found == [], f"{path} moved by 1e-15 relative: {found}"
        path, found = _perturbed(name, _is_float, lambda x: x * (1 + 1e-9))
        assert len(found) == 1 and found[0].startswith(path + ":") and "tolerance 1e-12" in found[0], found


def test_a_changed_recorded_integer_or_string_fails():
    for name in ("evaluate", "run", "report"):
        path, found = _perturbed(name, lambda p, v: type(v) is int and not isinstance(v, bool), lambda x: x + 1)
        assert len(found) == 1 and found[0].startswith(path + ":"), found
    path, found = _perturbed(
        "run", lambda p, v: p.endswith("rows_digest"), lambda s: s[:-1] + ("0" if s[-1] != "0" else "1")
    )
    assert len(found) == 1 and found[0].startswith(path + ":"), found
    path, found = _perturbed(
        "report",
        lambda p, v: isinstance(v, str) and "temperature=" in v,
        lambda s: s.replace("temperature=", "temperature=1", 1),
    )
    assert len(found) == 1 and "report/depth/" in found[0], found


def test_a_searched_value_is_held_to_its_search_tolerance():
    """The calibrated levels' values inside their labels and the fit's estimates: within the
    search's tolerance they pass, beyond it they fail."""
    label = lambda p, v: isinstance(v, str) and v.startswith("solver:temperature=")  # noqa: E731
    scale = lambda f: lambda s: "solver:temperature=" + repr(float(s.split("=")[1]) * f)  # noqa: E731
    assert _perturbed("report", label, scale(1 + 1e-9))[1] == []
    assert len(_perturbed("report", label, scale(1 + 1e-5))[1]) == 1
    assert _perturbed("fit", _is_float, lambda x: x * (1 + 1e-7))[1] == []
    assert len(_perturbed("fit", _is_float, lambda x: x * (1 + 1e-3))[1]) == 1
    assert tolerance_of("evaluate/bots[0]/mean") == EXACT_REL

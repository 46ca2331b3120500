"""The test command's own set-up (tests/conftest.py): one file's tests run in this process, the suite on every core."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest

ROOT = Path(__file__).resolve().parent.parent
ONE = "tests/test_rng.py::test_kernel_and_numpy_paths_draw_the_same_dice_and_uniforms"
OTHER = "tests/test_outcome.py::test_pair_points"


@pytest.mark.parametrize(
    "args,workers",
    [
        (["tests/test_rng.py"], 0),
        ([ONE], 0),
        ([ONE, "tests/test_rng.py"], 0),
        (["tests"], None),  # the suite (`python -m pytest -q`: the testpaths): xdist's answer, every core
        ([], None),
        (["tests/test_rng.py", "tests/test_outcome.py"], None),
        ([ONE, OTHER], None),
        (["tests/strategies"], None),
        (["tests/no_such_file.py"], None),
    ],
)
def test_one_file_runs_in_process_and_the_rest_on_every_core(args, workers):
    config = SimpleNamespace(args=args, invocation_params=SimpleNamespace(dir=ROOT))
    assert conftest.pytest_xdist_auto_num_workers(config) == workers


def _pytest(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not this session's worker
    env["PYTHONPATH"] = str(ROOT)  # this tree's code, installed or not
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout


def test_pytest_on_one_test_starts_no_workers_and_on_two_files_does():
    """As the README's `python -m pytest` takes them (pyproject's `-n auto`): a single test runs in
    this process (issue 37: it brought up a worker per core first); tests of two files run on
    xdist's workers."""
    out = _pytest(ONE)
    assert "1 passed" in out and "workers" not in out and "collected 1 item" in out
    out = _pytest(ONE, OTHER)
    assert "2 passed" in out and "created: " in out and re.search(r"^\d+ workers? \[2 items\]$", out, re.M), out

"""Shared test set-up: every test runs in a working directory of its own; one test file runs in
this process, the suite on every core."""

from __future__ import annotations

from pathlib import Path

import pytest


def _one_file(args: list[str], where: Path) -> bool:
    """Whether the command line's paths (``pytest FILE``, ``FILE::test``...) name tests of one file,
    and nothing else: no directory, no second file, and at least one path."""
    files = set()
    for arg in args:
        path = where / arg.split("::", 1)[0]
        if not path.is_file():
            return False  # a directory (the suite: testpaths), or what pytest itself will refuse
        files.add(path.resolve())
    return len(files) == 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml's addopts) for one file or tests of one file: no workers, the
    tests run in this process. Bringing up a worker per core (each importing the package and its
    kernels again) costs seconds, more than one file's tests gain from them, and a test of one
    file is what one runs while working on it (issue 37). The suite (``python -m pytest -q``: the
    testpaths), a directory or several files: None, xdist's own answer, every core."""
    return 0 if _one_file(list(config.args), config.invocation_params.dir) else None


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run each test in a fresh temporary directory, so that nothing a user keeps where the tests
    are started (a ``my_house.toml`` from the README, a ``results/`` of their own) changes a
    result, and no test writes into the clone (issue: README's own steps broke the test command)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The README's commands (one xdist group, the longest piece of the suite, run in order on one
    worker) first, so that the other worker runs everything else meanwhile instead of waiting."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)  # stable: order kept


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    """Say which examples of the README and the manual were only parsed, and why (issue 37)."""
    import importlib
    import sys

    ran = any(
        getattr(r, "nodeid", "").startswith("tests/test_readme.py")
        for reports in terminalreporter.stats.values()
        for r in reports
    )
    mod = sys.modules.get("tests.test_readme")
    if mod is None and ran:  # under xdist the tests ran in workers: this process never imported it
        mod = importlib.import_module("tests.test_readme")
    if mod is None or not getattr(mod, "PARSE_ONLY", None):
        return
    terminalreporter.section("examples parsed, not run (tests/test_readme.py PARSE_ONLY)")
    for key, reason in mod.PARSE_ONLY.items():
        terminalreporter.write_line(f"{key}\n    {reason}")

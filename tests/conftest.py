"""Shared test set-up: every test runs in a working directory of its own."""

from __future__ import annotations

import pytest


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

"""The review page in a real browser: Debian's Chromium, headless, driven by selenium (tests/browser.py).

One page (four seats), one browser session: every turn stepped through with the keyboard, the sheet, the
charts and the decision list checked, no error on the console, and at phone width no page wider
than the screen. Without the browser the test skips with the reason, except under ``CI``, where
it fails (.ci/run installs chromium and chromium-driver).
"""

from __future__ import annotations

import os

import pytest

from harness.reports.review import Reviewer, page_name, write_review
from harness.game.rules import load_rules
from tests import browser as B
from tests.test_review import SEATS, game
from tests.test_solver import cache_dir, tiny_dir  # noqa: F401


def test_the_review_page_in_a_browser(tiny_dir, cache_dir, tmp_path):
    why = B.missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {why}")
        pytest.skip(why)
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    rev = Reviewer(rules, cache_dir).review(game(tiny_dir / "tiny_bonus.toml", SEATS, seed=2))  # four seats
    assert rev.decisions() and rev.moments  # something to list
    page = write_review(rev, tmp_path / page_name(rev.game))
    with B.browser(*B.DESKTOP) as drv:
        seen = B.walk(drv, page)
        B.resize(drv, *B.PHONE)
        drv.refresh()
        wide = drv.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        errors = seen["errors"] + B.console_errors(drv)
    assert errors == []
    assert seen["turns"] == len(rev.turns) == 4 * rules.n_boxes
    # the sheet: a row per box, the upper subtotal and bonus, the total, the expected final, the win chance
    assert seen["sheet_rows"] == 1 + rules.n_boxes + 2 + 1 + 2
    assert seen["sheet_cells"] >= 4 * rules.n_boxes  # every box of every seat filled on the last turn
    assert seen["charts"] == ["expected-chart", "win-chart"] and seen["lines"] == 2 * 4
    assert seen["decision_rows"] == len(rev.decisions()) and seen["moment_rows"] == len(rev.moments)
    assert wide[0] <= wide[1], f"at phone width the page is {wide[0]} px wide in a {wide[1]} px screen"

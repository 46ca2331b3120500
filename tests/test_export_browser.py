"""The demo page of an exported level (examples/browser/) in headless Chromium (tests/browser.py): a
scripted game against the level, every one of the level's decisions checked against the harness's."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from harness.decisions.positions import Advisor
from harness.exact.compact import load_export
from harness.game.rules import load_rules
from harness.players.export import ExportOptions, export_level, resolve_level
from tests import browser as B

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "examples" / "browser"


def _skip_or_fail() -> None:
    why = B.missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """``python -m http.server`` on ``root`` (a free port, quiet), in a thread: ES modules and fetch
    need http://, not file://."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def site(tmp: Path, rules: str, spec: str = "solver") -> Path:
    """The demo page with a level exported into its level/ folder."""
    root = tmp / "site"
    shutil.copytree(PAGE, root)
    export_level(resolve_level(spec, rules), root / "level", ExportOptions(figures=False))
    return root


def wait(drv, script: str, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = drv.execute_script(script)
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(
        f"timed out waiting for {script}: {drv.execute_script('return window.demo && window.demo.error')}"
    )


def _harness_choice(adv: Advisor, pos: dict) -> dict:
    rules = adv.rules
    scores = {rules.box_names[b]: s for b, s in enumerate(pos["sheet"]) if s >= 0}
    st = adv.state(scores)
    advice = adv.advise(
        adv.position(
            st, [int(c) for c in pos["dice"]], pos["rolls_left"], pos["first"] if pos["rolls_left"] == 0 else None
        )
    )
    best = advice.options[0]
    return {"box": best.box} if best.keep is None else {"keep": "".join(map(str, sorted(best.keep)))}


# scandinavian only: yahtzee's joker and generala's servida are checked bit for bit in tests/test_export.py (CI time)
@pytest.mark.parametrize("rules", ["scandinavian"])
def test_a_scripted_game_against_the_level_in_chromium(tmp_path: Path, rules: str) -> None:
    _skip_or_fail()
    from selenium.webdriver.common.by import By

    root = site(tmp_path, rules)
    r = load_rules(rules)
    adv = Advisor(r, solution=load_export(root / "level", r).solution)
    with serve(root) as url, B.browser() as drv:
        drv.get(f"{url}/index.html?seed=51&game=3")
        wait(drv, "return window.demo && window.demo.ready")
        for turn in range(r.n_boxes):
            # the person: roll, hold the first two dice, reroll, then write the first box offered
            drv.find_element(By.ID, "roll").click()
            assert len(drv.find_elements(By.CSS_SELECTOR, "#dice .die")) == r.n_dice
            for i in (0, 1):  # each click draws the dice again: found anew
                drv.find_elements(By.CSS_SELECTOR, "#dice .die")[i].click()
            assert drv.execute_script("return document.querySelectorAll('#dice .die.held').length") == 2
            drv.find_element(By.ID, "roll").click()
            drv.find_element(By.CSS_SELECTOR, "#sheet td.option").click()
            assert len(drv.execute_script("return window.demo.log")) >= turn + 1
        wait(drv, "return window.demo.over")
        log = drv.execute_script("return window.demo.log")
        totals = drv.execute_script("return window.demo.totals")
        errors = B.console_errors(drv)
    assert not errors, errors
    boxes = [e for e in log if "box" in e["decision"]]
    assert len(boxes) == r.n_boxes and len(log) > r.n_boxes
    for e in log:
        assert e["decision"] == _harness_choice(adv, e["position"]), e
    assert totals[1] > 0

"""Test helper: a review page in a real browser (Debian's Chromium driven by selenium), headless.

The browser and its driver are the system's (``apt-get install chromium chromium-driver``:
/usr/bin/chromium, /usr/bin/chromedriver); selenium is given both paths, so nothing is looked up
or downloaded at run time. :func:`missing` says why the browser cannot run here (the test skips
with it, or fails under ``CI``); :func:`browser` opens one session; :func:`walk` steps through a
page's turns with the keyboard and checks what every turn shows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

BROWSER = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
#: Window sizes (CSS pixels) of the desktop and phone views.
DESKTOP = (1280, 900)
PHONE = (390, 844)


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    for path, package in ((BROWSER, "chromium"), (DRIVER, "chromium-driver")):
        if not (Path(path).exists() or shutil.which(Path(path).name)):
            return f"{path} is not installed (apt-get install -y {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


@contextlib.contextmanager
def browser(width: int = DESKTOP[0], height: int = DESKTOP[1]) -> Iterator[Any]:
    """A headless Chromium session with the console log kept, at ``width`` x ``height``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = BROWSER if Path(BROWSER).exists() else str(shutil.which("chromium"))
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = DRIVER if Path(DRIVER).exists() else str(shutil.which("chromedriver"))
    drv = webdriver.Chrome(service=Service(driver_path, log_output=os.devnull), options=opts)
    try:
        yield drv
    finally:
        drv.quit()


def resize(drv: Any, width: int, height: int) -> None:
    """The viewport to ``width`` x ``height`` CSS pixels (phone emulation for a narrow one)."""
    drv.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def console_errors(drv: Any) -> list[str]:
    """The console's messages of level SEVERE (errors) since the last call."""
    return [e["message"] for e in drv.get_log("browser") if e.get("level") == "SEVERE"]


def walk(drv: Any, page: str | Path) -> dict[str, Any]:
    """Open ``page`` and press → through every turn, checking on each that the turn card, the
    scoresheet and the charts are drawn for that turn; then ← and Home and End. Returns what it
    saw: ``turns``, the counts of ``sheet_rows``, ``decision_rows``, ``dice`` on the last turn, and
    ``errors`` (the console's)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    drv.get(Path(page).resolve().as_uri())
    data = drv.execute_script("return JSON.parse(document.getElementById('review-data').textContent)")
    n = len(data["turns"])
    body = drv.find_element(By.TAG_NAME, "body")

    def at() -> int:
        return int(body.get_attribute("data-turn"))

    shown = (
        "var c = document.getElementById('turn-card'), now = document.querySelector('#sheet td.now');"
        "return [Number(document.body.getAttribute('data-turn')), c.textContent,"
        " c.querySelectorAll('.dice svg').length, now ? now.textContent : null];"
    )
    assert at() == 0
    for k in range(1, n):
        body.send_keys(Keys.ARROW_RIGHT)
        turn, card, dice, now = drv.execute_script(shown)  # one round trip a turn
        assert turn == k, f"→ went to turn {turn}, not {k}"
        t = data["turns"][k]
        assert f"turn {t['turn']}" in card and data["seats"][t["seat"]]["label"] in card, card
        assert dice == sum(map(len, t["rolls"])) and now == str(t["score"]), (k, dice, now)
    body.send_keys(Keys.ARROW_RIGHT)
    assert at() == n - 1  # no turn past the last
    body.send_keys(Keys.ARROW_LEFT)
    assert at() == max(0, n - 2)
    body.send_keys(Keys.HOME)
    assert at() == 0
    body.send_keys(Keys.END)
    assert at() == n - 1
    filled = drv.find_elements(By.CSS_SELECTOR, "#sheet td.num:not(.open)")
    return {
        "turns": n,
        "sheet_rows": len(drv.find_elements(By.CSS_SELECTOR, "#sheet tr")),
        "sheet_cells": len(filled),
        "charts": [
            c.get_attribute("id")
            for c in drv.find_elements(By.CSS_SELECTOR, ".chart")
            if c.find_elements(By.CSS_SELECTOR, "svg polyline")
        ],
        "lines": len(drv.find_elements(By.CSS_SELECTOR, ".chart svg polyline")),
        "decision_rows": len(drv.find_elements(By.CSS_SELECTOR, "#decisions tr[data-turn]")),
        "moment_rows": len(drv.find_elements(By.CSS_SELECTOR, "#moments tr[data-turn]")),
        "errors": console_errors(drv),
    }


def screenshot(drv: Any, page: str | Path, out: str | Path, width: int, height: int, turn: int = 1) -> Path:
    """A PNG of ``page`` opened at ``turn`` (from 1) in a ``width`` x ``height`` viewport."""
    resize(drv, width, height)
    drv.get("about:blank")
    drv.get(Path(page).resolve().as_uri() + f"#turn={turn}")
    drv.execute_script("window.dispatchEvent(new Event('resize'))")
    import time

    time.sleep(0.3)  # the charts are drawn again 120 ms after a resize
    Path(out).write_bytes(drv.get_screenshot_as_png())
    return Path(out)

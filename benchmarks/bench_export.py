"""A level exported to JavaScript (issue 51): sizes, exact loss, and the module's speed in headless Chromium.

For each rule set, exports the solver level (``yatzy-harness export solver --rules NAME``, the
default table: values to 1/256 point) with its exact figures, then opens the demo page
(examples/browser/, served by ``http.server``) in Debian's headless Chromium with ``?bench=N``: the
page fetches the manifest and the table, loads and decodes the table (sha256, gunzip through
DecompressionStream, the delta decoding) and times N decisions on positions drawn from the
harness's dice on random sheets. Reports the gzip bytes a page transfers (module + table +
manifest), the loss against full precision (exact, ``evaluate``), load+decode in ms and the
decision's median and 90th percentile in ms. With ``--loop GAMES`` also the closed loop at length:
the exported module under Node as an engine against the in-process bot playing the same table
(solver and a randomised level), compared row for row, with the wall time of each side.

    python benchmarks/bench_export.py                               # 5 rule sets, 2,000 decisions each
    python benchmarks/bench_export.py --rules scandinavian --loop 20000
    python benchmarks/bench_export.py --screenshot benchmarks/example_export/demo.png   # docs/ship-a-level.md
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.players.export import ExportOptions, export_level, resolve_level  # noqa: E402
from tests import browser as B  # noqa: E402
from tests.test_export_browser import serve, wait  # noqa: E402

RULES = ("scandinavian", "standard", "yahtzee", "forced", "generala")


def bench_page(root: Path, n: int, repeats: int) -> dict:
    """The page's timings, best load of ``repeats`` fresh page loads (the decisions of the last)."""
    out: dict = {}
    with serve(root) as url, B.browser() as drv:
        loads = []
        for _ in range(repeats):
            drv.get("about:blank")
            drv.get(f"{url}/index.html?bench={n}&seed=51")
            wait(drv, "return window.demo && window.demo.ready", 120)
            t = drv.execute_script("return window.demo.timings")
            loads.append(t["load_decode_ms"])
            out = t
        out["load_decode_ms_all"] = loads
        out["load_decode_ms"] = min(loads)
    return out


def loop(rules: str, spec: str, games: int, tmp: Path) -> dict:
    import pandas as pd

    from harness.play.runner import RunConfig, run
    from tests.test_export_loop import rows

    d = tmp / f"loop-{rules}"
    export_level(resolve_level(spec, rules), d, ExportOptions(figures=False))
    table = f"{spec}{',' if ':' in spec else ':'}table={d}"
    engine = f'engine:cmd="node {d / "engine.mjs"}",name=js,move_ms=50,margin_ms=20000'
    cfg = dict(rules=rules, games=games, seed=51, chunk_size=max(500, games // 8), workers=2)
    t0 = time.perf_counter()
    js = run(RunConfig(seats=(engine, "greedy"), **cfg), tmp / f"js-{rules}-{len(spec)}")
    t1 = time.perf_counter()
    local = run(RunConfig(seats=(table, "greedy"), **cfg), tmp / f"local-{rules}-{len(spec)}")
    t2 = time.perf_counter()
    same = rows(js).equals(rows(local))
    mean = float(pd.read_parquet(js / "chunks").query("seat == 0")["total"].mean())
    return {
        "rules": rules,
        "spec": spec,
        "games": games,
        "same": same,
        "node_s": t1 - t0,
        "in_process_s": t2 - t1,
        "mean": mean,
    }


def screenshot(out: Path, tmp: Path, rules: str = "scandinavian", turns: int = 6) -> None:
    """The demo page after ``turns`` scripted turns (hold the sixes, reroll twice, write the best
    offered box), at desktop size: the picture of docs/ship-a-level.md."""
    from selenium.webdriver.common.by import By

    root = tmp / "shot"
    shutil.copytree(ROOT / "examples" / "browser", root)
    export_level(resolve_level("solver", rules), root / "level", ExportOptions())
    with serve(root) as url, B.browser(1100, 980) as drv:
        drv.get(f"{url}/index.html?seed=51&game=3")
        wait(drv, "return window.demo && window.demo.ready")
        for turn in range(turns):
            drv.find_element(By.ID, "roll").click()
            last = turn == turns - 1
            for _ in range(2):
                held = True
                while held:  # each click draws the dice again: the next one found anew
                    held = False
                    for die in drv.find_elements(By.CSS_SELECTOR, "#dice .die"):
                        if die.text in ("5", "6") and die.get_attribute("aria-pressed") == "false":
                            die.click()
                            held = True
                            break
                if last:
                    break  # the picture: the sixes and fives held, before the reroll
                drv.find_element(By.ID, "roll").click()
            if not last:
                cells = drv.find_elements(By.CSS_SELECTOR, "#sheet td.option")
                max(cells, key=lambda c: int(c.text)).click()
        drv.execute_script("window.scrollTo(0, 0)")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(drv.get_screenshot_as_png())
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default=",".join(RULES), help="comma-separated rule sets")
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3, help="page loads a rule set (the best load is reported)")
    ap.add_argument("--loop", type=int, default=0, metavar="GAMES", help="also the closed loop at this length")
    ap.add_argument("--screenshot", metavar="PNG", help="only the picture of the demo page mid-game")
    args = ap.parse_args()
    if B.missing():
        raise SystemExit(B.missing())
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        if args.screenshot:
            return screenshot(Path(args.screenshot), tmp)
        print(
            "| rule set | states | module + table + manifest (gzip bytes) | table | loss (points a game) | "
            "load+decode (ms) | decision median / p90 (ms) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in args.rules.split(","):
            root = tmp / name
            shutil.copytree(ROOT / "examples" / "browser", root)
            m = export_level(resolve_level("solver", name), root / "level", ExportOptions())
            t = bench_page(root, args.decisions, args.repeats)
            s, f = m["sizes"], m["figures"]
            print(
                f"| {name} | {m['table']['states']:,} | {s['transferred']:,} | {s['table_gzip']:,} | "
                f"{f['loss']:.1e} | {t['load_decode_ms']:.0f} | {t['decision_median_ms']:.3f} / "
                f"{t['decision_p90_ms']:.3f} |",
                flush=True,
            )
            print(json.dumps({"rules": name, "timings": t}), file=sys.stderr)
        if args.loop:
            for name in args.rules.split(","):
                for spec in ("solver", "solver:temperature=2,blunder=0.05"):
                    print(json.dumps(loop(name, spec, args.loop, tmp)), flush=True)


if __name__ == "__main__":
    main()

"""Review pages, generated and checked in a real browser; the README's screenshots.

Run from the repository root (Debian's ``chromium`` and ``chromium-driver`` and the ``test``
extras installed: ``tests/browser.py`` drives them)::

    python benchmarks/review_pages.py screenshots   # benchmarks/example_review/desktop.png, phone.png
    python benchmarks/review_pages.py pages         # the issue's pages, each walked in the browser

``screenshots`` replays game 21 of the README's run (``run --rules generala --seats
greedy,solver:temperature=1 --games 100 --seed 1``: the dice of game i depend only on the seed),
writes its page and takes it at turn 17 (a decisive roll) at desktop width (1280 CSS px) and
phone width (390 CSS px).

``pages`` plays (into a scratch directory) and reviews: a two-seat and a four-seat scandinavian
game of recorded runs, a game of two people from a records file (the seats are names, no bot), and
a maxi game (whose win chances are left out: its "ev" table would be 67.3 GiB); each page is
walked turn by turn with the keyboard in one browser session (``tests/browser.py``). Prints a
Markdown table: page, seats, turns, size, CPU seconds of the review, what the browser saw.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.records.codec import GameRecord, Seat  # noqa: E402
from harness.records.record import read_records, write_records_jsonl  # noqa: E402
from harness.play.replay import record_of_replay, replay  # noqa: E402
from harness.reports.review import Reviewer, write_review  # noqa: E402
from harness.play.runconfig import RunConfig  # noqa: E402
from harness.play.runner import run  # noqa: E402
from tests import browser as B  # noqa: E402

SHOTS = ROOT / "benchmarks" / "example_review"


def screenshots() -> None:
    seats = ["greedy", "solver:temperature=1"]
    trace, res = replay("generala", [], seats, 1, 21)
    rec = record_of_replay(trace, res, "generala", seats, 1, 21)
    with tempfile.TemporaryDirectory() as tmp:
        page = write_review(Reviewer(res.rules).review(rec, None, "results/review"), Path(tmp) / "game-21.html")
        SHOTS.mkdir(parents=True, exist_ok=True)
        with B.browser() as drv:
            for name, (w, h) in (("desktop", (1280, 1330)), ("phone", (390, 1560))):
                out = B.screenshot(drv, page, SHOTS / f"{name}.png", w, h, turn=17)
                print(f"{out.relative_to(ROOT)}: {w} x {h} CSS px, {out.stat().st_size / 1024:.0f} KB")
            errors = B.console_errors(drv)
    if errors:
        raise SystemExit(f"console errors: {errors}")


def _review(rules, rec, lineup, source, out: Path) -> tuple[Path, float, int]:
    t0 = time.process_time()
    rev = Reviewer(rules).review(rec, lineup, source)
    page = write_review(rev, out)
    return page, time.process_time() - t0, len(rev.seats)


def pages() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        made = []
        for name, rules, seats in (
            ("scandinavian, 2 seats", "scandinavian", ("greedy", "solver:temperature=1")),
            (
                "scandinavian, 4 seats",
                "scandinavian",
                ("greedy", "solver:temperature=1", "bonus", "solver:temperature=2"),
            ),
            ("maxi, 2 seats", "maxi", ("greedy", "solver:temperature=1")),
        ):
            d = run(
                RunConfig(rules=rules, seats=seats, games=4, seed=1, workers=1, record=True),
                tmp / rules / str(len(seats)),
            )
            res = read_records(d)
            rec = res.games[1]
            made.append((name, *_review(res.rules[1], rec, 0, str(d), tmp / f"{name}.html")))
        # a game of two people: the first game's turns, its seats named, no seed, no bot
        bot = read_records(tmp / "scandinavian" / "2").games[0]
        people = GameRecord(
            "kitchen-7",
            "scandinavian",
            (Seat(name="alice"), Seat(name="bob")),
            bot.turns,
            meta={"site": "kitchen table"},
        )
        src = write_records_jsonl(tmp / "kitchen.jsonl", [people])
        res = read_records(src)
        made.insert(
            2, ("people, records file", *_review(res.rules[0], res.games[0], None, str(src), tmp / "people.html"))
        )
        print(
            "| page | seats | turns | size | review CPU s | browser: turns stepped, charts, decision rows, "
            "console errors |"
        )
        print("|---|---:|---:|---:|---:|---|")
        with B.browser() as drv:
            for name, page, cpu, seats in made:
                seen = B.walk(drv, page)
                assert not seen["errors"], seen["errors"]
                print(
                    f"| {name} | {seats} | {seen['turns']} | {page.stat().st_size / 1024:.0f} KB | {cpu:.2f} | "
                    f"{seen['turns']}, {' + '.join(seen['charts'])}, {seen['decision_rows']}, "
                    f"{len(seen['errors'])} |"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["screenshots", "pages"])
    args = ap.parse_args()
    if B.missing():
        raise SystemExit(B.missing())
    screenshots() if args.what == "screenshots" else pages()


if __name__ == "__main__":
    main()

"""Test helper: check that an HTML page of the harness never breaks a number across lines.

Used by the render and report tests. What counts as a number is decided here, independently of
:func:`harness.util.render.is_numeric`, the way a reader sees a cell: digits with signs, decimals,
thousands commas, %, pts, a multiple's x, an exponent, brackets and separators, and no word but the
"df" and "p" of a test.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser


class Cells(HTMLParser):
    """Every <td>/<th> of a page: (tag, class, text, [text of each unbreakable span inside])."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str, str, list[str]]] = []
        self._cell: list | None = None
        self._span: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("td", "th"):
            self._cell = [tag, a.get("class") or "", "", []]
        elif tag == "span" and self._cell is not None and "num" in (a.get("class") or "").split():
            self._span = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[2] += data
        if self._span is not None:
            self._span.append(data)

    def handle_endtag(self, tag):
        if tag == "span" and self._span is not None and self._cell is not None:
            self._cell[3].append("".join(self._span))
            self._span = None
        elif tag in ("td", "th") and self._cell is not None:
            self.cells.append(tuple(self._cell))  # type: ignore[arg-type]
            self._cell = None


def html_cells(page: str) -> list[tuple[str, str, str, list[str]]]:
    p = Cells()
    p.feed(page)
    return p.cells


def looks_numeric(cell: str) -> bool:
    """A cell made of numbers only (a missing value's dash included)."""
    s = re.sub(r"\d(?:\.\d+)?e[+\-]?\d+", "0", cell)  # exponents
    s = re.sub(r"(?<=\d)x\b", "", s)  # multiples: 6.4x
    s = re.sub(r"\b(?:df|p|pts|inf)\b", "", s)  # a test's df and p, points, infinity
    return bool(re.fullmatch(r"[\d\s.,+\-−–%\[\]()±/<>=~∞:;]*", s)) and bool(re.search(r"[\d–∞]", cell))


#: A number with a unit, or an interval, inside a text cell.
_IN_TEXT = re.compile(r"[+\-]?\d[\d,.]* (?:%|pts\b)|\[[^\]]*\d[^\]]*\]")


def assert_numbers_unbreakable(page: str) -> int:
    """Every table cell of ``page`` made of numbers only is class 'num' (nowrap; a list of values
    'a / b / c', class 'num list', may break between them but holds each in an unbreakable span),
    and inside every other cell each number with a unit and each interval sits in an unbreakable
    span. Returns the number of numeric cells seen."""
    assert re.search(r"td\.num,span\.num\{white-space:nowrap\}", page)
    seen = 0
    for tag, cls, cell, spans in html_cells(page):
        if tag != "td":
            continue
        if looks_numeric(cell):
            seen += 1
            assert "num" in cls.split(), f"numeric cell {cell!r} can break"
            if "list" in cls.split():
                assert spans == cell.split(" / "), f"list cell {cell!r}: a value can break"
            continue
        for m in _IN_TEXT.finditer(cell):
            assert any(m.group(0) in s for s in spans), f"{m.group(0)!r} in {cell!r} can break"
    return seen

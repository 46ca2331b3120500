"""How output looks: tables as text, Markdown and HTML, and every number format of the harness.

Domain modules decide *what* is shown: they build :class:`Table` objects of strings, each cell made
with the formatters below. This module decides *how* it is shown, and knows nothing of runs, bots
or rules (it imports nothing of the harness).

Number formats. Every one shows a missing value (``None``, or NaN) as :data:`MISSING`; those
marked *ci* take ``ci=(lo, hi)`` and append the interval in the value's own format (``sign`` and
scale included; a missing value or end is a dash too: ``– [–, –]``), or nothing when ``ci`` is
None or empty:

* ``num(x, nd)``: fixed decimals, ``sign=True`` always signed; *ci*: ``198.30 [196.63, 199.97]``
* ``sig(x, digits)``: significant digits (Python's ``g``); *ci*: ``0.353 [0.348, inf]``
* ``plain(x, digits)``: significant digits, never an exponent (numbers in specs): ``0.0001234``
* ``count(n)``: an integer with thousands separators: ``2,000``
* ``pct(x, nd)``: a share in percent; *ci* (in percent, no unit): ``8.5 % [7.4, 9.8]``
* ``pts(x, nd)``: a difference of shares in percentage points; *ci*: ``+5.30 pts [+4.53, +6.07]``
* ``pm(x, half, nd)``: a value and its interval's half-width: ``197.68 ± 0.66``
* ``interval(ci, nd)``: an interval alone (``sign``, ``scale``): ``[-0.041, +0.005]``
* ``p_value(p)``: 3 significant digits, an exponent below 1e-4: ``0.0286``, ``6.9e-103``
* ``statistic(s, df, p)``: a test statistic, its df and a 2-digit p-value: ``12.3 (df 2, p 0.05)``
* ``factor(x, std)``: a variance-reduction factor (∞: no variance left): ``8.15``, ``∞``
* ``times(x, nd)``: a multiple: ``6.4x``
* ``ci_level(c)``: a confidence level: ``95 %``

Tables. :func:`table_lines` and :func:`text` give the terminal form (columns left-aligned to the
widest cell, two spaces apart, indented two spaces, the title above, the notes below);
:func:`markdown` the GitHub Markdown form; :func:`html_table` and :func:`html_page` a
self-contained HTML page, where a number, a percentage or an interval never breaks across lines:
every cell made of numbers only (:func:`is_numeric`) is ``class='num'`` (``white-space:nowrap``,
right-aligned; a list of values, ``128 / 144 / 171``, is ``class='num list'`` and may break
between its values, each an unbreakable ``<span class='num'>``), and inside any other cell each
number phrase holding a space ("40 %", "1 1 4 5 5") is a ``<span class='num'>``.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

#: How every formatter shows a missing value (None or NaN).
MISSING = "–"
#: Indent of a text table's lines, and the gap between its columns.
INDENT = GAP = "  "


# ---------------------------------------------------------------------------------------------
# numbers


def _missing(x: Any) -> bool:
    if x is None:
        return True
    try:
        return math.isnan(x)
    except TypeError:
        return False


def _with_ci(s: str, ci: Sequence[Any] | None, one: Any) -> str:
    """``s`` followed by ``[lo, hi]``, each end formatted by ``one``; ``s`` alone when ``ci`` is
    None or empty."""
    if not ci:
        return s
    return f"{s} [{one(ci[0])}, {one(ci[1])}]"


def num(x: Any, nd: int = 2, *, sign: bool = False, ci: Sequence[Any] | None = None) -> str:
    """``x`` with ``nd`` decimals (``sign``: a sign always); infinities as ``+inf`` / ``-inf``."""
    if _missing(x):
        s = MISSING
    elif math.isinf(x):
        s = "+inf" if x > 0 else "-inf"
    else:
        s = f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"
    return _with_ci(s, ci, lambda v: num(v, nd, sign=sign))


def interval(ci: Sequence[Any] | None, nd: int = 2, *, sign: bool = False, scale: float = 1.0) -> str:
    """``[lo, hi]``, each end ``num(scale * end, nd, sign=sign)``; "" when ``ci`` is None or empty."""
    if not ci:
        return ""
    lo, hi = (v if _missing(v) else scale * v for v in ci)
    return f"[{num(lo, nd, sign=sign)}, {num(hi, nd, sign=sign)}]"


def sig(x: Any, digits: int = 3, *, sign: bool = False, ci: Sequence[Any] | None = None) -> str:
    """``x`` to ``digits`` significant digits, Python's ``g`` (``sig(x, 6)`` is ``f"{x:g}"``)."""
    if _missing(x):
        s = MISSING
    else:
        s = f"{x:+.{digits}g}" if sign else f"{x:.{digits}g}"
    return _with_ci(s, ci, lambda v: sig(v, digits, sign=sign))


def plain(x: Any, digits: int = 4) -> str:
    """``digits`` significant digits in plain notation, never an exponent (``0.0001234``, not
    ``1.234e-04``): numbers that go into a strategy spec."""
    if _missing(x):
        return MISSING
    if x == 0:
        return "0"
    s = f"{x:.{digits}g}"
    if "e" in s and math.isfinite(x):
        s = f"{x:.{max(0, digits - 1 - math.floor(math.log10(abs(x))))}f}".rstrip("0").rstrip(".")
    return s


def count(n: Any) -> str:
    """An integer with thousands separators: ``2,000``."""
    return MISSING if _missing(n) else f"{n:,}"


def pct(x: Any, nd: int = 1, *, ci: Sequence[Any] | None = None) -> str:
    """A share (0..1) in percent: ``32.8 %``; the interval in percent without the unit."""
    s = MISSING if _missing(x) else f"{100 * x:.{nd}f} %"
    return _with_ci(s, ci, lambda v: num(None if _missing(v) else 100 * v, nd))


def pts(x: Any, nd: int = 2, *, ci: Sequence[Any] | None = None) -> str:
    """A difference of two shares in percentage points, signed: ``+5.30 pts [+4.53, +6.07]``."""
    s = MISSING if _missing(x) else f"{100 * x:+.{nd}f} pts"
    return _with_ci(s, ci, lambda v: num(None if _missing(v) else 100 * v, nd, sign=True))


def pm(x: Any, half: Any, nd: int = 2) -> str:
    """A value and the half-width of its interval: ``197.68 ± 0.66``."""
    return f"{num(x, nd)} ± {num(half, nd)}"


def p_value(p: Any) -> str:
    """A p-value: 3 significant digits, ``1.5e-15`` below 1e-4, ``<1e-300`` below what a double's
    tail reaches (rather than 0)."""
    if _missing(p):
        return MISSING
    if p < 1e-300:
        return "<1e-300"
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def statistic(stat: Any, df: Any, p: Any) -> str:
    """A test: its statistic (1 decimal), degrees of freedom and p-value to 2 digits (2 decimals
    from 0.01 up, ``<1e-300`` below what a double's tail reaches): ``12.3 (df 2, p 0.05)``."""
    if _missing(p):
        ps = MISSING
    elif p < 1e-300:
        ps = "<1e-300"
    else:
        ps = f"{p:.2g}" if p < 0.01 else f"{p:.2f}"
    return f"{num(stat, 1)} (df {df}, p {ps})"


def factor(x: Any, std: Any = None, digits: int = 3) -> str:
    """A variance-reduction factor to ``digits`` significant digits; ``∞`` when it is infinite,
    or missing with a standard deviation ``std`` of ~0 left (JSON holds null for an infinity)."""
    if _missing(x):
        return "∞" if not _missing(std) and std < 1e-6 else MISSING
    return "∞" if math.isinf(x) else f"{x:.{digits}g}"


def times(x: Any, nd: int = 1) -> str:
    """A multiple: ``6.4x``."""
    return MISSING if _missing(x) else f"{x:.{nd}f}x"


def ci_level(c: float) -> str:
    """A confidence level (0..1) in percent: ``95 %``, ``99.9 %``."""
    return f"{100 * c:.4g} %"


# ---------------------------------------------------------------------------------------------
# tables


@dataclass(frozen=True)
class Table:
    """A titled table of strings: ``header`` and every row hold one cell per column; ``notes``
    are lines shown under it; ``links``, when given, one entry per row of one per cell: the
    address the cell links to in HTML, or None. Lists are accepted and stored as tuples."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    links: tuple[tuple[str | None, ...], ...] = ()

    def __post_init__(self) -> None:
        header = tuple(self.header)
        rows = tuple(tuple(r) for r in self.rows)
        notes = tuple(self.notes)
        links = tuple(tuple(r) for r in self.links)
        for i, r in enumerate(rows):
            if len(r) != len(header):
                raise ValueError(f"table {self.title!r}: row {i} has {len(r)} cells for {len(header)} columns")
        if links and (len(links) != len(rows) or any(len(r) != len(header) for r in links)):
            raise ValueError(f"table {self.title!r}: links must have one entry per cell")
        bad = next((c for r in (header, *rows) for c in r if not isinstance(c, str)), None)
        if bad is not None or not all(isinstance(n, str) for n in notes):
            raise TypeError(f"table {self.title!r}: cells and notes are strings, got {bad!r}")
        object.__setattr__(self, "header", header)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "links", links)


def table_lines(t: Table) -> list[str]:
    """The terminal form of one table: its title (when it has one), the header and rows with
    columns left-aligned to their widest cell, then its notes."""
    widths = [max(len(c) for c in col) for col in zip(t.header, *t.rows)]
    lines = [t.title] if t.title else []
    lines += [INDENT + GAP.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in (t.header, *t.rows)]
    lines += [INDENT + n for n in t.notes]
    return lines


def text(tables: Iterable[Table], header: Sequence[str] = ()) -> str:
    """A terminal document: the ``header`` lines, then each table after an empty line."""
    out = list(header)
    for t in tables:
        out += ["", *table_lines(t)]
    return "\n".join(out)


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(t: Table) -> list[str]:
    """One table as GitHub Markdown: ``## title``, the table, its notes as a list."""
    out = [f"## {t.title}", "", _md_row(t.header), "|" + "---|" * len(t.header)]
    out += [_md_row(r) for r in t.rows]
    if t.notes:
        out += [""] + [f"- {n}" for n in t.notes]
    return out


def markdown(tables: Iterable[Table], title: str, header: Sequence[str] = ()) -> str:
    """A Markdown document: ``# title``, the ``header`` lines as a list, then every table."""
    out = [f"# {title}", ""] + [f"- {x}" for x in header] + [""]
    for t in tables:
        out += markdown_table(t) + [""]
    return "\n".join(out)


# HTML: what counts as a number. A numeric cell is made of numbers (sign, thousands commas,
# decimals, exponent, a trailing x), %, pts, ∞, the missing dash, "df"/"p" of a test, brackets,
# separators and spaces; a number phrase inside other text is a run of those holding a space.
_NUM = r"[+\-−]?(?:\d[\d,]*(?:\.\d+)?(?:e[+\-]?\d+)?|inf)x?"
_CELL = re.compile(rf"(?:{_NUM}|∞|–|%|pts|df|p|[\[\](),/±~<>=;:]|\s)+")
_PHRASE = re.compile(rf"(?:{_NUM}|∞|%|pts|[\[\]±/~<>=]|,(?=\s)|\s)+")
_DIGIT = re.compile(r"[\d∞–]")
#: What separates the values of a list cell (``128 / 144 / 171``, ``66.4 % / 67.3 %``): in HTML
#: the list may break there.
LIST_SEP = " / "

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
.wide{overflow-x:auto;margin:0.5em 0 1.5em}table{border-collapse:collapse;font-size:0.9em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0}
td.num,span.num{white-space:nowrap}td.list{white-space:normal}td.num,th.num{text-align:right}img{max-width:100%;margin:0.5em 0 1.5em;
border:1px solid #eee}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.5em}.note{color:#a40}"""


def is_numeric(cell: str) -> bool:
    """Whether a cell holds numbers only (``198.30 [196.63, 199.97]``, ``32.8 %``, ``2,000``,
    ``–``, ``12.3 (df 2, p 0.05)``), as opposed to text that may hold some (``game 12 seat 1``)."""
    return bool(_CELL.fullmatch(cell)) and bool(_DIGIT.search(cell))


def _html_cell(cell: str) -> str:
    """A text cell's HTML: escaped, each number phrase holding a space in an unbreakable span."""
    out, at = [], 0
    for m in _PHRASE.finditer(cell):
        a, b = m.span()
        while a < b and (cell[a].isspace() or cell[a] == ","):
            a += 1
        while b > a and cell[b - 1].isspace():
            b -= 1
        phrase = cell[a:b]
        if not (re.search(r"\s", phrase) and re.search(r"\d", phrase)):
            continue
        out += [html.escape(cell[at:a]), f"<span class='num'>{html.escape(phrase)}</span>"]
        at = b
    out.append(html.escape(cell[at:]))
    return "".join(out)


def _html_td(cell: str, numeric: bool, link: str | None = None) -> str:
    def a(inner: str) -> str:
        return inner if link is None else f"<a href='{html.escape(link, quote=True)}'>{inner}</a>"

    if not numeric:
        return f"<td>{a(_html_cell(cell))}</td>"
    if LIST_SEP in cell:  # a list of values may break between them, never inside one
        items = LIST_SEP.join(f"<span class='num'>{html.escape(x)}</span>" for x in cell.split(LIST_SEP))
        return f"<td class='num list'>{a(items)}</td>"
    return f"<td class='num'>{a(html.escape(cell))}</td>"


def html_table(t: Table) -> str:
    """One table as HTML: ``<h2>`` title, the table in a horizontally scrolling block, its notes;
    numeric cells (:func:`is_numeric`) are ``class='num'``, and so is the header of a column whose
    every cell is; a cell with a link (:attr:`Table.links`) holds its text in ``<a href>``."""
    esc = html.escape
    numeric = [[is_numeric(c) for c in r] for r in t.rows]
    cols = [bool(t.rows) and all(r[j] for r in numeric) for j in range(len(t.header))]
    num_th = " class='num'"
    parts = [
        f"<h2>{esc(t.title)}</h2><div class='wide'><table><tr>"
        + "".join(f"<th{num_th if n else ''}>{esc(h)}</th>" for h, n in zip(t.header, cols))
        + "</tr>"
    ]
    for i, (r, flags) in enumerate(zip(t.rows, numeric)):
        links = t.links[i] if t.links else (None,) * len(r)
        parts.append("<tr>" + "".join(_html_td(c, n, h) for c, n, h in zip(r, flags, links)) + "</tr>")
    parts.append("</table></div>")
    parts += [f"<p class='note'>{esc(n)}</p>" for n in t.notes]
    return "\n".join(parts)


def html_page(
    title: str,
    heading: str,
    header: Sequence[str] = (),
    tables: Iterable[Table] = (),
    images: Sequence[tuple[str, bytes]] = (),
    notes: Sequence[str] = (),
    images_title: str = "Plots",
) -> str:
    """A self-contained HTML page (CSS inline, every PNG embedded as base64): ``heading``, the
    ``header`` lines and the ``notes`` (highlighted) as a list, every table, then the ``images``
    ((alt text, PNG bytes)) under ``images_title``."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{esc(heading)}</h1><ul>",
    ]
    parts += [f"<li>{esc(line)}</li>" for line in header]
    parts += [f"<li class='note'>{esc(line)}</li>" for line in notes]
    parts.append("</ul>")
    parts += [html_table(t) for t in tables]
    if images:
        parts.append(f"<h2>{esc(images_title)}</h2>")
    for alt, png in images:
        b64 = base64.b64encode(png).decode("ascii")
        parts.append(f"<img alt='{esc(alt)}' src='data:image/png;base64,{b64}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


__all__ = [
    "CSS",
    "GAP",
    "INDENT",
    "LIST_SEP",
    "MISSING",
    "Table",
    "ci_level",
    "count",
    "factor",
    "html_page",
    "html_table",
    "interval",
    "is_numeric",
    "markdown",
    "markdown_table",
    "num",
    "p_value",
    "pct",
    "plain",
    "pm",
    "pts",
    "sig",
    "statistic",
    "table_lines",
    "text",
    "times",
]

"""harness.util.render: one table type in text, Markdown and HTML, and the number formats; in HTML no
number, percentage or interval can break across lines."""

from __future__ import annotations

import math

import pytest

from harness.util import render as R

try:
    from tests.html_check import assert_numbers_unbreakable
except ImportError:  # pytest run from inside tests/
    from html_check import assert_numbers_unbreakable

T = R.Table(
    "Entrants (95 % CI)",
    ["entrant", "games", "mean score", "win", "note"],
    [
        ["greedy", "2,000", "198.30 [196.63, 199.97]", "32.8 %", "a | pipe"],
        ["bonus", "12", "–", "8.5 % [7.4, 9.8]", ""],
    ],
)


def test_table_is_frozen_and_checked():
    assert T.header == ("entrant", "games", "mean score", "win", "note") and isinstance(T.rows[0], tuple)
    with pytest.raises(AttributeError):
        T.title = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="row 0 has 1 cells for 2 columns"):
        R.Table("t", ["a", "b"], [["x"]])
    with pytest.raises(TypeError, match="strings"):
        R.Table("t", ["a"], [[1.5]])


def test_text_aligns_columns_under_the_title():
    assert R.table_lines(T) == [
        "Entrants (95 % CI)",
        "  entrant  games  mean score               win               note",
        "  greedy   2,000  198.30 [196.63, 199.97]  32.8 %            a | pipe",
        "  bonus    12     –                        8.5 % [7.4, 9.8]",
    ]
    untitled = R.Table("", ["a", "bb"], [["xxx", "y"]], notes=["note: n"])
    assert R.table_lines(untitled) == ["  a    bb", "  xxx  y", "  note: n"]
    assert (
        R.text([untitled, untitled], header=["Head"])
        == "Head\n\n  a    bb\n  xxx  y\n  note: n\n\n  a    bb\n  xxx  y\n  note: n"
    )


def test_markdown_escapes_pipes():
    md = R.markdown([T], "Run report", ["Run: x"])
    assert md.splitlines() == [
        "# Run report",
        "",
        "- Run: x",
        "",
        "## Entrants (95 % CI)",
        "",
        "| entrant | games | mean score | win | note |",
        "|---|---|---|---|---|",
        "| greedy | 2,000 | 198.30 [196.63, 199.97] | 32.8 % | a \\| pipe |",
        "| bonus | 12 | – | 8.5 % [7.4, 9.8] |  |",
    ]
    assert md.endswith("|\n")
    assert R.markdown_table(R.Table("t", ["a"], [], notes=["n"]))[-2:] == ["", "- n"]


def test_numbers():
    assert R.num(198.3) == "198.30" and R.num(2.2064, 3, sign=True) == "+2.206" and R.num(-0.0001, 3) == "-0.000"
    assert R.num(None) == R.num(math.nan) == R.MISSING == "–"
    # a missing value keeps its (missing) interval: the column says there is none
    assert R.num(None, 1, ci=[None, None]) == R.pct(None, ci=(None, None)) == "– [–, –]"
    assert R.sig(None, ci=[None, 1]) == "– [–, 1]" and R.pts(None) == "–"
    assert R.num(math.inf) == "+inf" and R.num(-math.inf, 1) == "-inf"
    assert R.num(198.3, ci=[196.63, 199.97]) == "198.30 [196.63, 199.97]"
    assert R.num(2.2, 3, sign=True, ci=(2.0, 2.4)) == "+2.200 [+2.000, +2.400]"
    assert R.num(1.0, ci=None) == R.num(1.0, ci=()) == "1.00" and R.num(1.0, ci=[None, None]) == "1.00 [–, –]"
    assert R.num(1.0, ci=[0.5, None]) == "1.00 [0.50, –]"
    assert R.sig(0.35291) == "0.353" and R.sig(1.65726, 4) == "1.657" and R.sig(0.05, 6) == f"{0.05:g}"
    assert R.sig(-1.0, 6, sign=True) == "-1" and R.sig(1.0, 6, sign=True) == "+1"
    assert R.sig(0.353, ci=(0.348, math.inf)) == "0.353 [0.348, inf]"
    assert R.plain(0.0001234) == "0.0001234" and R.plain(1.020001) == "1.02" and R.plain(0) == "0"
    assert R.plain(12345.0) == "12345"  # never an exponent, at the cost of the digits
    assert R.count(2000) == "2,000" and R.count(None) == "–"
    assert R.pm(197.678, 0.661) == "197.68 ± 0.66" and R.pm(1.0, None) == "1.00 ± –"
    assert R.times(6.43) == "6.4x" and R.times(None) == "–"
    assert R.ci_level(0.95) == "95 %" and R.ci_level(0.999) == "99.9 %"


def test_percentages_and_points():
    assert R.pct(0.328) == "32.8 %" and R.pct(0.6052, 2) == "60.52 %" and R.pct(None) == "–"
    assert R.pct(0.085, ci=[0.074, 0.098]) == "8.5 % [7.4, 9.8]"
    assert R.pct(0.3979, 2, ci=(0.37491, 0.42091)) == "39.79 % [37.49, 42.09]"
    assert R.pts(0.053) == "+5.30 pts" and R.pts(-0.0033, ci=[-0.0086, 0.0021]) == "-0.33 pts [-0.86, +0.21]"
    assert R.interval([0.2041, 0.2404], scale=100) == "[20.41, 24.04]"
    assert R.interval([-0.041, 0.005], 3, sign=True) == "[-0.041, +0.005]"
    assert R.interval(None) == "" and R.interval([None, math.nan]) == "[–, –]"


def test_p_values_tests_and_factors():
    assert R.p_value(0.0286) == "0.0286" and R.p_value(6.9e-103) == "6.9e-103" and R.p_value(1.5e-5) == "1.5e-05"
    assert R.p_value(0.0) == "<1e-300" and R.p_value(None) == R.p_value(math.nan) == "–" and R.p_value(1.0) == "1"
    assert R.statistic(12541.04, 2, 0.0) == "12541.0 (df 2, p <1e-300)"
    assert R.statistic(3.21, 8, 0.5) == "3.2 (df 8, p 0.50)" and R.statistic(9.0, 2, 0.0011) == "9.0 (df 2, p 0.0011)"
    assert R.factor(8.1523) == "8.15" and R.factor(math.inf) == "∞" and R.factor(None, 1e-9) == "∞"
    assert R.factor(None) == R.factor(None, 0.5) == "–"


@pytest.mark.parametrize(
    "cell",
    [
        "198.30 [196.63, 199.97]",
        "32.8 %",
        "8.5 % [7.4, 9.8]",
        "2,000",
        "–",
        "-108.7",
        "[-117.9, -99.6]",
        ">= 12.3",
        "~ 0.0",
        "6.4x",
        "197.68 ± 0.66",
        "+0.75 pts",
        "128 / 144 / 171",
        "14.09 (0.477, 31.8 %)",
        "12541.0 (df 2, p <1e-300)",
        "0.353 [0.348, inf]",
        "1 1 4 5 5",
        "66.4 % / 67.3 %",
        "∞",
    ],
)
def test_numeric_cells(cell):
    assert R.is_numeric(cell)


@pytest.mark.parametrize(
    "cell",
    [
        "greedy",
        "exact",
        "casual",
        "game 12 seat 1",
        "solver:temperature=0.35",
        "(pooled)",
        "does not apply: no table of two or more seats",
        "",
        "info",
        "score 40 % vs ref",
        "1 1 4 5 5 -> twos, best -> small_straight",
    ],
)
def test_text_cells(cell):
    assert not R.is_numeric(cell)


def test_html_marks_every_number_unbreakable():
    t = R.Table(
        "t <&>",
        ["entrant", "mean", "what", "percentiles"],
        [
            ["greedy", "198.30 [196.63, 199.97]", "score 40 % vs ref", "128 / 144 / 171"],
            ["a<b", "32.8 %", "1 1 4 5 5 -> twos, won by 5 points [1.0, 2.0]", "–"],
        ],
        notes=["n"],
    )
    page = R.html_page("Run report: x", "Run report", ["Run: x"], [t], notes=["Note: careful"])
    assert assert_numbers_unbreakable(page) == 4
    assert (
        "<td class='num list'><span class='num'>128</span> / <span class='num'>144</span> / "
        "<span class='num'>171</span></td>"
    ) in page
    assert (
        "<h2>t &lt;&amp;&gt;</h2>" in page
        and "<td>a&lt;b</td>" in page
        and "<li class='note'>Note: careful</li>" in page
    )
    assert "<th class='num'>mean</th>" in page and "<th>what</th>" in page
    assert "<td>score <span class='num'>40 %</span> vs ref</td>" in page
    assert "<span class='num'>1 1 4 5 5</span> -&gt; twos, won by 5 points <span class='num'>[1.0, 2.0]</span>" in page
    assert "<p class='note'>n</p>" in page


def test_html_page_embeds_images():
    page = R.html_page("t", "h", images=[("plot", b"\x89PNG")])
    assert "<h2>Plots</h2>" in page and "<img alt='plot' src='data:image/png;base64,iVBORw==" in page
    assert "<h2>Plots</h2>" not in R.html_page("t", "h")

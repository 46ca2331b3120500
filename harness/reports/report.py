"""Run reports: write a run's summary as ``summary.json``, ``summary.md``, ``report.html`` and PNG plots.

The numbers come from :func:`harness.reports.summary.summarize` (one streaming pass, per-section
accumulators; the statistical choices are documented there), the pictures from
:mod:`harness.reports.plot`, the look of every table from :mod:`harness.util.render`. This module puts the
report together, writes it, and holds the ``report`` command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.util.errors import UserError
from harness.game.outcome import DEFINITION
from harness.util.render import Table, count, html_page, markdown, text
from harness.records.codec import records_of_run
from harness.records.rundir import write_bytes_atomic
from harness.reports.summary import SECTIONS, RunSummary


def _tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables, shared by Markdown, HTML and stdout."""
    return [t for cls in SECTIONS for t in cls.tables(d)]


def _header_lines(d: Mapping[str, Any]) -> list[str]:
    """What the run is (its notes apart: :func:`_notes`)."""
    r = d["run"]
    st = ", ".join(f"{k}={v}" for k, v in r["rules"]["settings_changed"].items()) or "settings as in the rule file"
    return [
        f"Run: {r['path']} ({r['kind']}, {'complete' if r['complete'] else 'INCOMPLETE'})",
        *_disqualification(r),
        f"Rules: {r['rules']['name']} ({st})",
        f"Games: {count(r['games'])} per lineup x {len(r['lineups'])} lineup(s), seed {r['seed']}",
        f"Outcomes: {r.get('outcomes', DEFINITION)}",
    ]


def _disqualification(r: Mapping[str, Any]) -> list[str]:
    """The run's disqualified engine, first thing after what the run is (issue 49)."""
    dq, went_on = r.get("disqualified"), r.get("continued")
    if not dq:
        return []
    lines = [f"DISQUALIFIED: {dq['reason']}"]
    if went_on:
        lines.append(
            f"Played on after the disqualification with {went_on['flag']} ({went_on['at']}, "
            f"{count(went_on['games_kept'])} games played before)"
        )
    return lines


def _notes(d: Mapping[str, Any]) -> list[str]:
    return [f"Note: {n}" for n in d["notes"]]


def summary_markdown(d: Mapping[str, Any]) -> str:
    """``summary.md``: the header and every table as GitHub Markdown."""
    return markdown(_tables(d), "Run report", _header_lines(d) + _notes(d))


def summary_text(d: Mapping[str, Any]) -> str:
    """A plain-text rendering for the terminal (aligned columns)."""
    return text(_tables(d), _header_lines(d) + _notes(d))


def report_html(d: Mapping[str, Any], pngs: Sequence[Path]) -> str:
    """``report.html``: self-contained (CSS inline, every PNG embedded as base64); no number or
    interval of a table breaks across lines (:func:`harness.util.render.html_table`)."""
    images = [(Path(p).stem, Path(p).read_bytes()) for p in pngs]
    return html_page(
        f"Run report: {d['run']['path']}", "Run report", _header_lines(d), _tables(d), images, notes=_notes(d)
    )


def write_review_pages(summary: RunSummary, d: Mapping[str, Any], out: Path) -> list[Path]:
    """The review page (:mod:`harness.reports.review`) of every game in the costliest decisions of ``d``
    (a run played with ``--analyse`` and ``--record``) into ``out/reviews/``; each listed decision
    gains ``"review"``: its page, opened at its turn. Win chances come with the pages when the
    rule set's "ev" table is in the solver cache or small (:data:`harness.reports.review.QUICK_TABLE_BYTES`)."""
    rows = [w for x in d.get("luck", []) for w in x.get("worst", []) if "turn" in w]
    path = summary.info.path
    if not rows or not (path / "records").is_dir():
        return []
    # the reviews (the analysis, the win tables) load only for a run that has costliest decisions to show
    from harness.reports.review import QUICK_TABLE_BYTES, page_name, turn_anchor, write_reviews

    rules = summary.info.rules
    wanted = sorted({(w["lineup"], w["game"]) for w in rows})
    games = [
        (rec, lu, rules)
        for li in sorted({lu for lu, _ in wanted})
        for lu, rec in records_of_run(path, lineup=li, games=[g for lu, g in wanted if lu == li])
    ]
    pages = write_reviews(games, out / "reviews", source=str(path), win_tables_up_to=QUICK_TABLE_BYTES)
    seats = {(rev.lineup, rev.game): len(rev.seats) for rev, _ in pages}
    for w in rows:
        at = turn_anchor(seats[(w["lineup"], w["game"])], rules.n_boxes, w["seat"], w["column"], w["turn"])
        w["review"] = f"reviews/{page_name(w['game'], w['lineup'])}{at}"
    return [p for _, p in pages]


def write_report(
    summary: RunSummary, out_dir: str | Path | None = None, plots: bool = True, reviews: bool = False
) -> dict[str, Any]:
    """Write ``summary.json``, ``summary.md``, ``report.html`` and the PNGs; returns the summary dict.

    ``out_dir`` defaults to the run directory. The dict gains ``"files"``: the paths written.
    With ``reviews``, the review pages of the costliest decisions' games too
    (:func:`write_review_pages`), linked from ``report.html``. A directory that cannot be made or
    written raises :class:`UserError` naming it; each file is written through a temporary name,
    so a failure leaves no half-written file.
    """

    out = Path(out_dir) if out_dir is not None else summary.info.path
    d = summary.to_dict()
    try:
        out.mkdir(parents=True, exist_ok=True)
        pngs: list[Path] = []
        if plots:
            # matplotlib (~0.3 s) only when plots are drawn (not --no-plots)
            from harness.reports.plot import save_all_plots

            pngs = save_all_plots(summary, out)
        pages = write_review_pages(summary, d, out) if reviews else []
        files = [out / "summary.json", out / "summary.md", out / "report.html"] + pngs + pages
        d["files"] = [str(f) for f in files]
        write_bytes_atomic(out / "summary.json", (json.dumps(d, indent=2) + "\n").encode())
        write_bytes_atomic(out / "summary.md", summary_markdown(d).encode())
        write_bytes_atomic(out / "report.html", report_html(d, pngs).encode())
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
        raise UserError(f"cannot write the report to {out}: {where}{exc.strerror or exc}") from None
    return d

"""Run reports: write a run's summary as ``summary.json``, ``summary.md``, ``report.html`` and PNG plots.

The numbers come from :func:`harness.summary.summarize` (one streaming pass, per-section
accumulators; the statistical choices are documented there), the pictures from
:mod:`harness.plot`, the look of every table from :mod:`harness.render`. This module puts the
report together, writes it, and holds the ``report`` command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.errors import UserError
from harness.outcome import DEFINITION
from harness.render import Table, count, html_page, markdown, text
from harness.rundir import write_bytes_atomic
from harness.summary import SECTIONS, RunSummary


def _tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables, shared by Markdown, HTML and stdout."""
    return [t for cls in SECTIONS for t in cls.tables(d)]


def _header_lines(d: Mapping[str, Any]) -> list[str]:
    """What the run is (its notes apart: :func:`_notes`)."""
    r = d["run"]
    st = ", ".join(f"{k}={v}" for k, v in r["rules"]["settings_changed"].items()) or "settings as in the rule file"
    return [f"Run: {r['path']} ({r['kind']}, {'complete' if r['complete'] else 'INCOMPLETE'})",
            f"Rules: {r['rules']['name']} ({st})",
            f"Games: {count(r['games'])} per lineup x {len(r['lineups'])} lineup(s), seed {r['seed']}",
            f"Outcomes: {r.get('outcomes', DEFINITION)}"]


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
    interval of a table breaks across lines (:func:`harness.render.html_table`)."""
    images = [(Path(p).stem, Path(p).read_bytes()) for p in pngs]
    return html_page(f"Run report: {d['run']['path']}", "Run report", _header_lines(d), _tables(d), images,
                     notes=_notes(d))


def write_report(summary: RunSummary, out_dir: str | Path | None = None, plots: bool = True) -> dict[str, Any]:
    """Write ``summary.json``, ``summary.md``, ``report.html`` and the PNGs; returns the summary dict.

    ``out_dir`` defaults to the run directory. The dict gains ``"files"``: the paths written.
    A directory that cannot be made or written raises :class:`UserError` naming it; each file is
    written through a temporary name, so a failure leaves no half-written file.
    """

    out = Path(out_dir) if out_dir is not None else summary.info.path
    d = summary.to_dict()
    try:
        out.mkdir(parents=True, exist_ok=True)
        pngs: list[Path] = []
        if plots:
            from harness.plot import save_all_plots  # matplotlib (~0.3 s) only when plots are drawn (not --no-plots)

            pngs = save_all_plots(summary, out)
        files = [out / "summary.json", out / "summary.md", out / "report.html"] + pngs
        d["files"] = [str(f) for f in files]
        write_bytes_atomic(out / "summary.json", (json.dumps(d, indent=2) + "\n").encode())
        write_bytes_atomic(out / "summary.md", summary_markdown(d).encode())
        write_bytes_atomic(out / "report.html", report_html(d, pngs).encode())
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
        raise UserError(f"cannot write the report to {out}: {where}{exc.strerror or exc}") from None
    return d

"""Run reports: write a run's summary as ``summary.json``, ``summary.md``, ``report.html`` and PNG plots.

The numbers come from :func:`harness.summary.summarize` (one streaming pass, per-section
accumulators; the statistical choices are documented there), the pictures from
:mod:`harness.plot`. This module renders and writes them, and holds the ``report`` command.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.errors import UserError
from harness.outcome import DEFINITION
from harness.summary import SECTIONS, RunSummary, Table


def _tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables as (title, header, rows) of strings: shared by Markdown, HTML and stdout."""
    return [t for cls in SECTIONS for t in cls.tables(d)]


def _header_lines(d: Mapping[str, Any]) -> list[str]:
    r = d["run"]
    st = ", ".join(f"{k}={v}" for k, v in r["rules"]["settings_changed"].items()) or "settings as in the rule file"
    lines = [f"Run: {r['path']} ({r['kind']}, {'complete' if r['complete'] else 'INCOMPLETE'})",
             f"Rules: {r['rules']['name']} ({st})",
             f"Games: {r['games']:,} per lineup x {len(r['lineups'])} lineup(s), seed {r['seed']}",
             f"Outcomes: {r.get('outcomes', DEFINITION)}"]
    return lines + [f"Note: {n}" for n in d["notes"]]


def summary_markdown(d: Mapping[str, Any]) -> str:
    """``summary.md``: the header and every table as GitHub Markdown."""
    out = ["# Run report", ""] + [f"- {x}" for x in _header_lines(d)] + [""]
    for title, head, rows in _tables(d):
        out += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        out.append("")
    return "\n".join(out)


def summary_text(d: Mapping[str, Any]) -> str:
    """A plain-text rendering for the terminal (aligned columns)."""
    out = _header_lines(d)
    for title, head, rows in _tables(d):
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]
        out += ["", title]
        out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;
text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}img{max-width:100%;
margin:0.5em 0 1.5em;border:1px solid #eee}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.5em}
.note{color:#a40}"""


def report_html(d: Mapping[str, Any], pngs: Sequence[Path]) -> str:
    """``report.html``: self-contained (CSS inline, every PNG embedded as base64)."""
    esc = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>Run report: {esc(str(d['run']['path']))}</title><style>{_CSS}</style></head><body>",
             "<h1>Run report</h1><ul>"]
    for line in _header_lines(d):
        cls = " class='note'" if line.startswith("Note:") else ""
        parts.append(f"<li{cls}>{esc(line)}</li>")
    parts.append("</ul>")
    for title, head, rows in _tables(d):
        parts.append(f"<h2>{esc(title)}</h2><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows]
        parts.append("</table>")
    if pngs:
        parts.append("<h2>Plots</h2>")
    for p in pngs:
        b64 = base64.b64encode(Path(p).read_bytes()).decode("ascii")
        parts.append(f"<img alt='{esc(Path(p).stem)}' src='data:image/png;base64,{b64}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(summary: RunSummary, out_dir: str | Path | None = None, plots: bool = True) -> dict[str, Any]:
    """Write ``summary.json``, ``summary.md``, ``report.html`` and the PNGs; returns the summary dict.

    ``out_dir`` defaults to the run directory. The dict gains ``"files"``: the paths written.
    A directory that cannot be made or written raises :class:`UserError` naming it; each file is
    written through a temporary name, so a failure leaves no half-written file.
    """
    from harness.rundir import write_bytes_atomic

    out = Path(out_dir) if out_dir is not None else summary.info.path
    d = summary.to_dict()
    try:
        out.mkdir(parents=True, exist_ok=True)
        pngs: list[Path] = []
        if plots:
            from harness.plot import save_all_plots

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

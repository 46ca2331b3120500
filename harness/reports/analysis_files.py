"""An analysis of game records on disk: ``analysis.json``, ``analysis.md`` and its pictures.

The reports layer's writer of :func:`harness.decisions.skill.analyse_records`'s result (``analyse``), apart
from :mod:`harness.reports.report` so that a run's report does not load the analysis (numba) it never uses.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from harness.util.errors import UserError
from harness.records.rundir import write_bytes_atomic
from harness.decisions.skill import SkillReport
from harness.decisions.skill import markdown as analysis_markdown


def write_analysis(report: SkillReport, out_dir: str | Path, plots: bool = True) -> SkillReport:
    """Write ``analysis.json``, ``analysis.md`` and the PNGs into ``out_dir``; returns the report
    with ``files`` set. :class:`UserError` naming the directory when it cannot be written."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        pngs: list[Path] = []
        if plots:
            # matplotlib (~0.3 s) and the plots load only when plots are drawn (not with --no-plots)
            from harness.reports.plot import SKILL_PLOTS, plt

            for fname, fn in SKILL_PLOTS.items():
                fig = fn(report)
                if fig is None:
                    continue
                fig.savefig(out / fname)
                plt.close(fig)
                pngs.append(out / fname)
        files = [out / "analysis.json", out / "analysis.md", *pngs]
        report = replace(report, files=tuple(str(f) for f in files))
        d = report.to_dict()
        write_bytes_atomic(out / "analysis.json", (json.dumps(d, indent=2) + "\n").encode())
        write_bytes_atomic(out / "analysis.md", analysis_markdown(d).encode())
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
        raise UserError(f"cannot write the analysis to {out}: {where}{exc.strerror or exc}") from None
    return report


__all__ = ["write_analysis"]

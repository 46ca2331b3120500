"""The depth of skill's steps as a table, read from its JSON (:meth:`harness.studies.chain.DepthOfSkill.to_json`).

Rendering only, no kernels: a report shows a cached depth of skill without loading the evaluation.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.util import render as R


def steps_table(depths: Sequence[tuple[str, Mapping[str, Any]]]) -> R.Table:
    """The steps of one or more depths of skill (:meth:`DepthOfSkill.to_json`) side by side, one row
    per score rate (``report``: the run's rule set; ``compare``: BASE's and CANDIDATE's, and the change)."""
    rates = list(dict.fromkeys(c["p"] for _, d in depths for c in d["chains"]))
    rows = []
    for p in rates:
        got = [next((c["steps"] for c in d["chains"] if c["p"] == p), None) for _, d in depths]
        row = [R.pct(p, 0), *[R.MISSING if x is None else f"{x:.2f}" for x in got]]
        if len(depths) == 2:
            row.append(R.MISSING if None in got else f"{got[1] - got[0]:+.2f}")
        rows.append(row)
    head = ["p", *[name for name, _ in depths]] + (["change"] if len(depths) == 2 else [])
    ladders = list(dict.fromkeys(d["ladder"] for _, d in depths))
    return R.Table(
        "Depth of skill (exact): steps from the weakest bot to the optimal one, each scoring p against "
        "the one below (harness.studies.depth)",
        head,
        rows,
        [
            f"ladder: {'; '.join(ladders)}; the last step fractional; a different ladder gives a different "
            "chain (published figures for other games are estimates from human play: docs/findings.md)"
        ],
    )

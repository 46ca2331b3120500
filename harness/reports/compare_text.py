"""The terminal rendering of a comparison (``compare`` without ``--json``): the headline of what is
compared, the score and SPRT lines, the verdict, then the rates, the boxes, game quality and notes;
``compare --exact`` puts the exact values beside the sampled ones.

:mod:`harness.reports.compare` gives every public name of this module.
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.game.outcome import DEFINITION
from harness.reports.comparison import ComparisonResult
from harness.reports.paired import CONTROL
from harness.reports.quality import compare_lines
from harness.util.render import ci_level, count, factor, interval, num, p_value, pct, pts, sig


def compare_text(res: ComparisonResult) -> str:
    """The terminal rendering: one dense headline, the SPRT line, the verdict, then the details."""
    r = res.to_dict()
    return "\n".join(header_lines(r) + body_lines(r))


def header_lines(r: Mapping[str, Any]) -> list[str]:
    """What is compared: both runs, the settings that changed, the seats (and the pairing)."""
    changed = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in r["settings_changed"].items()) or "none"
    focus = sorted({(f["base"], f["candidate"]) for f in r["focus"]})
    return [
        f"BASE      {r['base']['path']}  ({r['base']['rules']}, seed {r['base']['seed']})",
        f"CANDIDATE {r['candidate']['path']}  ({r['candidate']['rules']}, seed {r['candidate']['seed']})",
        f"settings changed: {changed}",
        "seats compared: "
        + ", ".join(a if a == b else f"{a} -> {b}" for a, b in focus)
        + f" ({r['rows_per_game']} per game)",
        *(
            []
            if r.get("paired", True)
            else ["pairing: NONE: the runs have different seeds, games are independent (--unpaired)"]
        ),
        "",
    ]


#: How a sampled figure's line shows the exact value beside it (``compare --exact`` on run directories).
EXACT_MARK = "  | exact "


def exact_beside(x: Mapping[str, Any], one: Any, diff: Any) -> str:
    """The exact values beside a sampled figure ``x`` (its ``exact`` key, set by ``compare --exact``),
    each end formatted by ``one`` and the difference by ``diff``, then which of them lie outside the
    sampled intervals (``outside``); "" when ``x`` has no exact values."""
    ex = x.get("exact")
    if not ex:
        return ""
    out = f"{EXACT_MARK}{one(ex['base'])} -> {one(ex['candidate'])}  diff {diff(ex['diff'])}"
    if x.get("outside"):
        out += "  OUTSIDE: " + ", ".join(x["outside"])
    return out


def _exact_score(v: float) -> str:
    return f"{v:.6f}"


def _exact_diff(v: float) -> str:
    return f"{v:+.6f}"


def body_lines(r: Mapping[str, Any]) -> list[str]:
    """The figures of a sampled comparison (and, with ``compare --exact``, the exact ones beside)."""
    conf = ci_level(r["confidence"])
    sc = r["score"]
    sp = r["sprt"]
    lines: list[str] = []
    adjusted = bool((r.get("luck") or {}).get("adjusted"))
    label = (
        f"score (luck-adjusted: total − luck, variance / {factor(sc['variance_reduction'], sc['diff_std'])})  "
        if adjusted
        else "score  "
    )
    lines.append(
        f"{label}{num(sc['base'])} -> {num(sc['candidate'])}   diff "
        f"{num(sc['diff'], 3, sign=True, ci=sc['diff_ci'])} ({conf} CI)  p={p_value(sc['p_value'])}  "
        f"n={count(r['games'])} games" + exact_beside(sc, _exact_score, _exact_diff)
    )
    if adjusted:
        pl = r["score_plain"]
        lines.append(
            f"score (plain)  {num(pl['base'])} -> {num(pl['candidate'])}   diff "
            f"{num(pl['diff'], 3, sign=True, ci=pl['diff_ci'])}  p={p_value(pl['p_value'])}"
            + exact_beside(pl, _exact_score, _exact_diff)
        )
    mu_alt = [sig(t["h1"], 6, sign=True) for t in sp["tests"]]
    llrs = "  ".join(
        f"LLR {num(t['llr'], sign=True)} {interval((t['lower'], t['upper']))} ({t['decision']})" for t in sp["tests"]
    )
    lines.append(
        f"SPRT   H0 diff={sig(sp['mu0'], 6)} vs H1 diff={' or '.join(mu_alt)} points, "
        f"alpha={sig(sp['alpha'], 6)}, beta={sig(sp['beta'], 6)}:  {llrs}"
    )
    short = r["games"] < sp["min_games"]
    why = []
    if short:
        why.append(f"fewer than --min-games {sp['min_games']} paired games")
    if sp["moved"] == 0:
        why.append(
            "the totals differ in no game"
            + ("" if r["verdict"] != "inconclusive" else ", too few games to bound a change none showed within H0")
        )
    elif sp["moved"] < sp["min_moved"] and r["verdict"] == "inconclusive":
        why.append(f"the totals differ in only {sp['moved']} games (the SPRT waits for {sp['min_moved']})")
    lines.append(f"verdict: {r['verdict'].upper()} (exit {r['exit_code']})" + (": " + "; ".join(why) if why else ""))
    lines.append("")
    if r["distribution"]:
        d = r["distribution"]
        lines.append(f"distribution (KS two-sample): D={num(d['statistic'], 4)} p={p_value(d['p_value'])}")
    for key, label in RATE_LINES:
        x = r.get(key)
        if x:
            cv = ""
            if x.get("estimator") == CONTROL:
                cv = (
                    f"  ({CONTROL}, beta = {num(x['beta'], 4, sign=True)}, variance / "
                    f"{factor(x['variance_reduction'], x['diff_std'])}; plain {pts(x['plain_diff'])})"
                )
            lines.append(
                f"{label:<17}{pct(x['base'], 2)} -> {pct(x['candidate'], 2)}  diff "
                f"{pts(x['diff'], ci=x['diff_ci'])}{cv}" + exact_beside(x, _exact_pct, _exact_pts)
            )
    if r.get("win_rate"):
        lines.append(f"({DEFINITION})")
    if r["boxes"]:
        lines += ["", f"per box (mean points, candidate - base, {conf} CI; * = the interval excludes 0):"]
        w = max(len(b["box"]) for b in r["boxes"])
        for b in r["boxes"]:
            flag = " *" if b["p_value"] is not None and b["p_value"] < 1 - r["confidence"] else ""
            lines.append(
                f"  {b['box']:<{w}} {num(b['base']):>6} -> {num(b['candidate']):>6}  "
                f"{num(b['diff'], 3, sign=True):>7} {interval(b['diff_ci'], 3, sign=True)}{flag}"
                + exact_beside(b, _exact_box, _exact_box_diff)
            )
    lines += compare_lines(r.get("quality") or {})
    if "sequential" in r:
        s = r["sequential"]
        lines += [
            "",
            f"sequential: {len(s['looks'])} look(s), step {count(s['step'])} games, limit {count(s['max_games'])}",
        ]
    lines += [f"note: {n}" for n in r["notes"]]
    return lines


#: The rate lines of a comparison: (key of the result, label).
RATE_LINES = (
    ("bonus_rate", "upper bonus rate"),
    ("yatzy_rate", "yatzy rate"),
    ("win_rate", "win rate"),
    ("draw_rate", "draw rate"),
)


def _exact_pct(v: float) -> str:
    return pct(v, 3)


def _exact_pts(v: float) -> str:
    return pts(v, 3)


def _exact_box(v: float) -> str:
    return num(v, 4)


def _exact_box_diff(v: float) -> str:
    return num(v, 4, sign=True)

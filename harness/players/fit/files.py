"""A fit file read back (the dict of :meth:`~harness.players.fit.report.FitReport.to_dict`, what
``fit --json`` prints and ``fit --out`` writes): its text, the tables of ``fit``'s output
(:func:`text`, :func:`tables`, :func:`choice_table`, :func:`population_tables`), and a reference
player for ``calibrate --against FIT.json`` (:func:`reference_of`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from harness.decisions.analysis import DECISION_KINDS
from harness.players.fit.goodness import POOR_P
from harness.players.fit.models import MODELS, is_family
from harness.players.fit.player import MAX_HALF_WIDTH, MIN_DECISIONS, OK, POOR, RESOLUTION, TOO_LITTLE, evidence
from harness.util.errors import UserError
from harness.util.render import MISSING, Table, ci_level, count, num, pct, sig, statistic
from harness.util.render import text as render_text


def _evidence_of(d: Mapping[str, Any]) -> tuple[int, float]:
    """(min_decisions, max_half_width) a fit file was made with (the defaults for an older file)."""
    e = d.get("evidence") or {}
    return int(e.get("min_decisions", MIN_DECISIONS)), float(e.get("max_half_width", MAX_HALF_WIDTH))


def _too_little(p: Mapping[str, Any], d: Mapping[str, Any]) -> list[str]:
    """Why player ``p`` of fit file ``d`` is too little data (its own list, or :func:`evidence` of
    its figures for a file written before the verdict was)."""
    if "too_little_data" in p:
        return list(p["too_little_data"])
    params = {
        k: (
            math.nan if e["value"] is None else e["value"],
            math.nan if e["ci"][0] is None else e["ci"][0],
            math.inf if e["ci"][1] is None else e["ci"][1],
        )
        for k, e in p["params"].items()
    }
    return evidence(int(p["decisions"]), params, *_evidence_of(d))


def _verdict(p: Mapping[str, Any], d: Mapping[str, Any]) -> str:
    return TOO_LITTLE if _too_little(p, d) else POOR if p["goodness_of_fit"]["poor"] else OK


def _test(t: Mapping[str, Any] | None) -> str:
    return MISSING if t is None else statistic(t["statistic"], t["df"], t["p"])


#: How each model's choice rule reads in its table's title.
RULES_TEXT = {
    "dial": "P(option) = blunder/n + (1 - blunder) x softmax(value / temperature) over the n legal options",
    "kinds": "P(option) = blunder/n + (1 - blunder) x softmax(value / temperature of its kind: keep or box)",
    "mixed": "utility = (1 - weight) x value + weight x myopic value (the best box score reachable this turn); "
    "P(option) = blunder/n + (1 - blunder) x softmax(utility / temperature of its kind)",
    "paced": "utility = (1 - weight) x value + weight x paced value (the option's value to a player who plays for "
    "the upper bonus as the bonus bot does); P(option) = blunder/n + (1 - blunder) x softmax(utility / "
    "temperature of its kind)",
}


def _estimate(e: Mapping[str, Any]) -> str:
    return sig(e["value"], 3, ci=(e["ci"][0], math.inf if e["ci"][1] is None else e["ci"][1]))  # None: infinite


def tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables (:class:`harness.util.render.Table`) from
    :meth:`~harness.players.fit.report.FitReport.to_dict` (one model's: the dict itself or one of
    its ``alternatives``)."""
    params = MODELS[d["model"]]
    family = is_family(d["model"])
    rows, gof = [], []
    every = list(d["players"]) + ([d["pooled"]] if d["pooled"] else [])
    for p in every:
        ests = [_estimate(p["params"][k]) for k in params]
        top = p["top_choice"]
        fit = _verdict(p, d)
        if family:
            rows.append(
                [
                    p["player"],
                    count(p["seat_games"]),
                    count(p["decisions"]),
                    *ests,
                    num(p["loglik_per_decision"], 3),
                    pct(p["top1_agreement"]),
                    fit,
                ]
            )
        else:
            rows.append(
                [
                    p["player"],
                    count(p["seat_games"]),
                    count(p["decisions"]),
                    *ests,
                    num(p["loglik_per_decision"], 3),
                    MISSING if top["observed"] is None else f"{pct(top['observed'])} / {pct(top['model'])}",
                    fit,
                    p["spec"],
                ]
            )
        g = p["goodness_of_fit"]
        kinds = []
        for k in DECISION_KINDS:
            x = p["by_kind"][k]
            kinds.append(
                MISSING
                if x["regret_per_decision"] is None
                else f"{num(x['regret_per_decision'], 3)} / {num(x['regret_per_decision_model'], 3)}"
            )
        gof.append([p["player"], _test(g["lr_vs_per_kind"]), _test(g["regret_distribution"]), *kinds])
    conf = ci_level(d["confidence"])
    rule = RULES_TEXT[d["model"] if family else "dial"]
    title = f"Model {d['model']}: {rule}; maximum likelihood, {conf} profile-likelihood intervals"
    richer = (
        "the same model fitted separately to keeps and boxes (its weight and blunder rate per kind too)"
        if family
        else "(temperature, blunder) fitted separately to keeps and boxes"
    )
    gof_title = (
        f"Goodness of fit (POOR when a test gives p < {sig(POOR_P, 6)}): likelihood ratio against {richer}; "
        "observed vs predicted regret distribution (bins 0, 0.5, 2, 8 points, per kind)"
    )
    if family:
        first = Table(
            title + " (no bot plays it: no spec)",
            ["player", "games", "decisions", *params, "loglik/decision", "top-1", "fit"],
            rows,
        )
    else:
        first = Table(
            title,
            ["player", "games", "decisions", *params, "loglik/decision", "top choice (obs / model)", "fit", "spec"],
            rows,
        )
    return [
        first,
        Table(
            gof_title,
            [
                "player",
                "LR vs per-kind",
                "regret distribution X2",
                "keep regret/decision (obs / model)",
                "box regret/decision (obs / model)",
            ],
            gof,
        ),
    ]


def choice_table(d: Mapping[str, Any]) -> Table:
    """The model choice per player (:class:`~harness.players.fit.choice.ModelChoice`) from
    :meth:`~harness.players.fit.report.FitReport.to_dict`."""
    mc = d["model_choice"]
    models = [d["model"], *(a["model"] for a in d["alternatives"])]
    rows = []
    for c in mc["players"]:
        by = {h["model"]: h for h in c["models"]}
        cells = []
        for m in models:
            h = by[m]
            cells += [num(h["loglik_per_decision"], 3), pct(h["top1_agreement"])]
        rows.append(
            [
                c["player"],
                f"{count(c['train_decisions'])} / {count(c['test_decisions'])}",
                *cells,
                c["chosen"] or MISSING,
            ]
        )
    return Table(
        f"Model choice on held-out games (each player's seat-games split in halves, seed {mc['seed']}: "
        "fitted on one, judged on the other): log-likelihood per held-out decision (higher is better) and "
        "top-1 agreement (the share of held-out decisions where the model's most likely option is the one "
        "played, ties shared); chosen: the best log-likelihood",
        [
            "player",
            "decisions (fit / held out)",
            *(f"{m} {what}" for m in models for what in ("loglik/decision", "top-1")),
            "chosen",
        ],
        rows,
    )


def population_tables(d: Mapping[str, Any]) -> list[Table]:
    """The population picture from :meth:`~harness.players.fit.report.FitReport.to_dict`: the skill
    bands that have players, their players' regret per decision, and each band's fitted parameters
    under the last model fitted (the richest)."""
    pop = d["population"]
    last = d["alternatives"][-1]["model"] if d.get("alternatives") else d["model"]
    params = MODELS[last]
    rows = []
    for b in pop["bands"]:
        rpd = b["regret_per_decision"]
        cells = []
        for k in params:
            x = b["params"][last][k]
            cells.append(MISSING if not x else f"{sig(float(np.median(x)), 3)} ({sig(min(x), 3)} – {sig(max(x), 3)})")
        hi = "∞" if b["below"] is None else sig(b["below"], 6)
        rows.append(
            [
                b["band"],
                f"[{sig(b['from'], 6)}, {hi})",
                count(len(b["players"])),
                f"{num(float(np.median(rpd)), 3)} ({num(min(rpd), 3)} – {num(max(rpd), 3)})",
                *cells,
                ", ".join(b["players"]),
            ]
        )
    return [
        Table(
            f"Population: skill bands of the players' regret per decision (points, regret over every decision "
            f"/ every decision: analyse's rating scale, the bands a levels file targets; model-free); per band, "
            f"each fitted parameter of model {last} as median (min – max) over its players",
            ["band", "its regret/decision", "players", "their regret/decision median (min – max)", *params, "who"],
            rows,
        )
    ]


def evidence_line(min_decisions: int, max_half_width: float) -> str:
    """The minimum of evidence, in words (fit's output header)."""
    return (
        f"A fit is an answer (ok or POOR) from {min_decisions:,} decisions and with every interval within "
        f"±{100 * max_half_width:g} % of its estimate (of {sig(RESOLUTION['temperature'], 3)} for a temperature, "
        f"{sig(RESOLUTION['blunder'], 3)} for a blunder rate, when the estimate is below); else: too little "
        "data (never the median player, never a calibrate reference)"
    )


def text(d: Mapping[str, Any]) -> str:
    n, bad = d["games"], len(d["bad_games"])
    shown = tables(d) + [t for a in d.get("alternatives", []) for t in tables(a)]
    if d.get("model_choice"):
        shown.append(choice_table(d))
    if d.get("population"):
        shown += population_tables(d)
    out = render_text(
        shown,
        [
            f"Source: {d['source']} ({count(n)} game{'s' * (n != 1)}, {count(bad)} "
            f"bad game{'s' * (bad != 1)} skipped); rules {d['rules']}",
            evidence_line(*_evidence_of(d)),
        ],
    )
    each = [d, *d.get("alternatives", [])]
    short = [
        (p["player"] + (f" ({r['model']})" if len(each) > 1 else ""), _too_little(p, r))
        for r in each
        for p in list(r["players"]) + ([r["pooled"]] if r["pooled"] else [])
    ]
    short = [(x, why) for x, why in short if why]
    if short:
        out += "\n\ntoo little data:\n" + "\n".join(f"  {x}: {'; '.join(why)}" for x, why in short)
    if d["median_player"] is None and d["players"]:
        out += "\n\nno median player: every player's fit is too little data"
    elif d["median_player"] is not None and len(d["players"]) > 1:
        med = next(p for p in d["players"] if p["player"] == d["median_player"])
        fitted = f"fitted {med['spec']}" if med["spec"] else f"model {d['model']} (no bot plays it)"
        out += f"\n\nmedian player (by regret per game, {num(med['regret_per_game'])}): {med['player']}, {fitted}"
    return out


# ---------------------------------------------------------------------------------------------
# fitted model files (calibrate --against FILE.json)


def reference_of(ref: str) -> tuple[str, str | None]:
    """A reference player for ``calibrate``: a strategy spec as is, or ``FIT.json`` (the file
    ``fit --out`` writes: its median player's fitted spec) or ``FIT.json#PLAYER`` (that player's).
    Returns (spec, where it came from or None)."""
    path, sep, who = ref.partition("#")
    if not path.endswith(".json"):
        return ref, None
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read the fitted model {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a fit file (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not a fit file (invalid JSON: {exc.msg})") from None
    if not isinstance(d, dict) or d.get("format") != "yatzy-fit/1":
        raise UserError(f"{path}: not a fit file (write one with: yatzy-harness fit RECORDS --out {path})")
    name = who if sep else d.get("median_player")
    if name is None:
        raise UserError(
            f"{path}: no median player, every player's fit is too little data (fit more games, "
            f"or name one: {path}#PLAYER)"
        )
    for p in d.get("players", []):
        if p.get("player") == name:
            why = _too_little(p, d)
            if why:
                raise UserError(f"{path}: player {name!r} is too little data for a reference ({'; '.join(why)})")
            if p["goodness_of_fit"]["poor"]:
                raise UserError(
                    f"{path}: player {name!r} is a poor fit of {d['model']}: its spec does not play like it"
                )
            if not p.get("spec"):
                raise UserError(
                    f"{path}: model {d['model']} has no bot that plays it (fit a solver model for a "
                    "reference: --model dial)"
                )
            return p["spec"], f"{path}#{name}" + ("" if sep else " (median player)")
    names = ", ".join(str(p.get("player")) for p in d.get("players", []))
    raise UserError(f"{path}: no player {name!r} (players: {names})")

"""``compare --exact``: the exact effect of a rule change (or of a change of bot) on solitaire bots.

Each side, BASE and CANDIDATE, is a run directory, a run config (a path or a ``configs/runs``
name, as for the sampled ``compare``) or a rule set (a built-in name or a rule file); a config or a
rule set takes ``settings`` (``--set KEY=VALUE``, on both sides, then ``--candidate-set`` on
CANDIDATE's), and ``entrants`` names the bots (``--entrants A,B``; for a rule set it must; for a
config it replaces the config's tables by one table of those bots; ``--candidate-entrants`` gives
CANDIDATE other bots, seat by seat: a change of bot). A side's tables (*lineups*) are matched seat
by seat as in :func:`harness.reports.compare.match_slots` (``--entrant LABEL`` picks seats), and the seats
compared are grouped by bot (BASE's label, CANDIDATE's label): one comparison per bot, so a rule
change played by greedy and solver gives greedy's effect and solver's, each exact.

Exact per bot (:mod:`harness.exact.evaluate`, :mod:`harness.exact.figures`): the mean, standard deviation and
percentiles of the final score, the largest difference of the two CDFs (the population value of
the KS statistic), P(upper bonus) and P(yatzy) as a run counts them (in any column), each box's mean,
and at tables of two or more seats the win and draw rates of the bot's seats (against the other
seats' independent finals), each side and its difference. Verdict: the exact difference of the
means is set against the SPRT's hypotheses (``mu0``, ``mu1`` and, two-sided, ``2 mu0 - mu1``):
"change" (exit 1) when it is nearer an alternative than ``mu0``, else "no change" (exit 0), for the
bot whose difference is largest; never "inconclusive".

When both sides are run directories the sampled comparison of each bot's seats
(:func:`harness.reports.compare.compare_runs` with those seats as its focus) is given too, in its own
layout, with each sampled figure's exact value beside it and the figures whose interval misses
their exact value named (``outside``: ``base``, ``candidate``, ``diff``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from harness.reports.compare_play import config_of, is_run_dir
from harness.reports.compare_text import RATE_LINES, body_lines, header_lines
from harness.reports.comparison import compare_runs
from harness.reports.paired import CompareSettings, Slot, match_slots
from harness.util.errors import UserError
from harness.exact.evaluate import Evaluation, refusal
from harness.exact.figures import ExactTables, outside
from harness.util.jsonable import jsonable
from harness.game.outcome import DEFINITION
from harness.game.registry import make
from harness.util.render import num, pct, pts, sig
from harness.game.rules import RuleSet, load_rules, parse_overrides, read_toml, resolve_rules_path
from harness.records.rundir import load_run
from harness.play.runconfig import resolve_config_path
from harness.stats import PERCENTILES
from harness.reports.summary import yatzy_box

#: Keys only a rule file has (a TOML with one of them is a rule set, not a run config).
_RULE_FILE_KEYS = {"boxes", "extends", "dice", "rolls", "key_box", "joker", "extra_yatzy_bonus"}


@dataclass(frozen=True)
class Side:
    """One side of an exact comparison: its rule set and tables (labels per seat); ``run_dir``
    when it is a run directory (its sampled figures can be shown)."""

    arg: str
    kind: str  # "run directory", "run config" or "rule set"
    rules: RuleSet
    lineups: tuple[tuple[str, ...], ...]
    run_dir: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.arg,
            "kind": self.kind,
            "rules": self.rules.name,
            "settings": dict(self.rules.settings),
            "digest": self.rules.digest,
            "lineups": [list(lu) for lu in self.lineups],
        }


def _is_rule_file(path: Path) -> bool:
    return bool(_RULE_FILE_KEYS & set(read_toml(path, "rule set or run config")))


def side(arg: str, which: str, entrants: Sequence[str] | None = None, settings: Sequence[str] = ()) -> Side:
    """Resolve BASE or CANDIDATE (``which``, for messages) as the module docstring says."""
    arg = str(arg)

    def labels(rules: RuleSet) -> tuple[str, ...]:
        return tuple(make(e, rules).label for e in entrants or ())

    if is_run_dir(arg):
        if settings or entrants:
            raise UserError(
                f"{which} {arg} is a run directory: its games were played with its own rules and "
                f"bots, so --set/--candidate-set/--entrants do not apply to it (--entrant LABEL "
                f"picks its seats)"
            )
        info = load_run(arg)
        return Side(arg, "run directory", info.rules, tuple(tuple(lu) for lu in info.lineups), Path(arg))
    p = Path(arg)
    rule_set = p.is_file() and _is_rule_file(p)
    if not rule_set and not p.is_file():
        try:
            resolve_config_path(arg)
        except UserError:
            try:
                resolve_rules_path(arg)
            except UserError:
                raise UserError(
                    f"{which} {arg!r} is neither a run directory, a run config (a file or a "
                    f"configs/runs name) nor a rule set"
                ) from None
            rule_set = True
    if rule_set:
        if not entrants:
            raise UserError(f"{which} {arg} is a rule set: name the bots to compare with --entrants A,B")
        rules = load_rules(arg, list(settings))
        return Side(arg, "rule set", rules, (labels(rules),))
    cfg = config_of(arg)
    if settings:
        cfg = cfg.with_overrides(settings={**cfg.settings, **parse_overrides(list(settings))})
    resolved = cfg.resolve()
    lineups = (labels(resolved.rules),) if entrants else tuple(tuple(lu) for lu in resolved.lineups)
    return Side(arg, "run config", resolved.rules, lineups)


@dataclass(frozen=True)
class SideChanges:
    """What the command line changes on the sides (the module docstring): the bots, ``entrants``
    (``--entrants``) on both and CANDIDATE's own, seat by seat (``candidate_entrants``,
    ``--candidate-entrants``: a change of bot); the settings, ``set_both`` (``--set KEY=VALUE``) on
    both, then ``set_candidate`` (``--candidate-set``) on CANDIDATE's."""

    entrants: Sequence[str] | None = None
    candidate_entrants: Sequence[str] | None = None
    set_both: Sequence[str] = ()
    set_candidate: Sequence[str] = ()

    def sides(self, base: str, candidate: str) -> tuple[Side, Side]:
        """BASE and CANDIDATE resolved (:func:`side`) with these changes."""
        return (
            side(base, "BASE", self.entrants, self.set_both),
            side(
                candidate, "CANDIDATE", self.candidate_entrants or self.entrants, [*self.set_both, *self.set_candidate]
            ),
        )


def _trio(b: float, c: float) -> dict[str, float]:
    return {"base": b, "candidate": c, "diff": c - b}


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference of two distributions' CDFs (the two-sample KS statistic's population value)."""
    n = max(len(a), len(b))
    ca, cb = (np.cumsum(np.pad(np.asarray(x, np.float64), (0, n - len(x)))) for x in (a, b))
    return float(np.max(np.abs(ca - cb))) if n else 0.0


def _box_scored(e: Evaluation, name: str | None) -> float | None:
    return None if name is None else e.box_scored_row(e.box_names.index(name))


def exact_block(bt: ExactTables, ct: ExactTables, slots: Sequence[Slot]) -> dict[str, Any]:
    """The exact comparison of one bot's seats (``slots``: one BASE label, one CANDIDATE label)."""
    eb, ec = bt.evaluations[slots[0].base], ct.evaluations[slots[0].candidate]
    yb, yc = yatzy_box(bt.rules), yatzy_box(ct.rules)
    out: dict[str, Any] = {
        "base": slots[0].base,
        "candidate": slots[0].candidate,
        "slots": [{"lineup": s.lineup, "seat": s.seat} for s in slots],
        "score": _trio(eb.mean, ec.mean),
        "std": _trio(eb.std, ec.std),
        "percentiles": {
            "base": eb.percentiles,
            "candidate": ec.percentiles,
            "diff": {q: ec.percentiles[q] - eb.percentiles[q] for q in eb.percentiles},
        },
        "distribution": {"ks_distance": ks_distance(eb.distribution, ec.distribution)},
        "bonus_rate": _trio(eb.p_bonus_row, ec.p_bonus_row),
        "yatzy_rate": _trio(_box_scored(eb, yb), _box_scored(ec, yc)) if yb and yc else None,
        "win_rate": None,
        "draw_rate": None,
        "boxes": [
            {"box": n} | _trio(eb.box_mean_row(i), ec.box_mean_row(ec.box_names.index(n)))
            for i, n in enumerate(eb.box_names)
            if n in ec.box_names
        ],
    }
    ob = bt.pooled([(s.lineup, s.seat) for s in slots])
    oc = ct.pooled([(s.lineup, s.seat) for s in slots])
    if ob and oc:
        out["win_rate"], out["draw_rate"] = _trio(ob[0], oc[0]), _trio(ob[1], oc[1])
    return out


def exact_verdict(diff: float, s: CompareSettings) -> str:
    """ "change" when the exact difference is nearer an alternative of the SPRT than ``mu0``."""
    alts = [s.mu1] + ([2 * s.mu0 - s.mu1] if s.two_sided else [])
    return "change" if min(abs(diff - a) for a in alts) < abs(diff - s.mu0) else "no change"


#: The sampled figures that get their exact value beside them: (key in the sampled result, key in the block).
_BESIDE = (("score", "score"), ("score_plain", "score"), *((k, k) for k, _ in RATE_LINES))


def annotate(sampled: dict[str, Any], block: Mapping[str, Any]) -> list[str]:
    """Put the block's exact values beside the sampled result's figures (``exact`` and ``outside``
    keys, in place); returns the names of the figures an interval of which misses its exact value."""
    missed: list[str] = []

    def mark(x: dict[str, Any] | None, ex: Mapping[str, float] | None, name: str) -> None:
        if not x or not ex:
            return
        x["exact"] = dict(ex)
        x["outside"] = [k for k in ("base", "candidate", "diff") if outside(ex[k], x.get(f"{k}_ci"))]
        missed.extend(f"{name} {k}" for k in x["outside"])

    adjusted = bool((sampled.get("luck") or {}).get("adjusted"))
    for key, ekey in _BESIDE:
        if key != "score_plain" or adjusted:  # unadjusted, score_plain is the score itself
            mark(sampled.get(key), block.get(ekey), key)
    exact_boxes = {b["box"]: b for b in block["boxes"]}
    for b in sampled.get("boxes") or []:
        mark(b, exact_boxes.get(b["box"]), f"box {b['box']}")
    return missed


def compare_exact(
    base: str,
    candidate: str,
    settings: CompareSettings | None = None,
    *,
    changes: SideChanges = SideChanges(),
    cache_dir: str | os.PathLike | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """The exact comparison of CANDIDATE with BASE (module docstring), each side with ``changes``,
    JSON-able; ``exit_code`` is the exact verdict's (0 no change, 1 change)."""
    s = settings or CompareSettings()
    entrants, candidate_entrants = changes.entrants, changes.candidate_entrants
    if candidate_entrants and not entrants:
        raise UserError("--candidate-entrants pairs CANDIDATE's bots with --entrants, seat by seat: give both")
    if candidate_entrants and len(candidate_entrants) != len(entrants or ()):
        raise UserError(
            f"--candidate-entrants names {len(candidate_entrants)} bots for the {len(entrants or ())} of "
            f"--entrants (they are paired seat by seat)"
        )
    b, c = changes.sides(base, candidate)
    for sd, which in ((b, "BASE"), (c, "CANDIDATE")):
        why = refusal(sd.rules, sorted({x for lu in sd.lineups for x in lu}))
        if why:
            raise UserError(f"{which} {sd.arg}: no exact comparison: {why}")
    _, focus = match_slots(b.lineups, c.lineups, s.entrant)
    groups: dict[tuple[str, str], list[Slot]] = {}
    for f in focus:
        groups.setdefault((f.base, f.candidate), []).append(f)
    bt = ExactTables.of(b.rules, b.lineups, cache_dir, progress=progress)
    ct = ExactTables.of(c.rules, c.lineups, cache_dir, progress=progress)
    notes: list[str] = []
    sampled = b.run_dir is not None and c.run_dir is not None
    if (b.run_dir is None) != (c.run_dir is None):
        notes.append("only one side is a run directory: sampled figures need both (exact figures only)")
    blocks, missed = [], []
    for slots in groups.values():
        blk = exact_block(bt, ct, slots)
        blk["verdict"] = exact_verdict(blk["score"]["diff"], s)
        blk["sampled"] = None
        if sampled:
            res = compare_runs(b.run_dir, c.run_dir, replace(s, entrant=None), focus=slots).to_dict()
            out = annotate(res, blk)
            blk["sampled"], blk["outside"] = res, out
            missed += [f"{slots[0].base}: {m}" for m in out]
        blocks.append(blk)
    worst = max(blocks, key=lambda x: abs(x["score"]["diff"] - s.mu0))
    verdict = worst["verdict"]
    bset, cset = dict(b.rules.settings), dict(c.rules.settings)
    bboxes, cboxes = set(b.rules.box_names), set(c.rules.box_names)
    return jsonable(
        {
            "exact": True,
            "base": b.to_json(),
            "candidate": c.to_json(),
            "settings_changed": {k: [bset.get(k), v] for k, v in cset.items() if bset.get(k) != v},
            "boxes_only": {
                "base": [x for x in b.rules.box_names if x not in cboxes],
                "candidate": [x for x in c.rules.box_names if x not in bboxes],
            },
            "sprt": {"mu0": s.mu0, "mu1": s.mu1, "two_sided": s.two_sided},
            "bots": blocks,
            "outside": missed,
            "verdict": verdict,
            "exit_code": 1 if verdict == "change" else 0,
            "notes": notes,
        }
    )


# ---------------------------------------------------------------------------------------------
# text: the sampled compare's layout


def _changed(r: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {a} -> {b}" for k, (a, b) in r["settings_changed"].items()) or "none"


def _alternatives(r: Mapping[str, Any]) -> str:
    sp = r["sprt"]
    alts = [sp["mu1"]] + ([2 * sp["mu0"] - sp["mu1"]] if sp["two_sided"] else [])
    return " or ".join(sig(a, 6, sign=True) for a in alts)


def _exact_lines(r: Mapping[str, Any], blk: Mapping[str, Any]) -> list[str]:
    """One bot's exact figures, in the lines of the sampled layout (exact numbers, no intervals)."""
    sc, sd, pc = blk["score"], blk["std"], blk["percentiles"]
    qs = [str(q) for q in PERCENTILES]
    code = 1 if blk["verdict"] == "change" else 0
    near = f"nearer H1 diff={_alternatives(r)}" if code else f"nearer H0 diff={sig(r['sprt']['mu0'], 6)}"
    lines = [
        f"score  {sc['base']:.6f} -> {sc['candidate']:.6f}   diff {sc['diff']:+.6f} (exact)",
        f"std    {sd['base']:.6f} -> {sd['candidate']:.6f}   diff {sd['diff']:+.6f}",
        f"percentiles {'/'.join(qs)}  {' / '.join(str(pc['base'][q]) for q in qs)} -> "
        f"{' / '.join(str(pc['candidate'][q]) for q in qs)}   diff {' / '.join(_signed(pc['diff'][q]) for q in qs)}",
        f"verdict: {blk['verdict'].upper()} (exit {code}): the exact difference {sc['diff']:+.6f} is {near}",
        "",
        f"distribution: largest difference of the CDFs (KS distance) {blk['distribution']['ks_distance']:.6f}",
    ]
    for key, label in RATE_LINES:
        x = blk.get(key)
        if x:
            lines.append(f"{label:<17}{pct(x['base'], 3)} -> {pct(x['candidate'], 3)}  diff {pts(x['diff'], 3)}")
    if blk.get("win_rate"):
        lines.append(f"({DEFINITION}; against the other seats' independent finals)")
    if blk["boxes"]:
        lines += ["", "per box (mean points, candidate - base, exact):"]
        w = max(len(b["box"]) for b in blk["boxes"])
        lines += [
            f"  {b['box']:<{w}} {num(b['base'], 4):>8} -> {num(b['candidate'], 4):>8}  "
            f"{num(b['diff'], 4, sign=True):>8}"
            for b in blk["boxes"]
        ]
    return lines


def _signed(n: int) -> str:
    return f"{n:+d}"


def exact_text(r: Mapping[str, Any]) -> str:
    """The terminal rendering of :func:`compare_exact`: the sides, then per bot its exact figures
    and, with run directories, the sampled comparison of its seats with the exact values beside."""
    bots = r["bots"]
    if bots and bots[0]["sampled"]:
        lines = header_lines(bots[0]["sampled"])[:3]
    else:
        lines = [
            f"BASE      {r['base']['path']}  ({r['base']['rules']}, {r['base']['kind']})",
            f"CANDIDATE {r['candidate']['path']}  ({r['candidate']['rules']}, {r['candidate']['kind']})",
            f"settings changed: {_changed(r)}",
        ]
    for side_, only in r["boxes_only"].items():
        if only:
            lines.append(f"boxes only in {side_.upper()}: {', '.join(only)} (their points are in the totals)")
    lines.append("exact: the forward pass of each bot's own choice probabilities (no sampling)")
    for blk in bots:
        who = blk["base"] if blk["base"] == blk["candidate"] else f"{blk['base']} -> {blk['candidate']}"
        seats_ = len(blk["slots"])
        lines += ["", f"== {who} ({seats_} seat{'s' if seats_ > 1 else ''} per game)", ""]
        lines += _exact_lines(r, blk)
        if blk["sampled"]:
            smp = blk["sampled"]
            lines += ["", f"sampled ({smp['games']:,} paired games), the exact value beside each figure:"]
            lines += body_lines({**smp, "quality": {}})  # game quality is over every seat: not one bot's
    if r["outside"]:
        lines += ["", f"sampled figures whose interval misses the exact value: {', '.join(r['outside'])}"]
    elif any(blk["sampled"] for blk in bots):
        lines += ["", "every sampled interval holds its exact value"]
    lines += [f"note: {n}" for n in r["notes"]]
    lines += ["", f"verdict: {r['verdict'].upper()} (exit {r['exit_code']})"]
    return "\n".join(lines)

"""Replay one game alone, with a readable turn-by-turn trace (rolls, keeps, box chosen, totals)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import UserError


def replay(rules_name: str, settings: list[str] | dict[str, Any], seats: list[str], seed: int,
           game: int) -> tuple[list[dict[str, Any]], Any]:
    """Play game ``game`` alone; returns (trace events, engine Results of that one game)."""
    from harness import registry
    from harness.engine import play
    from harness.rules import load_rules

    rules = load_rules(rules_name, settings)
    bots = [registry.make(s, rules) for s in seats]
    for b in bots:
        b.prepare()
    trace: list[dict[str, Any]] = []
    res = play(rules, bots, np.array([game], dtype=np.int64), seed, trace=trace)
    return trace, res


def format_trace(trace: list[dict[str, Any]], labels: list[str]) -> str:
    """Human-readable lines: one per roll and keep, one per filled box with the running total."""
    lines = []
    for e in trace:
        who = f"seat {e['seat']} {labels[e['seat']]}"
        col = f"col {e['column'] + 1} " if e.get("column") else ""
        head = f"{col}turn {e['turn'] + 1:>2} {who}"
        if e["event"] == "roll":
            lines.append(f"{head}: roll {e['roll'] + 1}: {' '.join(map(str, e['dice']))}")
        elif e["event"] == "keep":
            if e["stop"]:
                lines.append(f"{head}:   stop")
            else:
                kept = " ".join(map(str, e["keep"])) or "nothing"
                lines.append(f"{head}:   keep {kept}")
        else:
            extra = f" +{e['extra']} extra" if e["extra"] else ""
            lines.append(f"{head}: -> {e['box']} = {e['score']}{extra}  (upper {e['upper']}, total {e['total']})")
    return "\n".join(lines)


def _cmd_replay(args: argparse.Namespace) -> int:
    from harness.console import print_json

    if args.run:
        manifest_path = Path(args.run) / "manifest.json"
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read {manifest_path}: {exc}") from None
        lineups = manifest["lineups"]
        if not 0 <= args.lineup < len(lineups):
            raise UserError(f"--lineup must be 0..{len(lineups) - 1}")
        specs = {e["label"]: e["spec"] for e in manifest["entrants"]}
        seats = [specs[label] for label in lineups[args.lineup]]
        rules_name = manifest["rules"]["source"]
        settings = manifest["rules"]["settings"]
        seed = manifest["seed"]
    else:
        if not (args.rules and args.seats and args.seed is not None):
            raise UserError("replay needs --run DIR, or --rules, --seats and --seed")
        seats = [s for s in args.seats.split(",") if s]
        rules_name, settings, seed = args.rules, args.settings, args.seed
    if args.game < 0:
        raise UserError(f"--game must be >= 0, got {args.game}")
    trace, res = replay(rules_name, settings, seats, seed, args.game)
    labels = list(res.labels)
    if args.json:
        print_json({"game": args.game, "seed": seed, "seats": labels, "trace": trace,
                    "totals": res.total[0].tolist(), "outcome": res.outcome[0].tolist()})
        return 0
    print(f"game {args.game}, seed {seed}, rules {res.rules.name}: " + " vs ".join(labels))
    print(format_trace(trace, labels))
    for s, label in enumerate(labels):
        result = {2: "wins", 1: "shares the win", 0: "loses"}[int(res.outcome[0, s])]
        print(f"seat {s} {label}: total {int(res.total[0, s])} "
              f"(upper {int(res.upper[0, s])}, bonus {int(res.bonus[0, s])}) {result}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    from harness.console import add_set_option

    p = sub.add_parser("replay", help="replay one game alone with a turn-by-turn trace",
                       description="Re-play one game by index: the same dice as in any run with the same "
                                   "seed. Give --rules/--seats/--seed, or --run DIR to take them from a run.")
    p.add_argument("--run", metavar="DIR", help="take rules, seats and seed from this run directory")
    p.add_argument("--lineup", type=int, default=0, help="lineup of the run (tournaments), default 0")
    p.add_argument("--rules", help="rule set name or .toml path")
    p.add_argument("--seats", help="comma-separated strategies, e.g. greedy,solver:temperature=1")
    p.add_argument("--seed", type=int, help="root seed of the run")
    p.add_argument("--game", type=int, required=True, help="game index")
    p.add_argument("--json", action="store_true", help="print the trace as JSON")
    add_set_option(p)
    p.set_defaults(func=_cmd_replay)

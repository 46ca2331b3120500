"""``yatzy-harness advise``: every option of a position (or of a recorded decision) with its exact value and regret."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from harness.commands.options import (
    add_cache_dir_option,
    add_records_options,
    add_set_option,
    describe,
    print_json,
    record_of,
)
from harness.util.errors import UserError

if TYPE_CHECKING:  # annotations only: the library loads in run(), so that `advise --help` stays fast
    from harness.decisions.positions import Advice, Advisor, Option
    from harness.game.rules import RuleSet


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Every legal option of one position (one column's sheet, the dice, the rerolls "
        "left) with its exact value - points on the sheet plus the expected rest of the "
        "game under optimal play - and its regret (best value minus its value), best "
        "first. With rerolls left the options are the keeps ('stop' keeps every die), "
        "with none the boxes the rules allow now. The first option is the solver bot's. "
        "With --record, the position is a decision of a game record (the sheet rebuilt "
        "from the seat's earlier turns), and a last line says what the player did there "
        "and its regret.",
        "yatzy-harness advise scandinavian --filled ones=3,twos=6 --dice 6 6 4 4 1 --rolls-left 2",
        "yatzy-harness advise scandinavian --filled ones=3,twos=6 --dice 6 6 4 4 1 --rolls-left 0",
        "yatzy-harness advise generala --dice 2 3 4 5 6 --rolls-left 0 --first-roll --json",
        "yatzy-harness advise --record games.jsonl --game 17 --seat 1 --turn 4 --roll 2",
        "yatzy-harness advise --record results/sg --game 0 --seat 1 --turn 7 --roll 3",
    )
    p.add_argument("rules", metavar="RULES", nargs="?", help="rule set name or .toml path (not with --record)")
    p.add_argument(
        "--filled",
        action="append",
        default=[],
        metavar="BOX=SCORE,...",
        help="the filled boxes with their scores (comma-separated, repeatable); the others are open",
    )
    p.add_argument(
        "--extra", type=int, default=0, metavar="POINTS", help="points of extra yatzy bonuses already on the sheet"
    )
    p.add_argument("--dice", nargs="+", metavar="DIE", help="the dice in hand, faces 1..6")
    p.add_argument("--rolls-left", type=int, metavar="N", help="rerolls still allowed this turn; 0 = choose a box")
    first = p.add_mutually_exclusive_group()
    first.add_argument(
        "--first-roll",
        dest="first",
        action="store_const",
        const=True,
        default=None,
        help="the dice come from the turn's first roll (servida); implied with every reroll left",
    )
    first.add_argument(
        "--not-first",
        dest="first",
        action="store_const",
        const=False,
        help="the dice come from a reroll (the default with fewer rerolls left)",
    )
    add_set_option(p)
    rec = p.add_argument_group("a decision of a game record (in place of RULES, --filled, --dice, --rolls-left)")
    rec.add_argument(
        "--record",
        metavar="FILE",
        help="game records (.jsonl, .jsonl.gz, .parquet) or a run directory played with --record",
    )
    rec.add_argument("--game", metavar="ID", help="the game's id (a run's game index)")
    rec.add_argument(
        "--lineup", type=int, metavar="N", help="the lineup, in a run directory (default 0) or a run's Parquet records"
    )
    rec.add_argument("--seat", type=int, metavar="N", help="the seat, from 0")
    rec.add_argument("--column", type=int, metavar="N", help="the column, from 1 (default 1)")
    rec.add_argument("--turn", type=int, metavar="N", help="the seat's turn in that column, from 1")
    rec.add_argument("--roll", type=int, metavar="N", help="the roll of that turn, from 1: the position just after it")
    add_records_options(rec)
    add_cache_dir_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"decision", "position", "options": [{"keep"|"box", "value", "regret", "best"}]}, '
        'and with --record "chosen": the option played',
    )


def parse_filled(items: Sequence[str]) -> dict[str, int]:
    """``--filled`` values (``BOX=SCORE`` items, comma-separated, the option repeatable) -> {box: score}."""
    out: dict[str, int] = {}
    for item in (x.strip() for chunk in items for x in chunk.split(",")):
        if not item:
            continue
        name, eq, raw = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise UserError(f"--filled: expected BOX=SCORE, got {item!r}")
        try:
            score = int(raw.strip())
        except ValueError:
            raise UserError(f"--filled {name}: the score must be a whole number, got {raw.strip()!r}") from None
        if name in out:
            raise UserError(f"--filled: box {name} is given twice")
        out[name] = score
    return out


def _parse_dice(raw: Sequence[str]) -> list[int]:
    try:
        return [int(x) for x in raw]
    except ValueError:
        raise UserError(f"--dice: dice must be whole numbers 1..6, got {' '.join(raw)}") from None


def position_json(adv: Advisor, advice: Advice, scores: Mapping[str, int], extra: int) -> dict[str, Any]:
    """The ``position`` object of ``advise --json``."""
    rules, pos = adv.rules, advice.position
    st = pos.state
    return {
        "rules": rules.name,
        "digest": rules.digest,
        "filled": dict(scores),
        "extra": extra,
        "upper": st.upper,
        "bonus": rules.bonus_value if st.upper >= rules.threshold else 0,
        "flag": st.flag,
        "points": st.points,
        "dice": rules.dice.roll_faces[pos.roll].tolist()[::-1],
        "rolls_left": pos.rolls_left,
        "first_roll": pos.first,
        "value": advice.value,
    }


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `advise --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.util.cache import select_cache_dir
    from harness.decisions.positions import Advisor
    from harness.game.rules import load_rules

    cache_dir = select_cache_dir(args.cache_dir)
    if args.record:
        return _advise_record(args, cache_dir)
    asked = [
        flag
        for flag, v in (
            ("--game", args.game),
            ("--seat", args.seat),
            ("--turn", args.turn),
            ("--roll", args.roll),
            ("--column", args.column),
            ("--lineup", args.lineup),
            ("--rules-dir", args.rules_dir),
        )
        if v is not None
    ]
    if asked:
        raise UserError(f"{', '.join(asked)} need{'s' * (len(asked) == 1)} --record FILE (a decision of a game record)")
    missing = [
        what
        for what, v in (("RULES", args.rules), ("--dice", args.dice), ("--rolls-left", args.rolls_left))
        if v is None
    ]
    if missing:
        raise UserError(
            f"advise needs RULES, --dice and --rolls-left (or --record FILE with --game, --seat, --turn "
            f"and --roll); missing {', '.join(missing)}"
        )
    rules = load_rules(args.rules, args.settings)
    scores = parse_filled(args.filled)
    dice = _parse_dice(args.dice)
    adv = Advisor(rules, cache_dir)
    st = adv.state(scores, args.extra)
    advice = adv.advise(adv.position(st, dice, args.rolls_left, args.first))
    if args.json:
        print_json(
            {
                "decision": advice.decision,
                "position": position_json(adv, advice, scores, args.extra),
                "options": [o.to_json() for o in advice.options],
            }
        )
        return 0
    _print_advice(rules, advice, scores, args.extra, dice)
    return 0


def _print_advice(
    rules: RuleSet, advice: Advice, scores: Mapping[str, int], extra_points: int, dice: Sequence[int]
) -> None:
    """The text form of ``advise``: the sheet, the dice, every option, what the numbers mean."""
    pos = advice.position
    st = pos.state
    sheet = " ".join(f"{k}={v}" for k, v in scores.items()) or "empty"
    extra = f" +{extra_points} extra" if extra_points else ""
    bonus = " (bonus earned)" if rules.bonus_value and st.upper >= rules.threshold else ""
    print(f"{rules.name}: sheet {sheet}{extra}; {st.points} points, upper {st.upper}{bonus}")
    where = "first roll" if pos.first else "after a reroll"
    what = (
        f"{pos.rolls_left} reroll{'s' if pos.rolls_left != 1 else ''} left: keep" if pos.rolls_left else "choose a box"
    )
    print(f"dice {' '.join(map(str, dice))} ({where}), {what}")
    label = [_option_label(o) for o in advice.options]
    width = max(max(map(len, label)), 4)
    print(f"  {'keep' if advice.decision == 'keep' else 'box':<{width}}  {'value':>10}  {'regret':>8}")
    for i, (o, name) in enumerate(zip(advice.options, label)):
        mark = "best" if i == 0 else ("tie" if o.best else "")
        print(f"  {name:<{width}}  {o.value:10.4f}  {o.regret:8.4f}  {mark}".rstrip())
    print("value = points on the sheet + expected rest of the game under optimal play; best = the solver's choice")


def _option_label(o: Option) -> str:
    if o.keep is None:
        return str(o.box)
    return "stop" if o.stop else " ".join(map(str, o.keep)) or "nothing"


def _played(advice: Advice, o: Option) -> str:
    """``keep 6 6, regret 1.2345 (best: keep 6 6 6)``."""

    def name(x: Option) -> str:
        return _option_label(x) if x.keep is None or x.stop else f"keep {_option_label(x)}"

    best = "best" if o.best else f"best: {name(advice.options[0])}"
    return f"{name(o)}, regret {o.regret:.4f} ({best})"


def _advise_record(args: argparse.Namespace, cache_dir: Any) -> int:
    from harness.decisions.positions import Advisor, position_from_record

    given = [
        flag
        for flag, v in (
            ("RULES", args.rules),
            ("--filled", args.filled),
            ("--extra", args.extra),
            ("--dice", args.dice),
            ("--rolls-left", args.rolls_left is not None),
            ("--first-roll/--not-first", args.first is not None),
            ("--set", args.settings),
        )
        if v
    ]
    if given:
        raise UserError(f"--record takes the rules and the position from the record: leave out {', '.join(given)}")
    missing = [
        flag
        for flag, v in (("--game", args.game), ("--seat", args.seat), ("--turn", args.turn), ("--roll", args.roll))
        if v is None
    ]
    if missing:
        raise UserError(f"--record needs --game, --seat, --turn and --roll; missing {', '.join(missing)}")
    rec, rules, _ = record_of(args.record, args.game, args.lineup, args)
    adv = Advisor(rules, cache_dir)
    rp = position_from_record(rec, args.seat, args.column or 1, args.turn, args.roll, adv)
    advice = adv.advise(rp.position)
    chosen = rp.played(advice)
    then = adv.advise(rp.box_position) if advice.decision == "keep" and rp.keep is None else None
    if args.json:
        out: dict[str, Any] = {
            "game": rp.game,
            "seat": rp.seat,
            "label": rp.label,
            "column": rp.column,
            "turn": rp.turn,
            "roll": rp.roll,
        } | chosen.to_json()
        if then is not None:
            out["then"] = rp.played(then).to_json()
        print_json(
            {
                "decision": advice.decision,
                "position": position_json(adv, advice, rp.scores, rp.extra),
                "options": [o.to_json() for o in advice.options],
                "chosen": out,
            }
        )
        return 0
    _print_advice(adv.rules, advice, rp.scores, rp.extra, rp.dice)
    line = (
        f"game {rp.game}, seat {rp.seat} ({rp.label}), column {rp.column} turn {rp.turn}, roll {rp.roll}: "
        f"played {_played(advice, chosen)}"
    )
    if then is not None:
        line += f"; then {_played(then, rp.played(then))}"
    print(line)
    return 0

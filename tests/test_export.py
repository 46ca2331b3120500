"""A level exported to JavaScript (harness/exact/js/level.mjs, harness/exact/compact.py,
harness/players/export.py): its values bit for bit against the harness's, its generator and
exponential, its table (reproducible, refused when it is another's), its loss measured exactly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.decisions.positions import Advisor, State
from harness.exact.compact import decode, encode, load_export
from harness.exact.kernels.rows import exp_ieee
from harness.exact.solver import solve
from harness.game.rng import draw_faces, game_keys, uniforms
from harness.game.rules import load_rules
from harness.players.export import ExportOptions, export_level, resolve_level
from harness.util.errors import UserError

DRIVER = Path(__file__).resolve().parent / "js" / "level_driver.mjs"
# without node the tests skip, but not under CI (.ci/run), where they must run
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and not os.environ.get("CI"), reason="needs node (Node 20)"
)


class Node:
    """The test driver of an exported level under node: one JSON request, one JSON reply."""

    def __init__(self, export_dir: Path) -> None:
        self.p = subprocess.Popen(
            ["node", str(DRIVER), str(export_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ask(self, req: dict) -> dict:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError(f"node exited: {self.p.stderr.read() if self.p.stderr else ''}")
        reply = json.loads(line)
        assert "error" not in reply, reply["error"]
        return reply

    def close(self) -> None:
        if self.p.stdin:
            self.p.stdin.close()
        self.p.wait(timeout=10)


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """forced at full precision and quantised, the others quantised (no figures: sizes only)."""
    root = tmp_path_factory.mktemp("exports")
    out = {}
    for name, kind in (
        ("forced", "f64"),
        ("forced", "q"),
        ("scandinavian", "q"),
        ("standard", "q"),
        ("yahtzee", "q"),
        ("generala", "q"),
    ):
        d = root / f"{name}-{kind}"
        export_level(resolve_level("solver", name), d, ExportOptions(kind=kind, figures=False))
        out[f"{name}-{kind}"] = d
    return out


def _hex(a: np.ndarray) -> str:
    return np.ascontiguousarray(a, dtype=">f8").tobytes().hex()


def _positions(rules, rng: np.random.Generator, states: list[tuple[int, int, int]], per_state: int) -> list[dict]:
    """Protocol positions on the given states: random dice, every rerolls-left, first or not."""
    d = rules.dice
    rr = rules.rolls_per_turn - 1
    out = []
    for mask, upper, flag in states:
        for _ in range(per_state):
            r = int(rng.integers(d.n_rolls))
            left = int(rng.integers(rr + 1))
            first = bool(left == rr) if left else bool(rng.integers(2))
            sheet = _sheet(rules, mask, upper, flag)
            if sheet is None:
                continue
            out.append(
                {
                    "dice": "".join(map(str, d.roll_faces[r])),
                    "sheet": sheet,
                    "rolls_left": left,
                    "first": first,
                    "key": "0123456789abcdef",
                    "seat": 0,
                    "column": 1,
                    "turn": 1,
                    "step": rr - left + 1 if left else 0,
                }
            )
    return out


def _sheet(rules, mask: int, upper: int, flag: int) -> list[int] | None:
    """A sheet of the state (mask, upper subtotal, flag): upper scores summing to ``upper`` (capped
    states take any sum past the threshold), the key box scoring when the flag is set; None when
    this simple filling cannot make one."""
    sheet = [-1] * rules.n_boxes
    ups = [b for b in range(rules.n_boxes) if (mask >> b) & 1 and rules.upper_face[b] > 0]
    left = upper
    for b in sorted(ups, key=lambda b: -rules.upper_face[b]):
        f = int(rules.upper_face[b])
        k = min(left // f, rules.n_dice)
        sheet[b] = k * f
        left -= k * f
    if ups and left > 0 and upper < rules.threshold:
        return None
    for b in range(rules.n_boxes):
        if (mask >> b) & 1 and sheet[b] < 0:
            sheet[b] = 0
    if rules.key_box >= 0 and flag:
        sheet[rules.key_box] = int(rules.table[:, rules.key_box].max())
    return sheet


def _advise(adv: Advisor, pos: dict):
    rules = adv.rules
    scores = {rules.box_names[b]: s for b, s in enumerate(pos["sheet"]) if s >= 0}
    st = adv.state(scores)
    return adv.advise(
        adv.position(
            st, [int(c) for c in pos["dice"]], pos["rolls_left"], pos["first"] if pos["rolls_left"] == 0 else None
        )
    )


def _check(name: str, d: Path, n_states: int | None, per_state: int) -> None:
    """Every option's value of the JavaScript level equal to the harness's to the bit: the turn plans
    of the states (every stop value and keep value of every roll and stage), and values() and
    decide() of positions on them against ``advise``'s options and the T=0 bot's choice."""
    rules = load_rules(name)
    sol = load_export(d, rules).solution
    adv = Advisor(rules, solution=sol)
    mask, flag, _, upper = sol.plan.states()
    idx = np.flatnonzero(mask != (1 << rules.n_boxes) - 1)
    rng = np.random.default_rng(51)
    if n_states is not None:
        idx = np.sort(rng.choice(idx, n_states, replace=False))
    states = [(int(mask[i]), int(upper[i]), int(flag[i])) for i in idx]
    node = Node(d)
    try:
        plans = node.ask({"op": "plans", "states": states})["plans"]
        for (m, u, f), got in zip(states, plans):
            pl = adv.plan(State(m, u, bool(f), 0))
            assert got == [_hex(pl.stop_f), _hex(pl.stop_l), _hex(pl.Es), _hex(pl.Ms)], (name, m, u, f)
        positions = _positions(rules, rng, states, per_state)
        values = node.ask({"op": "values", "positions": positions})["values"]
        decided = node.ask({"op": "decide", "positions": positions})["decide"]
    finally:
        node.close()
    assert len(positions) >= len(states) // 2
    for pos, got, dec in zip(positions, values, decided):
        advice = _advise(adv, pos)
        assert got["decision"] == advice.decision
        want = [
            (o.box if o.keep is None else "".join(map(str, o.keep)), _hex(np.array([o.value])), o.best)
            for o in advice.options
        ]
        assert [(o.get("box", o.get("keep")), o["value"], o["best"]) for o in got["options"]] == want, pos
        best = advice.options[0]
        assert dec == ({"box": best.box} if best.keep is None else {"keep": "".join(map(str, sorted(best.keep)))})


def test_forced_every_state_bit_for_bit(exports: dict[str, Path]) -> None:
    _check("forced", exports["forced-f64"], None, 40)


@pytest.mark.parametrize("name", ["scandinavian", "standard", "yahtzee", "generala"])
def test_sampled_states_bit_for_bit(exports: dict[str, Path], name: str) -> None:
    _check(name, exports[f"{name}-q"], 60, 4)


def test_generator_and_exponential_are_the_harness_s(exports: dict[str, Path]) -> None:
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.uniform(-800, 720, 2000), rng.uniform(-40, 0, 2000), [0.0, -0.0, -745.2, 709.9, 1e-300]])
    keys = rng.integers(0, 2**63, 200, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    node = Node(exports["forced-q"])
    try:
        got = node.ask({"op": "exp", "x": [_hex(np.array([x])) for x in xs]})["exp"]
        assert got == _hex(np.array([exp_ieee(x) for x in xs]))
        for seat, turn, step in ((0, 0, 0), (1, 14, 255), (3, 77, 2)):
            u = node.ask(
                {"op": "uniforms", "keys": [f"{int(k):016x}" for k in keys], "seat": seat, "turn": turn, "step": step}
            )["uniforms"]
            assert u == [_hex(row) for row in uniforms(keys, seat, turn, step, 2)]
        # the dice of the demo page: the harness's game keys and dice stream
        games = np.arange(40)
        for seed, seat, turn, roll in ((51, 0, 0, 0), (2**64 - 1, 1, 12, 2)):
            got = node.ask(
                {
                    "op": "dice",
                    "seed": str(seed),
                    "games": games.tolist(),
                    "seat": seat,
                    "turn": turn,
                    "roll": roll,
                    "n": 5,
                }
            )["dice"]
            keys = game_keys(seed, games)
            assert got == [[f"{int(k):016x}", f.tolist()] for k, f in zip(keys, draw_faces(keys, seat, turn, roll, 5))]
    finally:
        node.close()


def test_table_round_trip_and_reproducible(tmp_path: Path) -> None:
    rules = load_rules("scandinavian")
    v = solve(rules).values
    data = encode(rules, v, "q", 8)
    assert encode(rules, v, "q", 8) == data  # gzip with a fixed mtime: the same bytes
    got, head = decode(rules, data)
    assert np.array_equal(got, np.rint(v * 256) / 256) and head["planes"] >= 1
    assert np.abs(got - v).max() <= 2.0**-9
    full, _ = decode(rules, encode(rules, v, "f64"))
    assert np.array_equal(full, v)
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        export_level(resolve_level("solver:temperature=1.5", "forced"), d, ExportOptions(figures=False))
    for f in ("table.bin.gz", "level.mjs", "engine.mjs", "manifest.json"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_other_tables_are_refused(exports: dict[str, Path], tmp_path: Path) -> None:
    forced, yahtzee = load_rules("forced"), load_rules("yahtzee")
    with pytest.raises(UserError, match="another rule set"):
        decode(forced, (exports["yahtzee-q"] / "table.bin.gz").read_bytes())
    with pytest.raises(UserError, match="rule set 'forced'"):
        load_export(exports["forced-q"], yahtzee)
    # another table under the manifest: its sha256 is checked (Python and JavaScript)
    bad = tmp_path / "bad"
    shutil.copytree(exports["forced-q"], bad)
    shutil.copy(exports["forced-f64"] / "table.bin.gz", bad / "table.bin.gz")
    with pytest.raises(UserError, match="sha256"):
        load_export(bad, forced)
    p = subprocess.run(["node", str(DRIVER), str(bad)], input="", capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "is not the manifest's" in p.stderr
    # a manifest of another harness version
    old = tmp_path / "old"
    shutil.copytree(exports["forced-q"], old)
    m = json.loads((old / "manifest.json").read_text())
    m["harness"] = "0.0.1"
    (old / "manifest.json").write_text(json.dumps(m))
    p = subprocess.run(["node", str(DRIVER), str(old)], input="", capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "exported by yatzy-harness 0.0.1" in p.stderr


def test_compact_loss_is_measured_exactly(tmp_path: Path) -> None:
    """The manifest's figures are the exact evaluations of the bot playing this table (the solver's
    table= parameter) and of the full-precision level; a coarse table (whole points) loses, and says
    how much (generala: 0.216 points; the default 1/256 point: 2.4e-6)."""
    from harness.exact.evaluate import evaluate

    d = tmp_path / "coarse"
    m = export_level(resolve_level("solver", "generala"), d, ExportOptions(kind="q", shift=0))
    fig = m["figures"]
    rules = load_rules("generala")
    assert fig["full_precision_mean"] == evaluate(rules, "solver").mean == pytest.approx(solve(rules).expected_score)
    assert fig["mean"] == evaluate(rules, f"solver:table={d}", use_cache=False).mean
    assert fig["loss"] == fig["full_precision_mean"] - fig["mean"] > 0  # whole points: a real loss
    fine = export_level(resolve_level("solver", "generala"), tmp_path / "fine", ExportOptions())["figures"]
    assert 0 <= fine["loss"] < fig["loss"] and fine["loss"] <= 0.01


def test_export_of_a_level_of_a_levels_file_states_its_score_rate(tmp_path: Path, capsys) -> None:
    """A level by name from a levels.json (the form calibrate --levels writes: each level's spec and
    the reference it was tuned against): the manifest's score rate is the exact one, from this table
    and at full precision; an unknown level, rule set or bot is one line naming it."""
    from harness.cli import main as cli
    from harness.exact.evaluate import evaluate, score_rate, versus

    levels = tmp_path / "levels.json"
    ref = "solver:temperature=1"
    levels.write_text(
        json.dumps(
            {
                "format": "yatzy-levels/1",
                "rules": "forced",
                "settings": [],
                "levels": [
                    {
                        "name": "casual",
                        "spec": "solver:temperature=1.6",
                        "target": {"kind": "win_rate", "value": 0.4, "against": ref},
                    },
                ],
            }
        )
    )
    out = tmp_path / "casual"
    assert cli(["export", "casual", "--levels", str(levels), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "exported level casual (solver:temperature=1.6) on forced" in text and "score rate against" in text
    m = json.loads((out / "manifest.json").read_text())
    assert m["level"] == "casual" and m["spec"] == "solver:temperature=1.6" and m["dial"]["temperature"] == 1.6
    rules = load_rules("forced")
    mine = evaluate(rules, f"solver:temperature=1.6,table={out}", use_cache=False)
    w, d, _ = versus(mine, evaluate(rules, ref))
    assert m["figures"]["score_rate"] == score_rate(w, d) and 0.3 < m["figures"]["score_rate"] < 0.5
    assert m["figures"]["against"] == ref
    for argv, says in (
        (["export", "expert", "--levels", str(levels)], "no level 'expert' (levels: casual)"),
        (["export", "solver", "--rules", "nope"], "unknown rule set 'nope'"),
        (["export", "greedy", "--rules", "forced"], "'greedy' is neither a solver spec"),
        (["export", "solver:target=200", "--rules", "forced"], "cannot be exported"),
    ):
        assert cli([*argv, "--out", str(tmp_path / "x")]) != 0
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err

"""Target tables against brute force, their invariants, their cache and ``solve --target``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.exact import solver
from harness.exact import target
from harness.cli import main as cli_main
from harness.game.rules import load_rules
from harness.game.scoring import context, score_options
from tests.test_solver import (  # noqa: F401
    TINY,
    _view,
    brute_force,
    cache_dir,
    enumerate_bot,
    tiny_dir,
)

NAMES = sorted(TINY)


def brute_target(rules, kind: str, top: int) -> dict[tuple[int, int, bool], np.ndarray]:
    """{(filled, upper, flag): (top + 1,) vector}: for every state met from the start (uncapped
    subtotal), the best chance that the rest of the game brings at least ``need`` points
    ("target"), or more than ``need`` plus half the chance of exactly ``need`` ("tie"), for need =
    0..top, each target on its own: the solver's brute-force enumeration (tests/test_solver.py)
    over vectors, the whole bonus counted at the end from the final subtotal."""
    need = np.arange(top + 1)

    def leaf(upper: int) -> np.ndarray:
        x = rules.bonus_value if upper >= rules.threshold else 0
        if kind == "tie":
            return np.where(need < x, 1.0, np.where(need == x, 0.5, 0.0))
        return (need <= x).astype(float)

    def add(v: np.ndarray, x: int) -> np.ndarray:  # x points now: the vector at need - x (1 below 0)
        out = np.ones(top + 1)
        if x <= top:
            out[max(x, 0) :] = v[: top + 1 - max(x, 0)]
        return out

    return brute_force(rules, leaf, add)[1]


def _reachable(rules, sol):
    """Every (filled, upper, flag) of the layout with an uncapped subtotal that reaches its slot."""
    lay = sol.plan.layout
    out = []
    for t in range(len(sol.plan.item_mask)):
        mask, flag = int(sol.plan.item_mask[t]), int(sol.plan.item_flag[t])
        um = lay.umask_of[mask]
        for i in range(lay.nslot[um]):
            out.append((mask, int(lay.ulist[um, i]), bool(flag)))
    return out


@pytest.mark.parametrize("kind", ["target", "tie"])
@pytest.mark.parametrize("name", NAMES)
def test_tables_match_brute_force(name, kind, tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    tab = target.target_table(rules, kind, cache_dir=cache_dir)
    brute = brute_target(rules, kind, tab.tmax + max(rules.bonus_value, 0))
    bonus_mid = rules.bonus_value if rules.threshold > 0 else 0
    checked = 0
    for (filled, upper, flag), want in brute.items():
        if filled == (1 << rules.n_boxes) - 1:
            continue
        v = tab.vector(filled, upper, flag)
        # a subtotal past the threshold already counted its bonus in the table, not in the brute force
        pend = bonus_mid if upper >= rules.threshold else 0
        got = np.zeros(tab.tmax + 1)
        got[: len(v)] = v
        np.testing.assert_allclose(got, want[pend : pend + tab.tmax + 1], atol=1e-6, err_msg=str((filled, upper, flag)))
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("name", NAMES)
def test_invariants(name, tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    for kind in target.TABLE_KINDS:
        tab = target.target_table(rules, kind, cache_dir=cache_dir)
        v, off = tab.values, tab.off
        assert v.dtype == np.float32 and (v >= 0).all() and (v <= 1).all()
        inner = np.ones(len(v) - 1, dtype=bool)
        inner[off[1:-1] - 1] = False  # the step from one state's vector to the next
        assert (np.diff(v)[inner] <= 0).all(), f"{kind}: P(>= t) increases with t somewhere"
        if kind != "tie":
            assert (v[off[:-1]] == 1).all(), f"{kind}: P(>= 0) != 1"
    # the maximum is at least the EV policy's, target by target
    best = target.target_table(rules, "target", cache_dir=cache_dir).values
    ev = target.target_table(rules, "ev", cache_dir=cache_dir).values
    assert (best >= ev - 1e-6).all()


@pytest.mark.parametrize("name", NAMES)
def test_ev_table_is_the_exact_distribution_tail(name, tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    dist = solver.exact_distribution(rules, cache_dir).distribution
    ev = target.target_table(rules, "ev", cache_dir=cache_dir)
    tail = np.cumsum(dist[::-1])[::-1]
    v = ev.vector(0, 0, False).astype(np.float64)
    b0 = rules.bonus_value if rules.threshold == 0 else 0
    n = min(len(v) + b0, len(tail))
    np.testing.assert_allclose(v[: n - b0], tail[b0:n], atol=1e-7)


def test_float32_costs_one_rounding(tiny_dir, cache_dir):
    """The stored entries are the float64 solve rounded once (no error carried between layers)."""
    for name in NAMES:
        rules = load_rules(str(tiny_dir / f"{name}.toml"))
        tab = target.target_table(rules, "target", cache_dir=cache_dir)
        exact = np.zeros(int(tab.off[-1]))
        target._solve_into(rules, tab.plan, "target", tab.off, exact, False)
        np.testing.assert_array_equal(tab.values, exact.astype(np.float32))
        assert np.abs(tab.values - exact).max() <= 6e-8


def test_cache_is_reused_and_a_damaged_file_is_rebuilt(tiny_dir, tmp_path, caplog):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    first = target.target_table(rules, "tie", cache_dir=tmp_path)
    assert not first.cached and first.path.exists()
    ref = np.array(first.values)  # a copy: the table maps the file damaged below
    target.clear_memo()
    again = target.target_table(rules, "tie", cache_dir=tmp_path)
    assert again.cached and isinstance(again.values, np.ndarray)
    np.testing.assert_array_equal(again.values, ref)
    raw = bytearray(first.path.read_bytes())
    raw[-3] ^= 0xFF
    first.path.write_bytes(bytes(raw))
    target.clear_memo()
    fixed = target.target_table(rules, "tie", cache_dir=tmp_path)
    assert not fixed.cached and "fails its checksum" in caplog.text
    np.testing.assert_array_equal(fixed.values, ref)


def test_tmax_cuts_vectors_without_changing_them(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_generala.toml"))
    whole = target.target_table(rules, "target", cache_dir=cache_dir)
    cut = target.target_table(rules, "target", tmax=40, cache_dir=cache_dir)
    for filled, upper, flag in _reachable(rules, whole):
        v = cut.vector(filled, upper, flag)
        assert len(v) <= 41
        np.testing.assert_array_equal(v, whole.vector(filled, upper, flag)[: len(v)])


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker"])
def test_solve_target_command(name, tiny_dir, tmp_path, capsys):
    path = str(tiny_dir / f"{name}.toml")
    rules = load_rules(path)
    fig = solver.exact_distribution(rules, tmp_path)
    brute = brute_target(rules, "target", 45)
    for t in (0, 20, 30, 45):
        assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--target", str(t), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)["target"]
        assert out["p_ev_play"] == pytest.approx(float(fig.distribution[t:].sum()), abs=1e-12)
        assert out["p_target_play"] >= out["p_ev_play"] - 1e-6
        assert out["p_target_play"] == pytest.approx(brute[(0, 0, False)][t], abs=1e-6)
    assert out["p_target_play"] > out["p_ev_play"] + 1e-3  # a target worth playing for
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--target", "30"]) == 0
    text = capsys.readouterr().out
    assert "P(score >= 30)" in text and "EV-optimal play" in text


# ---------------------------------------------------------------------------------------------
# the bots: exact play against the tables


@pytest.mark.parametrize("name", NAMES)
def test_target_bot_reaches_the_table_probability(name, tiny_dir, cache_dir, monkeypatch):
    from harness.game import registry

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    tab = target.target_table(rules, "target", cache_dir=cache_dir)
    fig = solver.exact_distribution(rules, cache_dir)
    mean = float(fig.distribution @ np.arange(len(fig.distribution)))
    for T in (int(mean), int(mean) + 8):
        bot = registry.make(f"solver:target={T}", rules)
        dist, _ = enumerate_bot(rules, bot)
        got = sum(p for s, p in dist.items() if s >= T)
        assert got == pytest.approx(tab.prob(0, 0, False, T), abs=2e-6)
        assert got >= float(fig.distribution[T:].sum()) - 1e-9


@pytest.mark.parametrize("name", NAMES)
def test_last_mover_wins_exactly_as_the_tie_table_says(name, tiny_dir, cache_dir, monkeypatch):
    """With the opponent finished, the bot's P(win) + 1/2 P(tie) is the tie-aware table's value."""
    from strategies.winprob import WinProbBot

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    full = (1 << rules.n_boxes) - 1
    tie = target.target_table(rules, "tie", cache_dir=cache_dir)
    bot = WinProbBot(rules)
    best = target.target_table(rules, "target", cache_dir=cache_dir)
    for B in (20, 30):

        def seats_of(filled, upper, flag, pts, B=B):
            return ([filled, full], [upper, 0], [flag, False], [pts, B])

        dist, _ = enumerate_bot(rules, bot, seats_of)
        score = sum(p * (1.0 if s > B else 0.5 if s == B else 0.0) for s, p in dist.items())
        assert score == pytest.approx(tie.prob(0, 0, False, B), abs=2e-6)
        # and the tie-aware objective is not the mean of the two target maxima
        two = 0.5 * (best.prob(0, 0, False, B) + best.prob(0, 0, False, B + 1))
        assert score <= two + 1e-9


def test_last_mover_choices_are_the_best_options(tiny_dir, cache_dir, monkeypatch):
    """Every keep and box of the finished-opponent case is an argmax computed here from the table
    with :func:`harness.game.turn.turn_policy` (an independent turn solver)."""
    from harness.game.turn import turn_policy
    from strategies.winprob import WinProbBot

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    d, ctx = rules.dice, context(rules)
    full = (1 << rules.n_boxes) - 1
    tie = target.target_table(rules, "tie", cache_dir=cache_dir)
    bot = WinProbBot(rules)
    rr = rules.rolls_per_turn - 1
    row = np.empty(rules.n_boxes, dtype=np.int16)
    checked = 0
    for filled, upper, flag in _reachable(rules, tie)[::7]:
        if filled == full:
            continue
        pts = upper + 3
        for B in (pts + 5, pts + 12):
            dd = B - pts
            seats = ([filled, full], [upper, 0], [flag, False], [pts, B])

            def box_values(r, first, filled=filled, upper=upper, flag=flag, dd=dd):
                allowed, extra = score_options(ctx, r, first, flag, filled, row)
                vals = {}
                for b in range(rules.n_boxes):
                    if (allowed >> b) & 1:
                        s = int(row[b])
                        u2 = upper + (s if rules.upper_face[b] > 0 else 0)
                        crossed = rules.bonus_value if upper < rules.threshold <= u2 else 0
                        nf = (s > 0) if b == rules.key_box else flag
                        vals[b] = tie.prob(filled | (1 << b), u2, nf, min(dd - s - extra - crossed, tie.tmax))
                return vals

            stop = {f: np.array([max(box_values(r, f).values()) for r in range(d.n_rolls)]) for f in (True, False)}
            _, _, values, _ = turn_policy(d, stop[True], stop[False], rr)
            rolls = np.arange(d.n_rolls)
            for left in range(rr, 0, -1):
                first = left == rr
                keep = bot.keep(_view(rules, filled, upper, flag, rolls, left, first, seats=seats))
                for r in rolls:
                    subs = d.sub_keep[d.sub_ptr[r] : d.sub_ptr[r + 1]]
                    ek = np.array([_keep_value(d, values[left - 1], k) for k in subs[:-1]] + [stop[first][r]])
                    mine = ek[list(subs).index(keep[r])]
                    assert mine == pytest.approx(ek.max(), abs=1e-6)
                    checked += 1
            from harness.game.scoring import score_options_batch

            n = d.n_rolls
            sc, al, ex = score_options_batch(
                ctx, rolls.astype(np.int16), np.full(n, False), np.full(n, flag), np.full(n, filled, dtype=np.int64)
            )
            box = bot.choose(
                _view(rules, filled, upper, flag, rolls, 0, False, seats=seats, options=sc, allowed=al, extra=ex)
            )
            for r in rolls:
                vals = box_values(int(r), False)
                assert vals[int(box[r])] == pytest.approx(max(vals.values()), abs=1e-9)
                checked += 1
    assert checked > 100


def _keep_value(d, roll_values, k):
    sl = slice(d.trans_ptr[k], d.trans_ptr[k + 1])
    return float(d.trans_prob[sl] @ roll_values[d.trans_roll[sl]])


def test_a_table_beyond_max_memory_is_built_on_disk(tiny_dir, tmp_path, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    ref = target.target_table(rules, "tie", cache_dir=cache_dir)
    scratch = tmp_path / "scratch"
    disk = target.target_table(
        rules, "tie", cache_dir=tmp_path / "c", max_bytes=0, scratch_dir=scratch, use_cache=False
    )
    np.testing.assert_array_equal(disk.values, ref.values)
    assert scratch.is_dir() and not list(scratch.iterdir())  # the scratch file is unlinked at once


def test_a_target_above_the_perfect_sheet_needs_no_new_table(tiny_dir, tmp_path):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    out = target.target_report(rules, 10_000, tmp_path)
    assert out["p_target_play"] == 0.0 and out["p_ev_play"] == 0.0
    assert out["tmax"] == target.default_tmax(rules)

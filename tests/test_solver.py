"""The exact solver against brute force, its cache, its figures, the odds, and every built-in rule set."""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache, cache
from itertools import combinations, product
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.exact import solver
from harness.commands import solve as solve_cmd
from harness.cli import main as cli_main
from harness.game.rules import load_rules
from harness.game.scoring import context, score_options
from harness.stats import PERCENTILES
from harness.game.strategy import TurnView

# ---------------------------------------------------------------------------------------------
# tiny rule sets: small enough for brute force over ordered dice and position subsets

TINY = {
    # upper bonus with a small threshold; a pair box and chance
    "tiny_bonus": """
name = "tiny_bonus"
dice = 2
rolls = 3
[settings]
upper_bonus_threshold = 6
upper_bonus_value = 10
[[boxes]]
name = "ones"
kind = "upper"
face = 1
[[boxes]]
name = "twos"
kind = "upper"
face = 2
[[boxes]]
name = "threes"
kind = "upper"
face = 3
[[boxes]]
name = "pair"
kind = "pairs"
count = 1
[[boxes]]
name = "chance"
kind = "chance"
""",
    # Yahtzee's key box: +20 per further yatzy while it holds a score, forced joker (run scores 7)
    "tiny_joker": """
name = "tiny_joker"
dice = 2
rolls = 2
key_box = "yatzy"
joker = true
extra_yatzy_bonus = 20
[settings]
upper_bonus_threshold = 5
upper_bonus_value = 5
[[boxes]]
name = "ones"
kind = "upper"
face = 1
[[boxes]]
name = "twos"
kind = "upper"
face = 2
[[boxes]]
name = "run"
kind = "run"
length = 2
value = 7
joker_value = 7
[[boxes]]
name = "yatzy"
kind = "yatzy"
value = 15
[[boxes]]
name = "chance"
kind = "chance"
""",
    # Generala's servida and a box that needs the key box to hold a score; no bonus
    "tiny_generala": """
name = "tiny_generala"
dice = 3
rolls = 2
key_box = "generala"
[settings]
upper_bonus_value = 0
[[boxes]]
name = "ones"
kind = "upper"
face = 1
[[boxes]]
name = "sixes"
kind = "upper"
face = 6
[[boxes]]
name = "straight"
kind = "run"
length = 3
value = 10
servida = 15
[[boxes]]
name = "generala"
kind = "yatzy"
value = 30
servida = 40
[[boxes]]
name = "double"
kind = "yatzy"
value = 60
servida = 60
requires_key = true
""",
    # forced order, three dice, three rolls
    "tiny_forced": """
name = "tiny_forced"
dice = 3
rolls = 3
[settings]
forced = true
forced_bonus_threshold = 5
upper_bonus_value = 10
[[boxes]]
name = "ones"
kind = "upper"
face = 1
[[boxes]]
name = "twos"
kind = "upper"
face = 2
[[boxes]]
name = "pair"
kind = "pairs"
count = 1
[[boxes]]
name = "chance"
kind = "chance"
""",
}


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rules")
    for name, text in TINY.items():
        (d / f"{name}.toml").write_text(text)
    return d


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("solver-cache")


def brute_force(rules, leaf=None, add=None) -> tuple[Any, dict[tuple[int, int, bool], Any]]:
    """Expected final total under optimal play, by enumerating ordered dice and kept positions.

    Independent of the solver's layout: the upper subtotal is not capped and the bonus is added at
    the end of the game from the final subtotal. Returns (expected total, {state: value}) where a
    state's value includes the bonus as decided at the end.

    Other objectives reuse the enumeration: ``leaf(upper)`` is the value of a finished sheet
    (default: its bonus) and ``add(value, points)`` the value of scoring ``points`` now and
    ``value`` after (default: their sum); values may be numpy vectors, maxima are elementwise
    (tests/test_target.py: the best chance of each target).
    """
    leaf = leaf or (lambda upper: float(rules.bonus_value if upper >= rules.threshold else 0))
    add = add or (lambda v, x: x + v)
    ctx = context(rules)
    n, nbx = rules.n_dice, rules.n_boxes
    full = (1 << nbx) - 1
    upper_of = rules.upper_face > 0
    rr = rules.rolls_per_turn - 1
    d = rules.dice
    row = np.empty(nbx, dtype=np.int16)
    memo: dict[tuple[int, int, bool], float] = {}

    def value(filled: int, upper: int, flag: bool) -> float:
        key = (filled, upper, flag)
        if key in memo:
            return memo[key]
        if filled == full:
            v = leaf(upper)
            memo[key] = v
            return v

        @cache
        def stop(dice: tuple[int, ...], first: bool) -> float:
            r = int(d.roll_index_of_faces(np.array(dice)))
            allowed, extra = score_options(ctx, r, first, flag, filled, row)
            scores = row.copy()
            best = -math.inf
            for b in range(nbx):
                if (allowed >> b) & 1:
                    s = int(scores[b])
                    nf = (s > 0) if b == rules.key_box else flag
                    nxt = value(filled | (1 << b), upper + (s if upper_of[b] else 0), nf)
                    best = np.maximum(best, add(nxt, s + extra))
            return best

        @cache
        def best(dice: tuple[int, ...], j: int, first: bool) -> float:
            v = stop(dice, first)
            if j == 0:
                return v
            for size in range(n):
                for pos in combinations(range(n), size):
                    v = np.maximum(v, reroll(tuple(dice[i] for i in pos), j))
            return v

        @cache
        def reroll(kept: tuple[int, ...], j: int) -> float:
            m = n - len(kept)
            tot = sum(best(tuple(sorted(kept + o)), j - 1, False) for o in product(range(1, 7), repeat=m))
            return tot / 6**m

        v = sum(best(tuple(sorted(o)), rr, True) for o in product(range(1, 7), repeat=n)) / 6**n
        memo[key] = v
        return v

    return value(0, 0, False), memo


@pytest.mark.parametrize("name", sorted(TINY))
def test_solver_matches_brute_force(name, tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    expected, states = brute_force(rules)
    sol = solver.solve(rules, cache_dir)
    assert sol.expected_score == pytest.approx(expected, abs=1e-9)
    # every state the brute force met: the solver's value plus a bonus already crossed
    checked = 0
    for (filled, upper, flag), v in states.items():
        if filled == (1 << rules.n_boxes) - 1:
            continue
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        assert sol.value(filled, upper, flag) + bonus == pytest.approx(v, abs=1e-9), (filled, upper, flag)
        checked += 1
    assert checked > 3


def test_brute_force_threshold_zero(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"), ["upper_bonus_threshold=0"])
    expected, _ = brute_force(rules)
    sol = solver.solve(rules, cache_dir)
    assert sol.expected_score == pytest.approx(expected, abs=1e-9)
    assert sol.states == 2**5  # the subtotal is dropped: the bonus is certain


# ---------------------------------------------------------------------------------------------
# the exact distribution against enumeration of the bot's own play


def _view(rules, filled, upper, flag, rolls, left, first, points=0, seats=None, **extra) -> TurnView:
    """Seat 0's view of every roll in one sheet state; ``points`` its total so far, ``seats`` what
    a table-seeing bot sees: (filled, upper, flag, totals) lists over the seats (None: alone)."""
    b = len(rolls)
    z = np.zeros(b, dtype=np.int64)
    totals = np.full((b, 1), points, np.int32)
    if seats is not None:
        totals = np.tile(np.array(seats[3], np.int32), (b, 1))
        extra["seats"] = tuple(np.tile(np.array(a), (b, 1)) for a in seats[:3])
    return TurnView(
        rules,
        0,
        0,
        0,
        0,
        z,
        z.astype(np.uint64),
        rolls.astype(np.int16),
        np.full(b, left, dtype=np.int16),
        np.full(b, first),
        np.full(b, filled, dtype=np.int64),
        np.full(b, upper, dtype=np.int16),
        np.full(b, flag),
        np.zeros((b, rules.n_boxes), np.int16),
        totals,
        np.zeros(b, np.int16),
        **extra,
    )


def enumerate_bot(rules, bot, seats_of=None) -> tuple[dict[int, float], float]:
    """Exact final-score distribution and bonus probability of the bot's play, by enumerating every
    roll and its decisions. The bot sees its total so far; ``seats_of(filled, upper, flag, points)``
    gives the (filled, upper, flag, totals) of the table it sees (None: it plays alone)."""
    from harness.game.scoring import score_options_batch

    ctx = context(rules)
    d = rules.dice
    rr = rules.rolls_per_turn - 1
    states = {(0, 0, False, 0): 1.0}
    upper_of = rules.upper_face > 0
    for _ in range(rules.n_boxes):
        nxt: dict[tuple[int, int, bool, int], float] = {}
        for (filled, upper, flag, score), p in states.items():
            pts = score + (rules.bonus_value if upper >= rules.threshold else 0)
            table = {"points": pts, "seats": seats_of(filled, upper, flag, pts) if seats_of else None}
            rolls = np.arange(d.n_rolls)
            mass = d.roll_prob.copy()
            fin = {True: np.zeros(d.n_rolls), False: np.zeros(d.n_rolls)}
            first = True
            for left in range(rr, 0, -1):
                keep = bot.keep(_view(rules, filled, upper, flag, rolls, left, first, **table))
                stop = keep == d.roll_as_keep[rolls]
                fin[first] += np.where(stop, mass, 0)
                new = np.zeros(d.n_rolls)
                for r in np.flatnonzero(~stop & (mass > 0)):
                    k = keep[r]
                    sl = slice(d.trans_ptr[k], d.trans_ptr[k + 1])
                    np.add.at(new, d.trans_roll[sl], mass[r] * d.trans_prob[sl])
                mass, first = new, False
            fin[first] += mass
            for fst, m in fin.items():
                n = d.n_rolls
                sc, al, ex = score_options_batch(
                    ctx, rolls.astype(np.int16), np.full(n, fst), np.full(n, flag), np.full(n, filled, dtype=np.int64)
                )
                box = bot.choose(
                    _view(rules, filled, upper, flag, rolls, 0, fst, options=sc, allowed=al, extra=ex, **table)
                )
                for r in np.flatnonzero(m > 0):
                    b = int(box[r])
                    s = int(sc[r, b])
                    nf = (s > 0) if b == rules.key_box else flag
                    up = upper + (s if upper_of[b] else 0)
                    key = (filled | (1 << b), up, nf, score + s + int(ex[r]))
                    nxt[key] = nxt.get(key, 0.0) + p * m[r]
        states = nxt
    out: dict[int, float] = {}
    p_bonus = 0.0
    for (_, upper, _, score), p in states.items():
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        out[score + bonus] = out.get(score + bonus, 0.0) + p
        p_bonus += p if bonus else 0.0
    return out, p_bonus


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced"])
def test_exact_distribution_matches_bot_play(name, tiny_dir, cache_dir, monkeypatch):
    from strategies.solver import SolverBot

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    fig = solver.exact_distribution(rules, cache_dir, use_cache=False)
    bot = SolverBot(rules)
    dist, p_bonus = enumerate_bot(rules, bot)
    ref = np.zeros(max(max(dist) + 1, len(fig.distribution)))
    for s, p in dist.items():
        ref[s] = p
    got = np.zeros(len(ref))
    got[: len(fig.distribution)] = fig.distribution
    np.testing.assert_allclose(got, ref, atol=1e-12)
    values = np.arange(len(ref))
    mean = float(ref @ values)
    assert fig.forward_mean == pytest.approx(fig.expected_score, abs=1e-9)
    assert mean == pytest.approx(fig.expected_score, abs=1e-9)
    assert fig.std == pytest.approx(math.sqrt(ref @ values**2 - mean**2), abs=1e-7)
    assert fig.p_bonus == pytest.approx(p_bonus, abs=1e-12)
    cdf = np.cumsum(ref)
    assert fig.percentiles == {str(q): int(np.searchsorted(cdf, q / 100 - 1e-12)) for q in PERCENTILES}


def test_moments_only_when_the_distribution_is_too_big(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    full = solver.exact_distribution(rules, cache_dir, use_cache=False)
    lean = solver.exact_distribution(rules, cache_dir, use_cache=False, max_bytes=0, max_disk_bytes=0)
    assert full.storage == "memory"
    assert lean.percentiles is None and lean.distribution is None
    assert lean.storage.startswith("skipped: the score windows need") and "--max-disk" in lean.storage
    assert lean.std == pytest.approx(full.std, abs=1e-9)
    assert lean.p_bonus == pytest.approx(full.p_bonus, abs=1e-12)
    assert lean.forward_mean == pytest.approx(full.expected_score, abs=1e-9)


@pytest.mark.parametrize("name", ["tiny_joker", "tiny_generala"])
def test_disk_backed_distribution_is_the_in_memory_one(name, tiny_dir, cache_dir, tmp_path):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    full = solver.exact_distribution(rules, cache_dir, use_cache=False)
    scratch = tmp_path / "scratch"
    disk = solver.exact_distribution(rules, cache_dir, use_cache=False, max_bytes=0, scratch_dir=scratch)
    assert disk.storage == "disk"
    assert np.array_equal(disk.distribution, full.distribution)
    assert disk.percentiles == full.percentiles and disk.std == full.std and disk.p_bonus == full.p_bonus
    assert list(scratch.iterdir()) == []  # the mapped files are unlinked as they are made


def test_full_disk_falls_back_to_the_moments(tiny_dir, cache_dir, tmp_path, monkeypatch, caplog):
    """Blocks are reserved before the mapping is written (no SIGBUS); a full disk is an ordinary
    error, and the figures fall back to the moments."""
    import errno

    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    full = solver.exact_distribution(rules, cache_dir, use_cache=False)

    def no_space(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(solver.os, "posix_fallocate", no_space)
    scratch = tmp_path / "scratch"
    with caplog.at_level("WARNING", logger="harness.exact.solver"):
        fig = solver.exact_distribution(rules, cache_dir, use_cache=False, max_bytes=0, scratch_dir=scratch)
    assert fig.percentiles is None and fig.storage.startswith("skipped: the scratch files")
    assert "No space left" in fig.storage and "computing the moments only" in caplog.text
    assert fig.std == pytest.approx(full.std, abs=1e-9) and fig.p_bonus == pytest.approx(full.p_bonus, abs=1e-12)
    assert list(scratch.iterdir()) == []


def test_cached_figures_without_percentiles_are_redone_once_allowed(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    lean = solver.exact_distribution(rules, cache_dir, max_bytes=0, max_disk_bytes=0)
    assert lean.percentiles is None
    again = solver.exact_distribution(rules, cache_dir, max_bytes=0, max_disk_bytes=0)
    assert again.cached and again.percentiles is None
    full = solver.exact_distribution(rules, cache_dir)
    assert not full.cached and full.percentiles is not None
    assert solver.exact_distribution(rules, cache_dir, max_bytes=0, max_disk_bytes=0).percentiles == full.percentiles


def test_p_bonus_without_a_bonus_or_with_a_sure_one(tiny_dir, cache_dir):
    no_bonus = load_rules(str(tiny_dir / "tiny_bonus.toml"), ["upper_bonus_value=0"])
    assert solver.exact_distribution(no_bonus, cache_dir, use_cache=False).p_bonus == 0.0
    sure = load_rules(str(tiny_dir / "tiny_bonus.toml"), ["upper_bonus_threshold=0"])
    assert solver.exact_distribution(sure, cache_dir, use_cache=False).p_bonus == 1.0


# ---------------------------------------------------------------------------------------------
# six dice: the kernels against the multiset turn kernel of harness.game.turn on a reduced maxi sheet

MINI_MAXI = """
name = "mini_maxi"
dice = 6
rolls = 3
[settings]
upper_bonus_threshold = 20
upper_bonus_value = 30
full_house_scoring = "sum"
[[boxes]]
name = "threes"
kind = "upper"
face = 3
[[boxes]]
name = "sixes"
kind = "upper"
face = 6
[[boxes]]
name = "three_pairs"
kind = "pairs"
count = 3
[[boxes]]
name = "tower"
kind = "tower"
[[boxes]]
name = "full_straight"
kind = "straight"
faces = [1, 2, 3, 4, 5, 6]
value = 21
[[boxes]]
name = "maxi_yatzy"
kind = "yatzy"
value = 100
"""


def reference_values(rules) -> float:
    """Optimal expected total by a plain DP over (filled, uncapped upper) with harness.game.turn's kernel."""
    from harness.game.scoring import score_options_batch
    from harness.game.turn import turn_policy

    ctx = context(rules)
    d = rules.dice
    nbx = rules.n_boxes
    full = (1 << nbx) - 1
    upper_of = rules.upper_face > 0
    memo: dict[tuple[int, int], float] = {}
    rolls = np.arange(d.n_rolls, dtype=np.int16)
    n = d.n_rolls

    def value(filled: int, upper: int) -> float:
        if (filled, upper) in memo:
            return memo[(filled, upper)]
        if filled == full:
            return float(rules.bonus_value if upper >= rules.threshold else 0)
        terms = []
        for first in (True, False):
            scores, allowed, extra = score_options_batch(
                ctx, rolls, np.full(n, first), np.zeros(n, dtype=bool), np.full(n, filled, dtype=np.int64)
            )
            best = np.full(d.n_rolls, -np.inf)
            for b in range(nbx):
                ok = ((allowed >> b) & 1).astype(bool)
                if not ok.any():
                    continue
                nxt = np.array(
                    [value(filled | (1 << b), upper + (s if upper_of[b] else 0)) for s in scores[:, b].tolist()]
                )
                best = np.where(ok, np.maximum(best, scores[:, b] + nxt), best)
            terms.append(best + extra)
        v = float(d.roll_prob @ turn_policy(d, terms[0], terms[1], rules.rolls_per_turn - 1)[0])
        memo[(filled, upper)] = v
        return v

    return value(0, 0)


def test_six_dice_kernels_match_the_reference_dp(tmp_path, cache_dir):
    path = tmp_path / "mini_maxi.toml"
    path.write_text(MINI_MAXI)
    rules = load_rules(str(path))
    assert rules.n_dice == 6
    sol = solver.solve(rules, cache_dir)
    assert sol.expected_score == pytest.approx(reference_values(rules), abs=1e-9)


# ---------------------------------------------------------------------------------------------
# the whole keep policy


def _all_states(sol):
    """(masks, flags, uppers) of every state with a turn to play."""
    plan, lay = sol.plan, sol.plan.layout
    masks, flags, uppers = [], [], []
    for m, f in zip(plan.item_mask.tolist(), plan.item_flag.tolist()):
        if m == plan.full_mask:
            continue
        um = lay.umask_of[m]
        for i in range(lay.nslot[um]):
            masks.append(m)
            flags.append(bool(f))
            uppers.append(int(lay.ulist[um, i]))
    return np.array(masks, dtype=np.int64), np.array(flags), np.array(uppers, dtype=np.int64)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced", "mini_maxi"])
def test_whole_policy_is_the_per_state_policy(name, tiny_dir, tmp_path):
    """Every state, roll and reroll stage: the table's keep is the bot's per-state keep (ties included)."""
    from harness.exact.kernels import solver as K

    path = tiny_dir / f"{name}.toml"
    if name == "mini_maxi":
        path = tmp_path / "mini_maxi.toml"
        path.write_text(MINI_MAXI)
    rules = load_rules(str(path))
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    codes = solver.policy_table(sol)
    assert codes.shape == solver.policy_shape(sol) and codes.dtype == np.uint8
    d = rules.dice
    # every (state, roll) pair, the rolls of one state together
    masks, flags, uppers = (np.repeat(a, d.n_rolls) for a in _all_states(sol))
    n = len(masks)
    rolls = np.tile(np.arange(d.n_rolls, dtype=np.int16), n // d.n_rolls)
    lay, dk, ctx = sol.plan.layout, sol.plan.dice, context(rules)
    for j in range(1, rules.rolls_per_turn):
        stage = np.full(n, j, dtype=np.int64)
        lazy = np.empty(n, dtype=np.int32)
        whole = np.empty(n, dtype=np.int32)
        tags = np.full(64, -1, dtype=np.int64)  # a small cache: lines are evicted and worked out again
        K.policy_keeps(
            ctx,
            lay,
            dk,
            sol.values,
            tags,
            np.zeros((64, rules.rolls_per_turn - 1, d.n_rolls), dtype=np.uint8),
            masks,
            flags,
            uppers,
            rolls,
            stage,
            lazy,
        )
        K.table_keeps(lay, dk, codes, masks, flags, uppers, rolls, stage, whole)
        np.testing.assert_array_equal(whole, lazy)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_generala", "tiny_joker"])
def test_soft_keeps_draw_from_the_exact_action_values(name, tiny_dir, tmp_path, monkeypatch):
    """temperature > 0: the cached kernel's draw equals a softmax over the keep values that
    harness.game.turn computes independently (the bot's path for turns longer than the table's)."""
    from strategies import solver as solver_bot

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    monkeypatch.setattr(solver_bot, "VALUE_LINES", 16)  # lines are evicted and worked out again
    solver.clear_memo()
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    bot = solver_bot.SolverBot(rules, temperature=1.5)
    bot.prepare()
    masks, flags, uppers = _all_states(bot.solution)
    n, rr = len(masks), rules.rolls_per_turn - 1
    rng = np.random.default_rng(3)
    for left in range(1, rr + 1):
        first = left == rr
        rolls = rng.integers(0, rules.dice.n_rolls, n).astype(np.int16)
        unif = rng.random((n, 2))
        got = bot._table_keeps(masks, flags, uppers, rolls, np.full(n, left, dtype=np.int16), np.full(n, first), unif)
        ref = [
            bot._long_turn_keep(int(masks[i]), bool(flags[i]), int(uppers[i]), int(rolls[i]), left, first, unif[i])
            for i in range(n)
        ]
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced", "mini_maxi"])
@pytest.mark.parametrize("lines", [4, 1 << 12])
def test_soft_keeps_lines_are_the_per_state_plans(name, lines, tiny_dir, tmp_path):
    """temperature > 0: each cache line holds state_plan's values of its state to the bit (a
    keep's up to the keeps smaller than a roll, one row of stop values without servida), and
    every draw (blunders included) is softmax_pick's over them; with 4 lines lines are evicted."""
    from harness.exact.kernels import solver as K

    path = tiny_dir / f"{name}.toml"
    if name == "mini_maxi":
        path = tmp_path / "mini_maxi.toml"
        path.write_text(MINI_MAXI)
    rules = load_rules(str(path))
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    lay, dk, ctx, V, d = sol.plan.layout, sol.plan.dice, context(rules), sol.values, rules.dice
    rr = rules.rolls_per_turn - 1
    masks, flags, uppers = _all_states(sol)
    rng = np.random.default_rng(7)
    pick = rng.integers(0, len(masks), 3 * len(masks))  # states met several times, in any order
    masks, flags, uppers = masks[pick], flags[pick], uppers[pick]
    b = len(masks)
    tags = np.full(lines, -1, dtype=np.int64)
    ev = np.zeros((lines, rr, dk.n_small))
    sv = np.zeros((lines, 2 if lay.servida else 1, d.n_rolls))
    work = K.state_work(ctx, lay, dk)
    for blunder in (0.0, 0.2):
        for left in range(1, rr + 1):
            first = np.full(b, left == rr)
            rolls = rng.integers(0, d.n_rolls, b).astype(np.int64)
            unif = rng.random((b, 2))
            out = np.empty(b, dtype=np.int32)
            stage = np.full(b, left, dtype=np.int64)
            K.soft_keeps(
                ctx, lay, dk, V, tags, ev, sv, masks, flags, uppers, rolls, stage, first, 1.5, blunder, unif, out
            )
            for g in range(b):
                r = int(rolls[g])
                lo, hi = d.sub_ptr[r], d.sub_ptr[r + 1]
                if unif[g, 0] < blunder:
                    assert out[g] == d.sub_keep[lo + min(int(unif[g, 1] * (hi - lo)), hi - lo - 1)]
                    continue
                u = min(int(uppers[g]), lay.threshold)
                K.state_plan(ctx, lay, dk, V, masks[g], int(flags[g]), u, work, np.int64(-1))
                stop_f, stop_l, Es = work[10], work[11], work[12]
                vals = np.append(Es[left, d.sub_keep[lo : hi - 1]], (stop_f if left == rr else stop_l)[r])
                assert out[g] == d.sub_keep[lo + K.softmax_pick(vals, hi - lo, 1.5, unif[g, 1])]
            for line in np.flatnonzero(tags >= 0):
                i = int(tags[line])
                g = next(g for g in range(b) if sol.index(int(masks[g]), int(uppers[g]), bool(flags[g])) == i)
                u = min(int(uppers[g]), lay.threshold)
                K.state_plan(ctx, lay, dk, V, masks[g], int(flags[g]), u, work, np.int64(-1))
                stop_f, stop_l, Es = work[10], work[11], work[12]
                np.testing.assert_array_equal(ev[line], Es[1:, : dk.n_small])
                np.testing.assert_array_equal(sv[line, 0], stop_l)
                np.testing.assert_array_equal(sv[line, -1], stop_f)


def test_whole_policy_cache(tiny_dir, tmp_path, caplog, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    assert solver.policy_table(sol, compute=False) is None  # not cached, not to be computed
    codes = solver.policy_table(sol)
    path = solver.cache_path(rules, tmp_path).with_suffix(".policy.bin")
    assert path.is_file()
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    np.testing.assert_array_equal(solver.policy_table(sol, compute=False), codes)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    with caplog.at_level("WARNING", logger="harness.exact.solver"):
        assert solver.policy_table(sol, compute=False) is None
    assert "checksum" in caplog.text
    np.testing.assert_array_equal(solver.policy_table(sol), codes)  # rebuilt and written again
    assert path.read_bytes()[4096:] == codes.tobytes()
    # none beyond the size limit (maxi's would be 52 GB)
    solver.clear_memo()
    monkeypatch.setattr(solver, "POLICY_MAX_BYTES", codes.nbytes - 1)
    assert solver.policy_table(solver.solve(rules, tmp_path)) is None


def test_solver_bot_takes_the_whole_policy_for_long_runs(tiny_dir, tmp_path, monkeypatch):
    """A run announced long enough computes the whole policy before the fork; the games are the same."""
    from harness.game.loop import play
    from harness.game.registry import make
    from strategies import solver as solver_bot

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(solver_bot, "FULL_POLICY_GAMES", 500)
    solver.clear_memo()
    path = tiny_dir / "tiny_generala.toml"
    rules = load_rules(str(path))
    lazy = make("solver", rules)
    lazy.prepare()
    assert lazy._policy is None
    games = np.arange(300, dtype=np.int64)
    before = play(rules, [lazy, lazy], games, 5).to_frame()
    out = tmp_path / "run"
    assert (
        cli_main(
            [
                "run",
                "--rules",
                str(path),
                "--seats",
                "solver,solver",
                "--games",
                "250",
                "--seed",
                "5",
                "--workers",
                "1",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert solver.cache_path(rules).with_suffix(".policy.bin").is_file()  # 250 games x 2 seats >= 500
    whole = make("solver", rules)
    whole.prepare()  # the policy is on disk now: every solver bot takes it
    assert whole._policy is not None
    after = play(rules, [whole, whole], games, 5).to_frame()
    assert before.equals(after)


# ---------------------------------------------------------------------------------------------
# the disk cache


def test_cache_is_reused_and_a_damaged_file_is_rebuilt(tiny_dir, tmp_path, caplog):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    solver.clear_memo()
    first = solver.solve(rules, tmp_path)
    path = solver.cache_path(rules, tmp_path)
    assert not first.cached and path.is_file() and path.parent == tmp_path
    assert rules.digest[:40] in path.name
    solver.clear_memo()
    again = solver.solve(rules, tmp_path)
    assert again.cached
    np.testing.assert_array_equal(again.values, first.values)

    good = path.read_bytes()

    def rebuilt(data: bytes, why: str) -> None:
        path.write_bytes(data)
        solver.clear_memo()
        caplog.clear()
        with caplog.at_level("WARNING", logger="harness.exact.solver"):
            sol = solver.solve(rules, tmp_path)
        assert not sol.cached, "a damaged cache file was trusted"
        np.testing.assert_array_equal(sol.values, first.values)
        assert why in caplog.text
        data = path.read_bytes()  # written again, whole (the header's timing may differ)
        assert len(data) == len(good) and data[4096:] == good[4096:]
        assert json.loads(data[:4096])["crc32"] == json.loads(good[:4096])["crc32"]

    flipped = bytearray(good)
    flipped[-5] ^= 0x40  # one bit of one value
    rebuilt(bytes(flipped), "checksum")
    rebuilt(good[:-8], "has")  # truncated: one value short
    rebuilt(good[:100], "truncated header")
    rebuilt(b"\0" * len(good), "unusable")
    other = good.replace(rules.digest.encode(), ("0" * 64).encode())
    rebuilt(other, "other rules")
    stale = good.replace(b'"format": 1', b'"format": 0')
    rebuilt(stale, "format")


def test_a_mapped_table_is_checked_once_and_again_when_its_file_changes(tiny_dir, tmp_path, monkeypatch, caplog):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    values = np.arange(1000, dtype=np.float32)
    path = tmp_path / "table.bin"
    solver.save_table(path, rules, values, {})
    checks = []
    crc = solver._crc
    monkeypatch.setattr(solver, "_crc", lambda a: checks.append(1) or crc(a))

    def load():
        got = solver.load_table(path, rules, 1000, np.float32, mmap=True)
        return None if got is None else np.array(got[0])

    np.testing.assert_array_equal(load(), values)
    assert len(checks) == 1 and not solver._stamp_path(path).exists()  # just written: no stamp yet
    old = path.stat().st_mtime_ns - 10 * solver._STAMP_AGE_NS
    os.utime(path, ns=(old, old))
    np.testing.assert_array_equal(load(), values)
    assert len(checks) == 2 and solver._stamp_path(path).exists()
    np.testing.assert_array_equal(load(), values)
    assert len(checks) == 2, "a stamped table was read again"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.write_bytes(bytes(data))
    os.utime(path, ns=(old + 1, old + 1))  # the same size and inode, another time
    with caplog.at_level("WARNING", logger="harness.exact.solver"):
        assert load() is None
    assert len(checks) == 3 and "checksum" in caplog.text
    os.utime(path, ns=(old, old))  # the stamp's time again, but unfixed: a stamp is not a checksum
    assert load() is not None and len(checks) == 3  # documented trade-off: identity, not content


def test_cache_directory_from_environment(tiny_dir, tmp_path, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "env"))
    assert solver.cache_path(rules).parent == tmp_path / "env"
    monkeypatch.delenv("YATZY_HARNESS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert solver.cache_path(rules).parent == tmp_path / "xdg" / "yatzy-harness"
    solver.clear_memo()
    solver.solve(rules)
    assert solver.cache_path(rules).is_file()
    assert not list((tmp_path / "xdg" / "yatzy-harness").glob("*.tmp"))


def test_unwritable_cache_only_warns(tiny_dir, tmp_path, caplog):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    solver.clear_memo()
    with caplog.at_level("WARNING", logger="harness.exact.solver"):
        sol = solver.solve(rules, blocker / "cache")
    assert not sol.cached and "cannot write" in caplog.text


def test_figures_cache_survives_a_damaged_file(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_generala.toml"))
    fresh = solver.exact_distribution(rules, cache_dir)
    again = solver.exact_distribution(rules, cache_dir)
    assert again.cached and again.percentiles == fresh.percentiles and again.std == fresh.std
    solver._figures_path(rules, cache_dir).write_text("{ not json")
    redone = solver.exact_distribution(rules, cache_dir)
    assert redone.std == fresh.std and redone.percentiles == fresh.percentiles


# ---------------------------------------------------------------------------------------------
# one-turn odds


def test_odds_reproduce_seed_001():
    odds = solver.one_turn_odds(load_rules("scandinavian"))
    assert round(100 * odds["yatzy"], 1) == 4.6
    assert round(100 * odds["large_straight"], 1) == 19.7
    assert round(100 * odds["full_house"], 1) == 36.3
    assert odds["yatzy"] == pytest.approx(0.0460, abs=5e-5)
    assert odds["chance"] == 1.0
    assert "ones" not in odds and len(odds) == 9


def test_odds_command(capsys):
    assert cli_main(["odds", "scandinavian", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(100 * out["large_straight"], 1) == 19.7
    assert cli_main(["odds", "standard", "--set", "include_pairs=false"]) == 2  # standard has no pairs
    assert cli_main(["odds", "generala"]) == 0
    text = capsys.readouterr().out
    assert "double_generala" in text and "%" in text


# ---------------------------------------------------------------------------------------------
# the solve command


def test_solve_command_json_and_text(tiny_dir, tmp_path, capsys):
    path = str(tiny_dir / "tiny_bonus.toml")
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"expected_score", "std", "p_bonus", "percentiles", "states", "seconds"}
    assert set(out["percentiles"]) == {"1", "5", "25", "50", "75", "95", "99"}
    fig = solver.exact_distribution(load_rules(path), tmp_path)
    assert out["expected_score"] == fig.expected_score and out["std"] == fig.std
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "upper_bonus_value=20"]) == 0
    text = capsys.readouterr().out
    assert "expected score" in text and "percentiles" in text
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "nonsense=1"]) == 2
    # saved rolls are not in the solved state, and the output says so
    assert "note" not in out
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "saved_rolls=true", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["note"] == solve_cmd.SAVED_ROLLS_NOTE
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "saved_rolls=true"]) == 0
    assert "saved_rolls is not part of the solved state" in capsys.readouterr().out


def test_solve_cli_says_no_upper_bonus_for_rules_without_one(tiny_dir, tmp_path, capsys):
    """Generala has no upper bonus (value 0): no "bonus 0.0000 %" line, the JSON keeps p_bonus."""
    path = str(tiny_dir / "tiny_bonus.toml")
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "upper_bonus_value=0"]) == 0
    text = capsys.readouterr().out
    assert "no upper bonus" in text and "bonus           0" not in text and " % " not in text.split("bonus")[1][:25]
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "upper_bonus_value=0", "--json"]) == 0
    assert "p_bonus" in json.loads(capsys.readouterr().out)
    assert cli_main(["solve", path, "--cache-dir", str(tmp_path), "--set", "upper_bonus_value=20"]) == 0
    assert "no upper bonus" not in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# every built-in rule set (maxi: see benchmarks/BENCHMARKS.md, about an hour of CPU)

BUILTIN = {
    "standard": 245.870775,
    "yahtzee": 254.587729,
    "scandinavian": 248.439989,
    "forced": 150.216797,
    "generala": 159.682917,
}


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_rule_sets_solve(name):
    rules = load_rules(name)
    sol = solver.solve(rules)  # the user cache: shared with the bot's contract tests
    assert round(sol.expected_score, 6) == BUILTIN[name]
    assert sol.value(0, 0) + sol.plan.bonus0 == sol.expected_score


def test_maxi_layout_fits():
    rules = load_rules("maxi")
    plan = solver.build_plan(rules)
    assert plan.n_states == 56_131_584  # 2**14 lower masks x 3,426 reachable (upper boxes, subtotal)
    assert plan.layout.threshold == 84


# ---------------------------------------------------------------------------------------------
# one cache directory for solve, run and replay


def test_run_finds_the_table_solve_wrote_with_cache_dir(tiny_dir, tmp_path, monkeypatch, capsys):
    """``solve --cache-dir X`` then ``run --cache-dir X`` (or ``cache_dir = X`` in the run config)
    loads the table instead of solving again."""
    from harness import cli

    tiny = str(tiny_dir / "tiny_bonus.toml")
    rules = load_rules(tiny)
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(elsewhere))  # also undoes what --cache-dir sets
    solver.clear_memo()
    assert cli_main(["solve", tiny, "--cache-dir", str(cache), "--no-distribution", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is False
    table = solver.cache_path(rules, cache)
    stamp = table.stat().st_mtime_ns

    def no_solving(*args, **kw):
        raise AssertionError("solved again instead of loading the cached table")

    monkeypatch.setattr(solver, "solve_values", no_solving)
    flags = ["--rules", tiny, "--seats", "solver,timeout", "--games", "20", "--workers", "1", "--quiet"]
    solver.clear_memo()
    assert cli.main(["run", *flags, "--cache-dir", str(cache), "--out", str(tmp_path / "a")]) == 0
    conf = tmp_path / "c.toml"
    conf.write_text(
        f'rules = "{tiny}"\nseats = ["solver", "timeout"]\ngames = 20\nworkers = 1\ncache_dir = "{cache}"\n'
    )
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(elsewhere))
    solver.clear_memo()
    assert cli.main(["run", str(conf), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    solver.clear_memo()
    assert cli.main(["replay", "--run", str(tmp_path / "b"), "--game", "3", "--cache-dir", str(cache)]) == 0
    # compare and calibrate take the same option (a solve would raise AssertionError out of main)
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(elsewhere))
    solver.clear_memo()
    plain = tmp_path / "plain.toml"  # no cache_dir key: only the flag can point at the table
    plain.write_text(f'rules = "{tiny}"\nseats = ["solver", "timeout"]\ngames = 20\nworkers = 1\n')
    assert (
        cli.main(
            [
                "compare",
                str(plain),
                str(plain),
                "--games",
                "20",
                "--out",
                str(tmp_path / "cmp"),
                "--quiet",
                "--cache-dir",
                str(cache),
            ]
        )
        == 2
    )  # identical sides, 20 games: too few for a verdict
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(elsewhere))
    solver.clear_memo()
    code = cli.main(
        [
            "calibrate",
            "--rules",
            tiny,
            "--strategy",
            "solver",
            "--param",
            "blunder",
            "--target-mean",
            "1",
            "--lo",
            "0",
            "--hi",
            "1",
            "--games",
            "20",
            "--max-evals",
            "3",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "cal"),
            "--json",
            "--cache-dir",
            str(cache),
        ]
    )
    assert code in (0, 2)  # whether 1 point is bracketed does not matter here; no solve happened
    assert table.stat().st_mtime_ns == stamp and not elsewhere.exists()
    # without it, the table is not found: the run would solve (here: refuse to)
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(elsewhere))
    solver.clear_memo()
    with pytest.raises(AssertionError, match="solved again"):
        cli.main(["run", *flags, "--out", str(tmp_path / "c")])


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--max-memory", "-1"], "argument --max-memory: must be more than 0, got -1"),
        (["--max-memory", "0"], "argument --max-memory: must be more than 0, got 0"),
        (["--max-disk", "-1"], "argument --max-disk: must be at least 0, got -1"),
        (["--max-disk", "inf"], "argument --max-disk: expected a finite number, got 'inf'"),
    ],
)
def test_solve_refuses_sizes_that_are_not_sizes(capsys, argv, message):
    assert cli_main(["solve", "scandinavian", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("n_dice,rerolls", [(2, 1), (5, 2), (6, 2)])
def test_the_one_pass_keeps_of_wide_turns_are_the_face_by_face_keeps(n_dice, rerolls):
    """From WIDE slots on, turn_args and turn_values take each keep's sub-keeps in one pass per length
    of its face list; their values and keeps, ties included, are those of the face-by-face loops of
    narrow turns."""
    from harness.exact.kernels import solver as K
    from harness.game.dice import dice

    dk = solver.dice_tables(dice(n_dice), rerolls)
    n_rolls, n_keeps, ns = len(dk.roll_prob), dk.add.shape[0], dk.n_small
    assert set(dk.n_faces) == set(range(min(n_dice, 6) + 1))  # every length of face list is met
    nu = K.WIDE + 5
    rng = np.random.default_rng(n_dice)
    stop_f, stop_l = rng.integers(0, 4, (2, n_rolls, nu)) / 4.0  # four levels: ties everywhere
    wide = np.empty((n_keeps, nu)), np.empty((rerolls, n_rolls, nu), np.int32)
    K.turn_args(dk, nu, stop_f, stop_l, wide[0], np.empty((ns, nu)), np.empty((ns, nu), np.int32), wide[1])
    for i in range(nu):
        E, args = np.empty((n_keeps, 1)), np.empty((rerolls, n_rolls, 1), np.int32)
        K.turn_args(
            dk,
            1,
            stop_f[:, i : i + 1].copy(),
            stop_l[:, i : i + 1].copy(),
            E,
            np.empty((ns, 1)),
            np.empty((ns, 1), np.int32),
            args,
        )
        assert np.array_equal(E[:, 0], wide[0][:, i]) and np.array_equal(args[:, :, 0], wide[1][:, :, i])
    saved = np.empty((rerolls + 1, n_keeps, nu)), np.empty((rerolls + 1, ns, nu))
    values = np.empty((n_keeps, nu))
    K.turn_values(dk, nu, stop_f, stop_l, values, np.empty((ns, nu)), *saved)
    assert np.array_equal(values, wide[0])
    for i in range(nu):
        one = np.empty((rerolls + 1, n_keeps, 1)), np.empty((rerolls + 1, ns, 1))
        K.turn_values(
            dk,
            1,
            stop_f[:, i : i + 1].copy(),
            stop_l[:, i : i + 1].copy(),
            np.empty((n_keeps, 1)),
            np.empty((ns, 1)),
            *one,
        )
        assert np.array_equal(one[0][1:, :, 0], saved[0][1:, :, i])
        assert np.array_equal(one[1][1:, :, 0], saved[1][1:, :, i])


# ---------------------------------------------------------------------------------------------
# the value tables shipped with the package


@pytest.mark.parametrize("name", solver.SHIPPED_RULES)
def test_shipped_tables_are_a_fresh_solve_bit_for_bit(name):
    """A shipped table holds the current rules' digest and the values a solve gives, to the bit
    (regenerate after a change: python -c "from harness.exact.solver import write_shipped; write_shipped('NAME')")."""
    rules = load_rules(name)
    path = solver.shipped_path(rules)
    assert path.is_file(), f"no shipped table for {name}'s digest {rules.digest[:12]}: regenerate it"
    assert sorted(p.name for p in solver.SHIPPED.glob(f"{name}-*.bin")) == [path.name], "stale tables"
    shipped, _ = solver.load_table(path, rules, solver.build_plan(rules).n_states)
    solver.clear_memo()
    fresh = solver.solve(rules, use_cache=False)
    assert shipped.tobytes() == np.ascontiguousarray(fresh.values).tobytes()


def test_a_shipped_table_saves_the_solve(tmp_path, monkeypatch):
    """An empty cache: solve() takes the package's table (no solve), writes it to the cache."""
    rules = load_rules("forced")
    solver.clear_memo()
    monkeypatch.setattr(solver, "solve_values", lambda *a, **k: pytest.fail("solved a shipped rule set"))
    assert solver.is_solved(rules, tmp_path)
    sol = solver.solve(rules, tmp_path)
    assert sol.cached and solver.cache_path(rules, tmp_path).is_file()
    assert sol.expected_score == pytest.approx(150.216797, abs=1e-6)


def test_a_first_solve_compiles_the_forward_pass_in_a_helper(tiny_dir, cache_dir, monkeypatch):
    """exact_distribution of a rule set not solved yet, the forward pass's kernels not in numba's
    cache: a helper compiles them (solver._warm_forward) while the parent solves, and the parent
    waits for it before its pass; a solved table's figures fork nothing."""
    from harness.util import jit

    forked: list[object] = []
    awaited: list[bool] = []
    monkeypatch.setattr(jit, "in_cache", lambda kernel: False)
    monkeypatch.setattr(jit, "fork_helper", lambda target, *a: forked.append(target) or True)
    monkeypatch.setattr(jit, "await_helper", lambda: awaited.append(True))
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    fig = solver.exact_distribution(rules, cache_dir / "helper")
    assert forked == [solver._warm_forward] and awaited
    forked.clear()
    assert solver.exact_distribution(rules, cache_dir / "helper").forward_mean == fig.forward_mean
    assert forked == []


def test_the_forward_helper_compiles_on_forced_yatzys_shipped_table(monkeypatch):
    """What the helper runs (in this process here: its kernels load from numba's cache), _best_sub
    by the types turn_values passes it among them."""
    from harness.exact.kernels import solver as K
    from harness.util import jit, progress

    in_cache = jit.in_cache
    monkeypatch.setattr(jit, "in_cache", lambda kernel: kernel is not K._best_sub and in_cache(kernel))

    was = progress.enabled()
    try:
        solver._warm_forward()
    finally:
        progress.enable(was)
    assert solver.shipped_path(load_rules("forced")).is_file()


@pytest.mark.parametrize("rr", [1, 2])
def test_a_batch_of_turn_keeps_is_each_rows_own_keeps(rr):
    """harness.game.turn.batch_keeps: every row's keeps as that row alone gets them, the rows equal
    to the row before (copied) and the others (worked out) alike, ties included."""
    from harness.game.turn import batch_keeps

    d = load_rules("scandinavian").dice
    gen = np.random.default_rng(5)
    tf = np.round(gen.random((12, d.n_rolls)) * 4) / 2  # halves: many ties
    tl = np.round(gen.random((12, d.n_rolls)) * 4) / 2
    tf[4:7], tl[4:7] = tf[3], tl[3]
    out = batch_keeps(d, tf, tl, rr)
    assert out.shape == (12, rr, d.n_rolls)
    for g in range(12):
        assert np.array_equal(out[g], batch_keeps(d, tf[g : g + 1], tl[g : g + 1], rr)[0])
    assert np.array_equal(out[4], out[3]) and np.array_equal(out[6], out[3])

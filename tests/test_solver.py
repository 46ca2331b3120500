"""The exact solver against brute force, its cache, its figures, the odds, and every built-in rule set."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from itertools import combinations, product
from pathlib import Path

import numpy as np
import pytest

from harness import solver
from harness.cli import main as cli_main
from harness.rules import load_rules
from harness.scoring import context, score_options
from harness.strategy import TurnView

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


def brute_force(rules) -> tuple[float, dict[tuple[int, int, bool], float]]:
    """Expected final total under optimal play, by enumerating ordered dice and kept positions.

    Independent of the solver's layout: the upper subtotal is not capped and the bonus is added at
    the end of the game from the final subtotal. Returns (expected total, {state: value}) where a
    state's value includes the bonus as decided at the end.
    """
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
            v = float(rules.bonus_value if upper >= rules.threshold else 0)
            memo[key] = v
            return v

        @lru_cache(maxsize=None)
        def stop(dice: tuple[int, ...], first: bool) -> float:
            r = int(d.roll_index_of_faces(np.array(dice)))
            allowed, extra = score_options(ctx, r, first, flag, filled, row)
            scores = row.copy()
            best = -math.inf
            for b in range(nbx):
                if (allowed >> b) & 1:
                    s = int(scores[b])
                    nf = (s > 0) if b == rules.key_box else flag
                    best = max(best, s + value(filled | (1 << b), upper + (s if upper_of[b] else 0), nf))
            return best + extra

        @lru_cache(maxsize=None)
        def best(dice: tuple[int, ...], j: int, first: bool) -> float:
            v = stop(dice, first)
            if j == 0:
                return v
            for size in range(n):
                for pos in combinations(range(n), size):
                    v = max(v, reroll(tuple(dice[i] for i in pos), j))
            return v

        @lru_cache(maxsize=None)
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


def _view(rules, filled, upper, flag, rolls, left, first, **extra) -> TurnView:
    b = len(rolls)
    z = np.zeros(b, dtype=np.int64)
    return TurnView(rules, 0, 0, 0, 0, z, z.astype(np.uint64), rolls.astype(np.int16),
                    np.full(b, left, dtype=np.int16), np.full(b, first), np.full(b, filled, dtype=np.int64),
                    np.full(b, upper, dtype=np.int16), np.full(b, flag), np.zeros((b, rules.n_boxes), np.int16),
                    np.zeros((b, 1), np.int32), np.zeros(b, np.int16), **extra)


def enumerate_bot(rules, bot) -> tuple[dict[int, float], float]:
    """Exact final-score distribution and bonus probability of the bot's play, by enumerating every
    roll and its decisions."""
    from harness.scoring import score_options_batch

    ctx = context(rules)
    d = rules.dice
    rr = rules.rolls_per_turn - 1
    states = {(0, 0, False, 0): 1.0}
    upper_of = rules.upper_face > 0
    for _ in range(rules.n_boxes):
        nxt: dict[tuple[int, int, bool, int], float] = {}
        for (filled, upper, flag, score), p in states.items():
            rolls = np.arange(d.n_rolls)
            mass = d.roll_prob.copy()
            fin = {True: np.zeros(d.n_rolls), False: np.zeros(d.n_rolls)}
            first = True
            for left in range(rr, 0, -1):
                keep = bot.keep(_view(rules, filled, upper, flag, rolls, left, first))
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
                sc, al, ex = score_options_batch(ctx, rolls.astype(np.int16), np.full(n, fst),
                                                 np.full(n, flag), np.full(n, filled, dtype=np.int64))
                box = bot.choose(_view(rules, filled, upper, flag, rolls, 0, fst, options=sc, allowed=al, extra=ex))
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
    assert fig.percentiles == {q: int(np.searchsorted(cdf, int(q) / 100 - 1e-12)) for q in solver.PERCENTILES}


def test_p_bonus_without_a_bonus_or_with_a_sure_one(tiny_dir, cache_dir):
    no_bonus = load_rules(str(tiny_dir / "tiny_bonus.toml"), ["upper_bonus_value=0"])
    assert solver.exact_distribution(no_bonus, cache_dir, use_cache=False).p_bonus == 0.0
    sure = load_rules(str(tiny_dir / "tiny_bonus.toml"), ["upper_bonus_threshold=0"])
    assert solver.exact_distribution(sure, cache_dir, use_cache=False).p_bonus == 1.0

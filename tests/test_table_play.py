"""Whole-game seat players: the solver's T=0 decision tables and the kernel that plays from them
(harness.exact.solver.box_table / policy_table, harness.exact.kernels.play), and the random bot's."""

from __future__ import annotations

import os
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from harness.exact import solver
from harness.exact.kernels import solver as K
from harness.game import loop
from harness.game.registry import make
from harness.game.rules import load_rules
from harness.game.scoring import context, score_options_batch
from tests.test_solver import MINI_MAXI, TINY, _all_states

#: rule sets whose every state is compared; the others are sampled
EVERY_STATE = {"forced", "tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced"}


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rules")
    for name, text in {**TINY, "mini_maxi": MINI_MAXI}.items():
        (d / f"{name}.toml").write_text(text)
    return d


def _rules(name: str, rules_dir: Path):
    path = rules_dir / f"{name}.toml"
    return load_rules(str(path) if path.is_file() else name)


@pytest.mark.parametrize(
    "name", ["forced", "generala", "standard", "tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced", "mini_maxi"]
)
def test_box_table_is_the_bots_box_choice(name, rules_dir, tmp_path):
    """Every roll of every state of ``forced`` and the tiny rule sets (sampled states of the
    others), on the first roll and after a reroll: the table's box is the bot's
    :func:`choose_boxes` at T = 0, ties included."""
    rules = _rules(name, rules_dir)
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    boxes = solver.box_table(sol)
    assert boxes.shape == solver.boxes_shape(sol) and boxes.dtype == np.uint8
    masks, flags, uppers = _all_states(sol)
    if name not in EVERY_STATE:
        pick = np.random.default_rng(7).choice(len(masks), size=min(len(masks), 1500), replace=False)
        masks, flags, uppers = masks[pick], flags[pick], uppers[pick]
    d, lay, ctx = rules.dice, sol.plan.layout, context(rules)
    n = len(masks) * d.n_rolls
    m, f, u = (np.repeat(a, d.n_rolls) for a in (masks, flags, uppers))
    rolls = np.tile(np.arange(d.n_rolls, dtype=np.int16), len(masks))
    idx = np.array([sol.index(int(a), int(c), bool(b)) for a, b, c in zip(masks, flags, uppers)]).repeat(d.n_rolls)
    for first in (False, True):
        opts, allowed, _ = score_options_batch(ctx, rolls, np.full(n, first), f.astype(bool), m)
        want = np.empty(n, dtype=np.int64)
        K.choose_boxes(lay, sol.values, m, f.astype(bool), u, opts, allowed, 0.0, 0.0, np.zeros((n, 2)), want)
        got = boxes[idx, 1 if (first and rules.has_servida) else 0, rolls]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced", "mini_maxi", "forced"])
def test_seat_player_plays_the_loops_games(name, rules_dir, tmp_path, monkeypatch):
    """The whole-game player and the decision-by-decision loop play the same games: every array
    of the results (rows, sums, outcomes, the course of the games), at one and at three seats."""
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    solver.clear_memo()
    rules = _rules(name, rules_dir)
    bot = make("solver", rules)
    bot.expect_games(10**6)  # a long run: the decision tables
    bot.prepare()
    assert bot.seat_player() is not None
    games = np.arange(5, 805, dtype=np.int64)
    for seats in (1, 3):
        fast = loop.play(rules, [bot] * seats, games, 11)
        monkeypatch.setattr(bot, "seat_player", lambda: None)
        slow = loop.play(rules, [bot] * seats, games, 11)
        monkeypatch.undo()
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
        for field in dataclasses.fields(slow):
            a, b = getattr(fast, field.name), getattr(slow, field.name)
            if isinstance(b, np.ndarray):
                assert a.dtype == b.dtype and a.shape == b.shape, field.name
                np.testing.assert_array_equal(a, b, err_msg=field.name)
        assert fast.to_frame().equals(slow.to_frame())


def test_no_seat_player_without_the_tables_or_with_blunders_at_temperature_0(rules_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    solver.clear_memo()
    rules = _rules("tiny_bonus", rules_dir)
    short = make("solver", rules)
    short.prepare()  # a short run, nothing cached: no tables
    assert short.seat_player() is None
    bot = make("solver:blunder=0.1", rules)
    bot.expect_games(10**6)
    bot.prepare()
    assert bot.seat_player() is None


@pytest.mark.parametrize("spec", ["solver:temperature=1", "solver:temperature=0.3,blunder=0.1"])
@pytest.mark.parametrize("name", ["scandinavian", "tiny_bonus", "mini_maxi"])
def test_randomised_seat_player_plays_the_loops_games(name, spec, rules_dir, tmp_path, monkeypatch):
    """temperature > 0: the whole-game player (each game's turn from its state's cache line, the
    states planned in groups) draws the keeps and boxes the loop's keep and choose draw, on the
    same uniforms: every array of the results, at one and two seats; with 4 cache lines too
    (the states of a group clash, lines are evicted between a turn's stages). And every line it
    filled holds what state_plan makes of its state, to the bit."""
    from strategies import solver as solver_bot

    if name != "scandinavian":
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    solver.clear_memo()
    rules = _rules(name, rules_dir)
    games = np.arange(7, 1507, dtype=np.int64)
    for lines in (1 << 15, 4):
        monkeypatch.setattr(solver_bot, "VALUE_LINES", lines)
        solver_bot._SHARED.clear()
        bot = make(spec, rules)
        bot.expect_games(10**6)  # a long run: the whole-game player pays for its compile ...
        bot.prepare()
        if (work := bot.background_kernels()) is not None:
            work()  # ... made in a background process of the run's (here: now)
        assert bot.seat_player() is not None
        for seats in (1, 2):
            fast = loop.play(rules, [bot] * seats, games, 5)
            with monkeypatch.context() as m:
                m.setattr(bot, "seat_player", lambda: None)
                slow = loop.play(rules, [bot] * seats, games, 5)
            for field in dataclasses.fields(slow):
                a, b = getattr(fast, field.name), getattr(slow, field.name)
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and a.shape == b.shape, field.name
                    np.testing.assert_array_equal(a, b, err_msg=field.name)
    monkeypatch.setattr(solver_bot, "VALUE_LINES", 1 << 15)
    solver_bot._SHARED.clear()
    bot = make(spec, rules)
    bot.expect_games(10**6)
    loop.play(rules, [bot], games, 5)  # the lines the whole-game player filled
    solver_bot._SHARED.clear()
    tags, ev, sv = bot._tags, bot._ev, bot._sv
    assert (tags >= 0).any()
    sol, lay, dk, ctx = bot._sol, bot._lay, bot._dk, context(rules)
    masks, flags, uppers = _all_states(sol)
    at = {
        sol.index(int(m), int(u), bool(f)): (int(m), int(f), min(int(u), lay.threshold))
        for m, f, u in zip(masks, flags, uppers)
    }
    work = K.state_work(ctx, lay, dk)
    for line in np.flatnonzero(tags >= 0):
        m, f, u = at[int(tags[line])]
        K.state_plan(ctx, lay, dk, sol.values, m, f, u, work, np.int64(-1))
        np.testing.assert_array_equal(ev[line], work[12][1:, : dk.n_small])
        np.testing.assert_array_equal(sv[line, 0], work[11])


@pytest.mark.parametrize("name", ["generala", "tiny_joker", "tiny_generala", "tiny_forced"])
def test_no_randomised_seat_player_on_rules_with_a_key_box_forced_order_or_servida(
    name, rules_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    solver.clear_memo()
    bot = make("solver:temperature=1", _rules(name, rules_dir))
    bot.expect_games(10**6)
    assert bot.seat_player() is None


def test_decision_tables_are_cached_together(rules_dir, tmp_path):
    rules = _rules("tiny_generala", rules_dir)
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    assert solver.box_table(sol, compute=False) is None
    boxes = solver.box_table(sol)
    codes = solver.policy_table(sol, compute=False)  # made by the same pass
    base = solver.cache_path(rules, tmp_path)
    assert base.with_suffix(".boxes.bin").is_file() and base.with_suffix(".policy.bin").is_file()
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    np.testing.assert_array_equal(solver.box_table(sol, compute=False), boxes)
    np.testing.assert_array_equal(solver.policy_table(sol, compute=False), codes)


@pytest.mark.parametrize("bot_name", ["random", "greedy", "timeout", "bonus"])
@pytest.mark.parametrize("name", ["scandinavian", "yahtzee", "generala", "forced", "tiny_joker"])
def test_heuristic_seat_players_play_the_loops_games(name, bot_name, rules_dir, monkeypatch):
    """The random bot's whole-game kernel draws the same coins and dice as its keep and choose;
    the greedy and bonus bots' plan their keeps as TurnPlanner does; the time-out and greedy bots
    write gain_box's boxes, the bonus bot its choose's."""
    rules = _rules(name, rules_dir)
    bot = make(bot_name, rules)
    bot.expect_games(10**7)  # a long run: the whole-game player pays for its compile
    assert bot.seat_player() is not None
    games = np.arange(100, 1100, dtype=np.int64)
    for seats in (1, 2):
        fast = loop.play(rules, [bot] * seats, games, 3)
        with monkeypatch.context() as m:
            m.setattr(bot, "seat_player", lambda: None)
            slow = loop.play(rules, [bot] * seats, games, 3)
        for field in dataclasses.fields(slow):
            a, b = getattr(fast, field.name), getattr(slow, field.name)
            if isinstance(b, np.ndarray):
                assert a.dtype == b.dtype and a.shape == b.shape, field.name
                np.testing.assert_array_equal(a, b, err_msg=field.name)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_generala", "tiny_forced", "mini_maxi", "standard"])
def test_bonus_seat_player_plays_the_loops_games(name, rules_dir, monkeypatch):
    """The bonus bot's whole-game kernel (strategies.bonus_kernels) on more rule sets (servida and
    a box that needs the key box, forced boxes, six dice), at another weight, and with a plan table
    of a few slots, so that it is full and given up many times in a run: every array of the
    results is the decision-by-decision loop's, at one and two seats, over two calls that share
    the table."""
    rules = _rules(name, rules_dir)
    for spec, slots in (("bonus", 5), ("bonus:weight=2.5", 1 << 10)):
        bot = make(spec, rules)
        bot.seat_plans = slots
        bot.expect_games(10**6)
        assert bot.seat_player() is not None
        for seats, games in ((1, np.arange(0, 600)), (2, np.arange(600, 1000))):
            fast = loop.play(rules, [bot] * seats, games, 5)
            with monkeypatch.context() as m:
                m.setattr(bot, "seat_player", lambda: None)
                slow = loop.play(rules, [bot] * seats, games, 5)
            for field in dataclasses.fields(slow):
                a, b = getattr(fast, field.name), getattr(slow, field.name)
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and a.shape == b.shape, field.name
                    np.testing.assert_array_equal(a, b, err_msg=field.name)
        used = int(bot._seat_plan[3][0])
        assert 0 < used <= slots


def test_no_bonus_seat_player_for_a_bot_that_decides_otherwise(rules_dir):
    """A subclass with its own stop values is not played by the kernel, nor are rules with more
    boxes than the plan table's key holds (maxi's 20)."""
    rules = load_rules("scandinavian")

    class Other(type(make("bonus", rules))):  # type: ignore[misc]
        def stop_values(self, filled, upper, flag, first):
            return super().stop_values(filled, upper, flag, first) + 1

    bot = Other(rules)
    bot.expect_games(10**6)
    assert bot.seat_player() is None
    bot = make("bonus", load_rules("maxi"))
    bot.expect_games(10**6)
    assert bot.seat_player() is None


def test_bonus_seat_player_from_its_announced_games(monkeypatch):
    """With its kernel not compiled yet, the bonus bot's seat player is taken from
    BONUS_SEAT_GAMES announced seat-games (all seats and workers together), not below."""
    from strategies import bonus

    monkeypatch.setattr(bonus, "seat_player_pays", lambda games, kernel: False)
    rules = load_rules("scandinavian")
    for games, offered in ((bonus.BONUS_SEAT_GAMES - 1, False), (bonus.BONUS_SEAT_GAMES, True)):
        bot = make("bonus", rules)
        bot.expect_games(games)
        assert (bot.seat_player() is not None) is offered


@pytest.mark.parametrize("name", ["forced", "generala", "standard"])
def test_keep_table_is_the_bots_keep(name, rules_dir, tmp_path):
    """Every roll and reroll stage of every state of ``forced`` (sampled states of the others):
    the keep table's keep is the bot's per-state keep (:func:`policy_keeps`), ties included."""
    rules = _rules(name, rules_dir)
    solver.clear_memo()
    sol = solver.solve(rules, tmp_path)
    codes = solver.policy_table(sol)
    masks, flags, uppers = _all_states(sol)
    if name not in EVERY_STATE:
        pick = np.random.default_rng(5).choice(len(masks), size=min(len(masks), 1500), replace=False)
        masks, flags, uppers = masks[pick], flags[pick], uppers[pick]
    d, lay, dk, ctx = rules.dice, sol.plan.layout, sol.plan.dice, context(rules)
    m, f, u = (np.repeat(a, d.n_rolls) for a in (masks, flags, uppers))
    n = len(m)
    rolls = np.tile(np.arange(d.n_rolls, dtype=np.int16), len(masks))
    rr = rules.rolls_per_turn - 1
    for j in range(1, rr + 1):
        stage = np.full(n, j, dtype=np.int64)
        lazy, whole = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
        tags = np.full(64, -1, dtype=np.int64)
        K.policy_keeps(
            ctx,
            lay,
            dk,
            sol.values,
            tags,
            np.zeros((64, rr, d.n_rolls), dtype=np.uint8),
            m,
            f.astype(bool),
            u,
            rolls,
            stage,
            lazy,
        )
        K.table_keeps(lay, dk, codes, m, f.astype(bool), u, rolls, stage, whole)
        np.testing.assert_array_equal(whole, lazy)


def test_a_long_randomised_run_compiles_its_whole_game_player_in_the_background_never_waiting(
    rules_dir, tmp_path, monkeypatch
):
    """Its compile (about 18 s of CPU) is over a first use's 15 s: until it is in numba's cache a
    run plays decision by decision, and the runner hands the compile to a process nobody waits for."""
    from harness.play import runner as R
    from harness.play.runconfig import RunConfig
    from strategies import solver as solver_bot

    monkeypatch.setattr(solver_bot, "soft_seat_compiled", lambda: False)
    bot = make("solver:temperature=1", _rules("scandinavian", rules_dir))
    bot.expect_games(10**5)
    bot.prepare()
    assert bot.seat_player() is None and bot.background_kernels() is None  # a short run: neither
    bot.expect_games(10**6)
    assert bot.seat_player() is None and callable(bot.background_kernels())  # a long one: compiled aside
    monkeypatch.setattr(solver_bot, "soft_seat_compiled", lambda: True)
    assert bot.seat_player() is not None and bot.background_kernels() is None  # once in the cache: taken
    started: list[object] = []
    monkeypatch.setattr(solver_bot, "soft_seat_compiled", lambda: False)
    monkeypatch.setattr(R, "compile_in_background", started.append)
    monkeypatch.setattr(solver_bot.SolverBot, "expect_games", lambda self, n: setattr(self, "_games", 10**6))
    cfg = RunConfig(seats=("solver:temperature=1", "solver:temperature=1,blunder=0.1"), games=20, workers=1)
    R.run(cfg, tmp_path / "run")
    assert len(started) == 1 and callable(started[0])  # one such process a run


def test_a_background_compile_runs_in_a_process_of_its_own_and_only_from_the_main_thread(tmp_path):
    import threading

    from harness.play.warmup import compile_in_background

    mark = tmp_path / "compiled"
    proc = compile_in_background(lambda: mark.write_text(str(os.getpid())))
    proc.join(60)
    assert proc.exitcode == 0 and int(mark.read_text()) != os.getpid()
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(compile_in_background(lambda: None)))
    t.start()
    t.join()
    assert got == [None]  # a fork off the main thread could inherit a lock another thread holds

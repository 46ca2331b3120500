"""Exact evaluation of solitaire bots: against brute-force enumeration of each bot's own play, against
the solver's exact distribution, against sampled runs; head-to-heads; the cache; the refusals."""

from __future__ import annotations

import glob
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.exact import evaluate as E
from harness.exact import solver
from harness.exact import target_pass
from harness.util.errors import UserError
from harness.game.registry import make
from harness.game.rules import load_rules
from harness.game.scoring import context, score_options_batch
from harness.stats import PERCENTILES
from harness.game.strategy import Strategy, TurnView
from tests.test_solver import TINY

BOTS = [
    "random",
    "timeout",
    "greedy",
    "bonus",
    "solver",
    "solver:temperature=2,blunder=0.1",
    "solver:blunder=0.2",
    "solver:temperature=0.5",
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rules")
    for name, text in TINY.items():
        (d / f"{name}.toml").write_text(text)
    return d


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path))
    return tmp_path


# ---------------------------------------------------------------------------------------------
# brute force: the bot's own keep/choose on TurnViews, its randomness enumerated


def _view(rules, filled, upper, flag, rolls, left, first, totals, **extra) -> TurnView:
    b = len(rolls)
    z = np.zeros(b, dtype=np.int64)
    return TurnView(
        rules,
        0,
        0,
        0,
        0,
        z,
        z.astype(np.uint64),
        rolls.astype(np.int16),
        np.full(b, left, np.int16),
        np.asarray(first, bool),
        np.asarray(filled, np.int64),
        np.asarray(upper, np.int16),
        np.asarray(flag, bool),
        np.zeros((b, rules.n_boxes), np.int16),
        np.asarray(totals, np.int32).reshape(b, 1),
        np.zeros(b, np.int16),
        **extra,
    )


def _scheme(bot: Strategy, what: str) -> tuple[int, list[tuple[dict[int, float], float]], int | None]:
    """How a bot draws: (uniform width, discrete coordinate values with weights, continuous coordinate)."""
    if bot.name == "random":
        if what == "keep":
            n = bot.rules.dice.n
            combos = [({j: (0.25 if (m >> j) & 1 else 0.75) for j in range(n)}, 0.5**n) for m in range(1 << n)]
            return n, combos, None
        return 1, [({}, 1.0)], 0
    if bot.name == "solver" and (bot.temperature > 0 or bot.blunder > 0):
        b = bot.blunder
        disc = ([({0: b / 2}, b)] if b > 0 else []) + [({0: (1 + b) / 2}, 1 - b)]
        return 2, disc, 1
    return 1, [({0: 0.5}, 1.0)], None


def _probe(call, view: TurnView, scheme) -> list[dict[int, float]]:
    """Per row the distribution of ``call(view)`` over the bot's uniforms: discrete coordinates
    enumerated, the continuous one cut into the intervals of each answer by bisection (each answer
    takes one interval of it: a cumulative pick)."""
    width, disc, cont = scheme
    b = len(view)
    out: list[dict[int, float]] = [defaultdict(float) for _ in range(b)]
    for vals, w in disc:
        base = np.full((b, width), 0.5)
        for j, v in vals.items():
            base[:, j] = v

        def act(u_cont=None):
            u = base.copy()
            if u_cont is not None:
                u[:, cont] = u_cont
            view.uniform = lambda width=1, u=u: u[:, :width]
            return np.asarray(call(view)).copy()

        if cont is None:
            a = act()
            for i in range(b):
                out[i][int(a[i])] += w
            continue
        lo = np.zeros(b)
        while (lo < 1.0).any():
            a = act(lo)
            L, H = lo.copy(), np.ones(b)
            for _ in range(52):
                M = (L + H) / 2
                same = act(M) == a
                L, H = np.where(same, M, L), np.where(same, H, M)
            for i in np.flatnonzero(lo < 1.0):
                out[i][int(a[i])] += w * (H[i] - lo[i])
            lo = np.where(H >= 1.0 - 2**-50, 1.0, H)
    return out


def enumerate_play(rules, bot: Strategy, paths: bool = False) -> tuple[Any, float]:
    """Exact column score distribution and P(bonus) of the bot's play, every roll and decision enumerated.

    The bot sees its running total as the engine keeps it (points written, the bonus once made,
    extras); a bot that plays for a target is asked at every (sheet, points so far). ``paths``: the
    distribution is of the whole course instead, {(running total after round 1, ..., after the
    last round): probability} (the bonus counted once made, as the engine's running total)."""
    ctx = context(rules)
    d = rules.dice
    rr = rules.rolls_per_turn - 1
    upper_of = rules.upper_face > 0
    ks, bs = _scheme(bot, "keep"), _scheme(bot, "box")
    by_score = bot.target_play() is not None
    states = {(0, 0, False, 0, ()): 1.0}
    n = d.n_rolls
    rolls = np.arange(n)
    for _ in range(rules.n_boxes):
        sheets = sorted({k[:4] if by_score else k[:3] + (0,) for k in states})
        m = len(sheets)
        F = np.repeat([s[0] for s in sheets], n)
        U = np.repeat([s[1] for s in sheets], n)
        G = np.repeat([s[2] for s in sheets], n)
        run = [s[3] + (rules.bonus_value if s[0] and s[1] >= rules.threshold else 0) for s in sheets]
        Z = np.repeat(run, n)
        R = np.tile(rolls, m)
        mass = np.tile(d.roll_prob, m)
        fin = {True: np.zeros(n * m), False: np.zeros(n * m)}
        first = True
        for left in range(rr, 0, -1):
            dist = _probe(bot.keep, _view(rules, F, U, G, R, left, np.full(n * m, first), Z), ks)
            new = np.zeros(n * m)
            for i in np.flatnonzero(mass > 0):
                for k, p in dist[i].items():
                    if k == d.roll_as_keep[R[i]]:
                        fin[first][i] += mass[i] * p
                        continue
                    sl = slice(d.trans_ptr[k], d.trans_ptr[k + 1])
                    base = (i // n) * n
                    np.add.at(new, base + d.trans_roll[sl], mass[i] * p * d.trans_prob[sl])
            mass, first = new, False
        fin[first] += mass
        boxes = {}
        for fst in (True, False):
            sc, al, ex = score_options_batch(ctx, R.astype(np.int16), np.full(n * m, fst), G, F)
            view = _view(rules, F, U, G, R, 0, np.full(n * m, fst), Z, options=sc, allowed=al, extra=ex)
            boxes[fst] = (_probe(bot.choose, view, bs), sc, ex)
        nxt: dict[tuple[int, int, bool, int, tuple[int, ...]], float] = defaultdict(float)
        index = {s: j for j, s in enumerate(sheets)}
        for (filled, upper, flag, score, path), p in states.items():
            j = index[(filled, upper, flag, score if by_score else 0)]
            for fst, (dist, sc, ex) in boxes.items():
                for i in range(j * n, (j + 1) * n):
                    if fin[fst][i] == 0:
                        continue
                    for b, q in dist[i].items():
                        s = int(sc[i, b])
                        nf = (s > 0) if b == rules.key_box else flag
                        up = upper + (s if upper_of[b] else 0)
                        got = score + s + int(ex[i])
                        run_total = got + (rules.bonus_value if up >= rules.threshold else 0)
                        nxt[(filled | (1 << b), up, nf, got, path + (run_total,) if paths else ())] += (
                            p * fin[fst][i] * q
                        )
        states = nxt
    if paths:
        course: dict[tuple[int, ...], float] = defaultdict(float)
        for key, p in states.items():
            course[key[4]] += p
        return dict(course), 0.0
    out = defaultdict(float)
    p_bonus = 0.0
    for (_, upper, _, score, _), p in states.items():
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        out[score + bonus] += p
        p_bonus += p if bonus else 0.0
    ref = np.zeros(max(out) + 1)
    for s, p in out.items():
        ref[s] = p
    return ref, p_bonus


CASES = (
    [
        (name, bot)
        for name in ("tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced")
        for bot in ("random", "timeout", "greedy", "bonus", "solver")
    ]
    + [
        (name, bot)
        for name in ("tiny_bonus", "tiny_generala")
        for bot in ("solver:temperature=2,blunder=0.1", "solver:blunder=0.2")
    ]
    + [("tiny_joker", "solver:temperature=0.5"), ("tiny_bonus", "solver:temperature=0.02")]
    # target play: its choices depend on its points so far (the walk over (state, score))
    + [
        ("tiny_bonus", "solver:target=39"),
        ("tiny_forced", "solver:target=34"),
        ("tiny_generala", "solver:target=47"),
        ("tiny_joker", "solver:target=55"),
        ("tiny_forced", "solver:target=34,blunder=0.2"),
        ("tiny_forced", "solver:target=34,temperature=3,blunder=0.1"),
    ]
)


@pytest.mark.parametrize("name,spec", CASES)
def test_evaluation_is_the_enumerated_play_of_the_bot(name, spec, tiny_dir, cache):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    ev = E.evaluate(rules, spec, use_cache=False)
    ref, p_bonus = enumerate_play(rules, make(spec, rules))
    n = max(len(ref), len(ev.column))
    got, want = np.pad(ev.column, (0, n - len(ev.column))), np.pad(ref, (0, n - len(ref)))
    np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)
    s = np.arange(n)
    assert ev.mean == pytest.approx(float(want @ s), abs=1e-9)
    assert ev.std == pytest.approx(math.sqrt(max(want @ s**2 - (want @ s) ** 2, 0)), abs=1e-7)
    assert ev.p_bonus == pytest.approx(p_bonus, abs=1e-12)
    cdf = np.cumsum(want)
    assert ev.percentiles == {str(q): int(np.searchsorted(cdf, q / 100 - 1e-12)) for q in PERCENTILES}
    assert ev.box_mean.sum() + ev.extra_mean + rules.bonus_value * (p_bonus if rules.threshold else 0) == pytest.approx(
        ev.mean, abs=1e-9
    )


@pytest.mark.parametrize("name,target", [("tiny_bonus", 39), ("tiny_joker", 55), ("tiny_generala", 47)])
def test_target_play_reaches_its_target_as_often_as_its_table_says(name, target, tiny_dir, cache):
    from harness.exact.target import target_table

    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    ev = E.evaluate(rules, f"solver:target={target}", use_cache=False)
    tab = target_table(rules, "target", target)
    # the table's float32 entries are the float64 solve rounded once: the play they choose reaches
    # the target with the table's probability to that rounding
    assert float(ev.distribution[target:].sum()) == pytest.approx(tab.prob(0, 0, False, target), abs=1e-6)


def test_only_the_rows_some_cell_reaches_are_worked_out():
    """row_mass and mass_runs: the (state, target) rows cells with probability fold into, as runs."""
    from harness.exact.kernels import target as TK

    off = np.array([0, 10, 15])  # vectors of length 10 and 5
    wlo, woff = np.array([100, 200]), np.array([0, 8, 14])
    # state 0: running totals 100..107 against target 105 need 5..-2 (-2 folds into -1); state 1:
    # totals 200..205 need less than 0, all one row
    D = np.array([1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0], dtype=float) * 0.1
    live = np.array([0, 1])
    jlo, jhi = np.empty(2, np.int64), np.empty(2, np.int64)
    TK.live_cells(D, woff, live, jlo, jhi)
    n_vec = off[1:] - off[:-1]
    c_lo = np.clip(105 - (wlo + jhi), -1, n_vec)
    c_n = np.clip(105 - (wlo + jlo), -1, n_vec) - c_lo + 1
    row0 = np.concatenate([[0], np.cumsum(c_n)[:-1]])
    assert c_lo.tolist() == [-1, -1] and c_n.tolist() == [7, 1]
    m = np.full(int(c_n.sum()), -9.0)
    TK.row_mass(off, 105, 0, live, jlo, jhi, 0, c_lo, row0, wlo, woff, D, m)
    # state 0 needs -1 (from 106 and 107), 2, 3 and 5; 0, 1 and 4 no cell reaches
    np.testing.assert_allclose(m, [0.2, 0, 0, 0.1, 0.1, 0, 0.1, 0.1], atol=1e-15)
    run = np.full((4, len(m)), -9, np.int64)
    n = TK.mass_runs(m, c_lo, c_n, row0, *run)
    assert n == 4
    assert run[:, :n].T.tolist() == [[0, -1, 1, 0], [0, 2, 2, 3], [0, 5, 1, 6], [1, -1, 1, 7]]


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced"])
def test_the_optimal_bot_is_the_solvers_exact_distribution(name, tiny_dir, cache):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    fig = solver.exact_distribution(rules, use_cache=False)
    ev = E.evaluate(rules, "solver", use_cache=False)
    n = max(len(fig.distribution), len(ev.column))
    np.testing.assert_allclose(
        np.pad(ev.column, (0, n - len(ev.column))),
        np.pad(fig.distribution, (0, n - len(fig.distribution))),
        atol=1e-12,
        rtol=0,
    )
    assert ev.mean == pytest.approx(fig.expected_score, abs=1e-9)
    assert ev.p_bonus == pytest.approx(fig.p_bonus, abs=1e-12)
    assert ev.percentiles == fig.percentiles


# ---------------------------------------------------------------------------------------------
# sampled play agrees with the exact distribution


def sampled_scores(rules_path: str, spec: str, games: int, out: Path, seed: int = 7) -> np.ndarray:
    import pyarrow.parquet as pq

    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    run_dir = run(RunConfig(seats=(spec,), rules=rules_path, games=games, workers=1, seed=seed), out)
    return np.concatenate(
        [
            pq.read_table(f, columns=["total"]).column("total").to_numpy()
            for f in sorted(glob.glob(str(run_dir / "chunks" / "*.parquet")))
        ]
    )


def chi_square_p(scores: np.ndarray, dist: np.ndarray, min_expected: float = 5.0) -> float:
    """p-value of a chi-square test of sampled scores against an exact distribution, sparse bins pooled."""
    from scipy.stats import chi2

    n = len(scores)
    counts = np.bincount(scores, minlength=len(dist)).astype(float)
    expected = dist[: len(counts)] * n if len(counts) <= len(dist) else np.pad(dist, (0, len(counts) - len(dist))) * n
    counts = counts[: len(expected)]
    obs, exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(counts, expected):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= min_expected:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0 or acc_o > 0:
        obs[-1] += acc_o
        exp[-1] += acc_e
    obs, exp = np.array(obs), np.array(exp)
    stat = float(((obs - exp) ** 2 / exp).sum())
    return float(chi2.sf(stat, len(obs) - 1))


@pytest.mark.parametrize(
    "spec", ["random", "timeout", "greedy", "bonus", "solver", "solver:temperature=2,blunder=0.1", "solver:target=39"]
)
def test_sampled_runs_agree_with_the_exact_distribution(spec, tiny_dir, cache, tmp_path):
    path = str(tiny_dir / "tiny_bonus.toml")
    rules = load_rules(path)
    ev = E.evaluate(rules, spec)
    scores = sampled_scores(path, spec, 4000, tmp_path / "run")
    half = 3.2905 * ev.std / math.sqrt(len(scores))  # 99.9 %
    assert abs(scores.mean() - ev.mean) < half
    assert chi_square_p(scores, ev.distribution) > 1e-3


# ---------------------------------------------------------------------------------------------
# head-to-heads, columns, cache, refusals


def test_head_to_head_and_seats_are_the_enumerated_pairs():
    rng = np.random.default_rng(3)
    pa, pb = rng.dirichlet(np.ones(9)), rng.dirichlet(np.ones(6))
    win = sum(pa[i] * pb[j] for i in range(9) for j in range(6) if i > j)
    draw = sum(pa[i] * pb[i] for i in range(6))
    w, dr, lo = E.versus(pa, pb)
    assert (w, dr) == (pytest.approx(win, abs=1e-15), pytest.approx(draw, abs=1e-15))
    assert w + dr + lo == pytest.approx(1.0)
    # three seats: A against two copies of B, enumerated
    sole = shared = 0.0
    for i in range(9):
        for j in range(6):
            for k in range(6):
                p = pa[i] * pb[j] * pb[k]
                top = max(i, j, k)
                if i == top:
                    if j < top and k < top:
                        sole += p
                    else:
                        shared += p
    (s0, t0), (s1, t1), (s2, t2) = E.seats([pa, pb, pb])
    assert (s0, t0) == (pytest.approx(sole, abs=1e-15), pytest.approx(shared, abs=1e-15))
    assert (s1, t1) == (pytest.approx(s2), pytest.approx(t2))
    assert s0 + s1 + s2 + 0 <= 1.0 + 1e-12
    assert E.score_rate(0.5, 0.2) == pytest.approx(0.6)


def test_columns_are_independent_fresh_games(tiny_dir, cache):
    path = str(tiny_dir / "tiny_bonus.toml")
    one = E.evaluate(load_rules(path), "greedy")
    two = E.evaluate(load_rules(path, ["columns=2"]), "greedy")
    best = E.evaluate(load_rules(path, ["columns=2", "add_columns=false"]), "greedy")
    np.testing.assert_allclose(two.distribution, np.convolve(one.column, one.column), atol=1e-15)
    assert two.mean == pytest.approx(2 * one.mean)
    assert two.std == pytest.approx(math.sqrt(2) * one.std)
    cdf = np.cumsum(one.column)
    np.testing.assert_allclose(np.cumsum(best.ranking), cdf**2, atol=1e-15)


def test_second_evaluation_comes_from_the_cache_and_a_damaged_file_is_redone(tiny_dir, cache):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    first = E.evaluate(rules, "solver:temperature=1")
    assert not first.cached
    again = E.evaluate(rules, "solver:temperature=1")
    assert again.cached and again.seconds < 1.0
    np.testing.assert_array_equal(again.column, first.column)
    assert again.to_json()["mean"] == first.to_json()["mean"]
    other = E.evaluate(rules, "solver:temperature=2")  # another parameter: another file
    assert not other.cached and other.mean != first.mean
    path = E.cache_path(rules, "solver:temperature=1.0")
    assert path.exists()
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0xFF
    path.write_bytes(bytes(raw))
    redone = E.evaluate(rules, "solver:temperature=1")
    assert not redone.cached
    np.testing.assert_array_equal(redone.column, first.column)


def test_refusals(tiny_dir, cache):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    with pytest.raises(UserError, match="reads the other sheets"):
        E.evaluate(rules, "winprob")
    with pytest.raises(UserError, match="saved rolls"):
        E.evaluate(load_rules(str(tiny_dir / "tiny_bonus.toml"), ["saved_rolls=true"]), "greedy")

    class Plugin(Strategy):
        name = "plugin"

    with pytest.raises(UserError, match="can be sampled with `run` but not evaluated exactly"):
        E.evaluate(rules, Plugin(rules))


@pytest.mark.parametrize("spec", ["solver:temperature=2,blunder=0.1", "solver:target=39,temperature=3"])
def test_an_evaluation_is_the_same_to_the_last_bit_on_any_number_of_threads(spec, tiny_dir, cache, monkeypatch):
    """A forked worker evaluates on one thread, the main process on every core: the figures (and so
    the cache files) must not depend on it. Small parts and chunks make the threads' shares differ."""
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    monkeypatch.setattr(E, "PART_STATES", 2)
    monkeypatch.setattr(target_pass, "TARGET_ROWS", 16)
    got = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(solver, "n_threads", lambda threads=threads: threads)
        ev = E.evaluate(rules, spec, use_cache=False)
        got[threads] = (
            ev.column.tobytes(),
            ev.distribution.tobytes(),
            ev.mean,
            ev.std,
            ev.p_bonus,
            np.asarray(ev.box_mean).tobytes(),
            np.asarray(ev.box_scored).tobytes(),
        )
    assert got[1] == got[2] == got[3]


def test_the_solver_policy_kernel_writes_only_inside_its_arrays(tiny_dir, cache, monkeypatch):
    """The softmax solver's box values have a column for every score an open box can take: on
    tiny_generala the double box (60, once the generala box holds a generala) is written for
    sheets whose options offer less. The kernel run as plain Python raises on any index outside
    its arrays (compiled, such a write went past the array's end and corrupted memory)."""
    from harness.exact.kernels import policy as EK

    monkeypatch.setattr(EK, "soft_policy", EK.soft_policy.py_func)
    rules = load_rules(str(tiny_dir / "tiny_generala.toml"))
    ev = E.evaluate(rules, "solver:temperature=1", use_cache=False)
    assert ev.distribution.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("spec", ["greedy", "solver:target=39"])
def test_score_windows_on_disk_give_the_same_evaluation_and_no_room_is_refused_with_the_size(
    spec, tiny_dir, cache, tmp_path
):
    """Past the memory limit the score windows go to memory-mapped files (maxi's 32.5 GiB do), the
    figures the same to the last bit; past the disk limit too, the evaluation is refused with the
    size it needs, and no scratch file is left behind."""
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    mem = E.evaluate(rules, spec, use_cache=False)
    scratch = tmp_path / "scratch"
    disk = E.evaluate(rules, spec, use_cache=False, limits=E.Limits(max_bytes=0, scratch_dir=scratch))
    assert disk.distribution.tobytes() == mem.distribution.tobytes()
    assert (disk.mean, disk.std, disk.p_bonus) == (mem.mean, mem.std, mem.p_bonus)
    assert np.asarray(disk.box_mean).tobytes() == np.asarray(mem.box_mean).tobytes()
    assert list(scratch.iterdir()) == []
    with pytest.raises(
        UserError,
        match=r"exact distribution is not computed: the score windows need 0\.0 GiB, "
        r"more than --max-memory \(0\.0 GiB\) and --max-disk \(0\.0 GiB\)",
    ):
        E.evaluate(rules, spec, use_cache=False, limits=E.Limits(max_bytes=0, max_disk_bytes=0))


def test_the_tables_name_maxis_yatzy_and_show_no_pairs_for_one_bot(tiny_dir, cache):
    """P(yatzy) reads maxi's `maxi_yatzy` box like the others' yatzy boxes; one bot has no pair table."""
    from types import SimpleNamespace

    e = SimpleNamespace(box_names=("ones", "maxi_yatzy"), box_scored=np.array([0.5, 0.216]))
    assert E._p_key(e) == 0.216
    assert math.isnan(E._p_key(SimpleNamespace(box_names=("ones", "chance"), box_scored=np.array([0.5, 1.0]))))
    rules = load_rules(str(tiny_dir / "tiny_forced.toml"))
    one = E.HeadToHead(rules.name, (E.evaluate(rules, "timeout"),))
    assert [t.title for t in one.tables()] == [
        "Exact figures (one seat, solitaire play)",
        "Box means (one column; P(score > 0) in brackets)",
    ]

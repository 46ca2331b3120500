"""Player models: the solver dial fitted back from decisions (synthetic and played), intervals that cover, poor fits flagged."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.decisions.analysis import SCALE, Analyser, DecisionTable
from harness.cli import main
from harness.util.errors import UserError
from harness.players.fit import (
    Choices,
    FitOptions,
    FitOrigin,
    Likelihood,
    fit_choices,
    fit_table,
    mle,
    parse_model,
    play_table,
    reference_of,
)
from harness.game.rules import load_rules


def synthetic(rng: np.random.Generator, d: int, t: float, p: float, width: int = 24) -> DecisionTable:
    """d decisions with random option values (a few ties), the choice drawn from the model (t, p)."""
    n = rng.integers(2, width + 1, size=d)
    values = np.full((d, width), -np.inf)
    chosen = np.empty(d, dtype=np.int16)
    for i in range(d):
        reg = rng.gamma(0.7, 3.0, size=n[i])
        reg[rng.integers(n[i])] = 0.0
        if rng.random() < 0.05:  # an exact tie for best
            reg[rng.integers(n[i])] = 0.0
        v = 200.0 - reg
        values[i, : n[i]] = v
        soft = np.exp(-(reg - reg.min()) / t) if t > 0 else (reg == reg.min()).astype(float)
        prob = p / n[i] + (1 - p) * soft / soft.sum()
        chosen[i] = rng.choice(n[i], p=prob / prob.sum())
    kind = (rng.random(d) < 0.35).astype(np.int8)
    regret = values.max(1) - values[np.arange(d), chosen]
    return DecisionTable(
        values,
        n.astype(np.int16),
        chosen,
        kind,
        np.zeros(d, np.int32),
        np.zeros(d, np.int16),
        np.zeros(d, np.int8),
        np.zeros(d, bool),
        regret,
        ("x",),
        (0,),
        np.zeros(1, np.int16),
    )


CASES = [
    ("solver:temperature", 1.0, 0.0),
    ("solver:temperature", 0.3, 0.0),
    ("solver:blunder", 0.0, 0.1),
    ("solver:temperature,blunder", 1.5, 0.08),
]


@pytest.mark.parametrize("model,t,p", CASES, ids=[f"{m}-{t}-{p}" for m, t, p in CASES])
def test_synthetic_decisions_are_fitted_back_and_the_intervals_cover(model, t, p):
    """40 independent sets of 400 synthetic decisions: each 95 % interval holds the truth in about
    38 of 40 (at least 34: P(Bin(40, 0.95) < 34) = 1.4 %; fixed seeds, so deterministic); the
    estimates scatter around the truth without bias."""
    rng = np.random.default_rng(20261101)
    hits = {k: 0 for k in ("temperature", "blunder") if k in model}
    est = {k: [] for k in hits}
    flagged = 0
    for _ in range(40):
        f = fit_choices(Choices.of_table(synthetic(rng, 400, t, p)), model)
        for k in hits:
            e = f.params[k]
            truth = t if k == "temperature" else p
            hits[k] += e.lo <= truth <= e.hi
            est[k].append(e.value)
        flagged += f.poor
    for k, h in hits.items():
        truth = t if k == "temperature" else p
        assert h >= 34, (k, h)
        assert abs(np.median(est[k]) - truth) < 0.1 * truth, (k, np.median(est[k]))
    assert flagged <= 1  # a goodness-of-fit test at p < 0.001 rarely flags a player of the family


def test_the_likelihood_is_the_bots_choice_rule():
    """One decision by hand: P(a) = p/n + (1-p) exp(v_a/T)/sum exp(v_b/T); T=0 shares the best among ties."""
    values = np.array([[10.0, 9.0, 7.0, -np.inf], [5.0, 5.0, 1.0, 0.0]])
    table = DecisionTable(
        values,
        np.array([3, 4], np.int16),
        np.array([1, 0], np.int16),
        np.zeros(2, np.int8),
        np.zeros(2, np.int32),
        np.zeros(2, np.int16),
        np.zeros(2, np.int8),
        np.zeros(2, bool),
        np.array([1.0, 0.0]),
        ("x",),
        (0,),
        np.zeros(1, np.int16),
    )
    lik = Likelihood(Choices.of_table(table))
    t, p = 2.0, 0.1
    soft0 = math.exp(9 / t) / sum(math.exp(v / t) for v in (10, 9, 7))
    soft1 = math.exp(5 / t) / sum(math.exp(v / t) for v in (5, 5, 1, 0))
    want = math.log(p / 3 + (1 - p) * soft0) + math.log(p / 4 + (1 - p) * soft1)
    assert lik.at(t, p) == pytest.approx(want, rel=1e-12)
    assert lik.at(0.0, p) == pytest.approx(math.log(p / 3) + math.log(p / 4 + (1 - p) / 2), rel=1e-12)


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser(load_rules("scandinavian"))


POPULATION = {
    "solver:temperature=0.5": (0.5, 0.0),
    "solver:temperature=2.0": (2.0, 0.0),
    "solver:blunder=0.1": (0.0, 0.1),
    "solver:blunder=0.05,temperature=1.0": (1.0, 0.05),
}


def test_a_population_of_bots_is_fitted_back_player_by_player_with_coverage(analyser):
    """Four solver bots at one table (each seat its own dice), 10 independent blocks of 25 games
    (about 1,100 decisions per bot and block): each bot's parameters lie in its 95 % intervals in
    at least 8 of 10 blocks (P(Bin(10, 0.95) < 8) = 1.2 %), and no bot of the family is flagged."""
    specs = list(POPULATION)
    hits = {s: [0, 0] for s in specs}
    flagged = 0
    for block in range(10):
        table = play_table(analyser, specs, np.arange(25 * block, 25 * (block + 1)), 3)
        rep = fit_table(table, "solver:temperature,blunder", options=FitOptions(pooled=False))
        for f in rep.players:
            t, p = POPULATION[f.player]
            hits[f.player][0] += f.params["temperature"].lo <= t <= f.params["temperature"].hi
            hits[f.player][1] += f.params["blunder"].lo <= p <= f.params["blunder"].hi
            flagged += f.poor
    assert all(h >= 8 for hs in hits.values() for h in hs), hits
    assert flagged <= 1


@pytest.mark.parametrize("model", ["solver:temperature", "solver:blunder"])
def test_one_parameter_models_recover_their_bots(analyser, model):
    spec, truth = ("solver:temperature=1", 1.0) if model == "solver:temperature" else ("solver:blunder=0.2", 0.2)
    k = model.split(":")[1]
    hits = 0
    for block in range(6):
        f = fit_table(play_table(analyser, [spec], np.arange(20 * block, 20 * (block + 1)), 5), model).players[0]
        hits += f.params[k].lo <= truth <= f.params[k].hi
        assert not f.poor
    assert hits >= 5


def test_a_greedy_player_is_flagged_as_a_poor_fit_and_the_optimal_one_fits_at_zero(analyser):
    table = play_table(analyser, ["greedy", "solver", "solver:temperature=1"], 30, 9)
    for model in ("solver:temperature", "solver:blunder", "solver:temperature,blunder"):
        rep = fit_table(table, model)
        greedy, solver, soft = (rep.player(x) for x in ("greedy", "solver", "solver:temperature=1.0"))
        assert greedy.poor and greedy.lr.p < 1e-10 and greedy.regret_test.p < 1e-10, model
        assert not solver.poor and solver.spec == "solver"
        assert solver.params[model.split(":")[1].split(",")[0]].value == 0.0
        assert rep.pooled is not None and rep.pooled.poor  # three kinds of play are not one player
        if "temperature" in model:
            assert not soft.poor
    # the median player by regret per game
    assert rep.median == "solver:temperature=1.0"


def test_models_are_parsed_in_any_order_and_unknown_ones_refused():
    assert parse_model("solver:blunder, temperature") == "solver:temperature,blunder"
    assert parse_model("solver:temperature") == "solver:temperature"
    for bad in ("solver", "greedy:weight", "solver:temperature,temperature", "solver:depth"):
        with pytest.raises(UserError, match="unknown model"):
            parse_model(bad)


# ---------------------------------------------------------------------------------------------
# the command line


def _record(factory, seats: tuple[str, ...], games: int, seed: int) -> str:
    """A recorded run of ``seats`` (the records fit reads), in a fresh directory."""
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = factory.mktemp("fit") / "run"
    run(RunConfig(seats=seats, games=games, seed=seed, record=True, workers=1), out)
    return str(out)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> str:
    return _record(tmp_path_factory, ("solver:temperature=1", "greedy"), 30, 2)


def test_fit_command_prints_each_player_and_writes_a_model_file(recorded, tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert main(["fit", recorded, "--model", "solver:temperature", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "solver:temperature=1.0" in text and "POOR" in text and "(pooled)" in text
    d = json.loads(out.read_text())
    soft = next(p for p in d["players"] if p["player"] == "solver:temperature=1.0")
    lo, hi = soft["params"]["temperature"]["ci"]
    assert lo <= 1.0 <= hi and not soft["goodness_of_fit"]["poor"]
    assert reference_of(f"{out}#solver:temperature=1.0")[0] == soft["spec"]
    with pytest.raises(UserError, match="poor fit"):
        reference_of(f"{out}#greedy")
    assert reference_of("solver:temperature=0.5") == ("solver:temperature=0.5", None)
    assert main(["fit", recorded, "--player", "greedy", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["player"] for p in d["players"]] == ["greedy"] and d["pooled"] is None


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--model", "solver:depth"], "unknown model"),
        (["--model", "mixed+greedy"], "unknown model 'greedy'"),
        (["--player", "nobody"], "no player 'nobody'"),
        (["--player", "greedy", "--plot", "x.png"], "takes every player, not --player"),
    ],
)
def test_fit_errors_are_one_line_with_exit_2(recorded, capsys, argv, message):
    assert main(["fit", recorded, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_records_are_named_and_a_file_without_games_is_an_error(recorded, tmp_path, capsys):
    from harness.records.record import read_records, write_records_jsonl

    games = read_records(recorded).games[:3]
    path = tmp_path / "games.jsonl"
    write_records_jsonl(path, games)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["turns"][0]["score"] += 1
    path.write_text("\n".join([lines[0], json.dumps(bad), lines[2], "{not json"]) + "\n")
    assert main(["fit", str(path), "--model", "solver:blunder"]) == 0
    cap = capsys.readouterr()
    assert "line 2" in cap.err and "line 4" in cap.err and "2 bad games skipped" in cap.out
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{not json\n")
    assert main(["fit", str(empty)]) == 2
    err = capsys.readouterr().err.splitlines()  # every bad game, then the error
    assert len(err) == 2 and "line 1: not valid JSON" in err[0] and err[1].endswith("(1 bad, listed above)")


# ---------------------------------------------------------------------------------------------
# the minimum of evidence (small samples are no answer)


def test_a_few_decisions_are_too_little_data_never_ok_nor_the_median_player(analyser):
    """3 decisions, or one game of greedy (44 decisions, which the blunder model fits as a near
    perfect solver): the verdict is 'too little data', whatever the tests say, and no such player
    is the median player; the same players with enough games are answers."""
    from harness.players.fit import MIN_DECISIONS, TOO_LITTLE, text

    few = fit_choices(Choices.of_table(synthetic(np.random.default_rng(3), 3, 2.0, 0.0)), "solver:temperature")
    assert few.verdict == TOO_LITTLE and not few.enough and few.decisions == 3
    assert any("fewer than" in why for why in few.too_little) and any("interval" in why for why in few.too_little)
    assert few.to_dict()["verdict"] == TOO_LITTLE
    one = play_table(analyser, ["greedy", "solver:temperature=1"], 1, 4)
    for model in ("solver:blunder", "solver:temperature", "solver:temperature,blunder"):
        rep = fit_table(one, model)
        assert all(p.verdict == TOO_LITTLE for p in (*rep.players, rep.pooled)), model
        assert rep.median is None
        shown = text(rep.to_dict())
        assert "too little data" in shown and " ok " not in shown and "no median player" in shown
        assert f"from {MIN_DECISIONS:,} decisions" in shown  # the minimum is stated in the header
    # the options move the minimum: with none, the same fit is an answer again
    rep = fit_table(one, "solver:temperature", options=FitOptions(min_decisions=1, max_half_width=100.0))
    assert rep.player("solver:temperature=1.0").verdict == "ok" and rep.median is not None
    # a player with enough decisions next to one with too few: only the first can be the median
    mixed = play_table(analyser, ["solver:temperature=1"], 15, 4)
    both = DecisionTable(
        *(
            np.concatenate([getattr(mixed, k), getattr(one, k)[one.player == "greedy"]])
            for k in ("values", "n", "chosen", "kind")
        ),
        np.concatenate([mixed.seatgame, np.full((one.player == "greedy").sum(), len(mixed.labels), np.int32)]),
        *(
            np.concatenate([getattr(mixed, k), getattr(one, k)[one.player == "greedy"]])
            for k in ("turn", "roll", "upper", "regret")
        ),
        (*mixed.labels, "greedy"),
        (*mixed.games, 0),
        np.append(mixed.seats, 0),
    )
    rep = fit_table(both, "solver:temperature")
    assert rep.player("greedy").verdict == TOO_LITTLE and rep.player("solver:temperature=1.0").enough
    assert rep.median == "solver:temperature=1.0"


def test_a_fit_with_too_little_data_is_refused_as_a_calibrate_reference(tmp_path, capsys):
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    rec = tmp_path / "run"
    run(RunConfig(seats=("solver:temperature=1", "greedy"), games=2, seed=2, record=True, workers=1), rec)
    out = tmp_path / "fit.json"
    assert main(["fit", str(rec), "--model", "solver:blunder", "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "too little data" in shown and "ok" not in shown.split("Goodness of fit")[0].split("\n", 3)[3]
    d = json.loads(out.read_text())
    assert d["median_player"] is None and {p["verdict"] for p in d["players"]} == {"too little data"}
    assert d["evidence"]["min_decisions"] == 500
    for ref, message in (
        (str(out), "no median player"),
        (f"{out}#greedy", "too little data"),
        (f"{out}#solver:temperature=1.0", "too little data"),
    ):
        with pytest.raises(UserError, match=message) as exc:
            reference_of(ref)
        assert "\n" not in str(exc.value)
    # an older fit file (no verdict in it) is judged by its own figures
    for p in d["players"]:
        del p["verdict"], p["too_little_data"]
    d["median_player"] = "greedy"
    del d["evidence"]
    out.write_text(json.dumps(d))
    with pytest.raises(UserError, match="too little data"):
        reference_of(str(out))
    # calibrate --levels --against says so in one line, exit 2
    levels = tmp_path / "levels.toml"
    levels.write_text(
        'rules = "scandinavian"\nstrategy = "solver"\nparam = "temperature"\nlo = 0.0\nhi = 20.0\n'
        'games = 30\n[[level]]\nname = "x"\ntarget_win_rate = 0.3\n'
    )
    assert (
        main(["calibrate", "--levels", str(levels), "--against", f"{out}#greedy", "--out", str(tmp_path / "lv")]) == 2
    )
    err = capsys.readouterr().err
    assert "too little data" in err and err.count("\n") == 1
    # the options of fit lower the minimum
    assert (
        main(
            [
                "fit",
                str(rec),
                "--model",
                "solver:temperature",
                "--min-decisions",
                "1",
                "--max-half-width",
                "1000",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert reference_of(f"{out}#solver:temperature=1.0")[0].startswith("solver")


def test_the_fit_commands_defaults_are_the_librarys_constants():
    import argparse

    from harness.commands import fit as command
    from harness.players.fit import MAX_HALF_WIDTH, MAX_MEMORY, MIN_DECISIONS

    p = argparse.ArgumentParser()
    command.configure(p)
    args = p.parse_args(["x"])
    assert (args.min_decisions, args.max_half_width, args.max_memory * 2**30) == (
        MIN_DECISIONS,
        MAX_HALF_WIDTH,
        MAX_MEMORY,
    )


# ---------------------------------------------------------------------------------------------
# big logs: streamed in batches of games, options shared, progress on stderr


def _close(a, b) -> bool:
    """Two fits' JSON alike, every number to 1e-9 (sums taken in another order)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-300) or (math.isnan(a) and math.isnan(b))
    return a == b


def test_a_fit_streams_its_records_in_batches_and_gives_the_numbers_of_one_table(recorded, monkeypatch, capsys):
    """fit_records walks BATCH_GAMES games at a time (no table of every option of every decision)
    and finds the numbers of fit_table on the whole decision table; a player's decisions and their
    per-kind subsets share the store's options (nothing copied per subset)."""
    import harness.decisions.analysis as A
    import harness.players.fit as F
    from harness.records.record import read_records

    res = read_records(recorded)
    whole = fit_table(
        A.decision_table(res.arrays), "solver:temperature,blunder", origin=FitOrigin(res.source, "scandinavian", 30)
    ).to_dict()
    sizes = []
    real = A.decision_batches

    def spy(recs, games, **kw):
        for n, t in real(recs, games, **kw):
            sizes.append(n)
            yield n, t

    monkeypatch.setattr(F.report, "BATCH_GAMES", 7)
    monkeypatch.setattr(F.report, "decision_batches", spy)  # the name fit_records calls
    got = F.fit_records(res, "solver:temperature,blunder", options=F.FitOptions(quiet=False)).to_dict()
    assert sizes == [7, 7, 7, 7, 2]
    assert "decisions" in capsys.readouterr().err  # the progress bar (quiet=False), on stderr
    assert _close(got, whole)
    table = A.decision_table(res.arrays)
    ch = Choices.of_table(table)
    sub = ch.subset(ch.kind == 1)
    assert sub.r is ch.r and sub.ptr is ch.ptr and len(sub) == int((ch.kind == 1).sum())
    assert Likelihood(sub).at(1.0, 0.1) == pytest.approx(
        Likelihood(Choices.of_table(table, (table.kind == 1) & (table.n >= 2))).at(1.0, 0.1), rel=1e-12
    )


def test_float32_regrets_fit_as_float64_ones(recorded):
    """The store keeps option regrets as float32 (4 bytes an option): on a 30-game log, each player's
    estimates and interval ends (temperature and blunder) are those of float64 regrets to 1e-6
    (relative; the largest difference measured, over the three models, is 1.6e-8), and the
    log-likelihoods to 1e-4 points."""
    import harness.decisions.analysis as A
    from harness.records.record import read_records

    table = A.decision_table(read_records(recorded).arrays)
    for model in ("solver:temperature,blunder",):
        for seat in (0, 1):
            mine = table.seats[table.seatgame] == seat
            f32, f64 = (fit_choices(Choices.of_table(table, mine, dtype=dt), model) for dt in (np.float32, np.float64))
            assert f32.decisions == f64.decisions > 1200
            assert f32.loglik == pytest.approx(f64.loglik, abs=1e-4)
            for k, e in f64.params.items():
                got = f32.params[k]
                for x, y in ((got.value, e.value), (got.lo, e.lo), (got.hi, e.hi)):
                    assert x == pytest.approx(y, rel=1e-6, abs=1e-12), (model, seat, k)


def test_identical_decisions_are_one_row_with_their_count():
    """A table and the same table twice over: the store keeps the same rows, each counting two
    decisions; the log-likelihood doubles and the maximum stays where it was."""
    from harness.players.fit import ChoicesBuilder

    one = synthetic(np.random.default_rng(5), 300, 1.2, 0.05)
    cols = ("values", "n", "chosen", "kind", "seatgame", "turn", "roll", "upper", "regret")
    two = DecisionTable(*(np.concatenate([getattr(one, c)] * 2) for c in cols), one.labels, one.games, one.seats)
    a, b = Choices.of_table(one), Choices.of_table(two)
    assert len(b) == len(a) == 300 and (a.decisions, b.decisions) == (300, 600) and set(b.w) == {2}
    assert Likelihood(b).at(1.0, 0.1) == pytest.approx(2 * Likelihood(a).at(1.0, 0.1), rel=1e-12)
    fa, fb = (fit_choices(c, "solver:temperature,blunder") for c in (a, b))
    assert (fb.temperature, fb.blunder, fb.decisions) == (
        pytest.approx(fa.temperature, rel=1e-9),
        pytest.approx(fa.blunder, rel=1e-9, abs=1e-12),
        600,
    )
    assert (
        fb.params["temperature"].hi - fb.params["temperature"].lo
        < fa.params["temperature"].hi - fa.params["temperature"].lo
    )  # twice the evidence
    store = ChoicesBuilder()
    store.add(one.values, one.n, one.chosen, one.kind, np.zeros(300, np.int32))
    store.choices()
    with pytest.raises(RuntimeError, match="no decisions once"):
        store.add(one.values, one.n, one.chosen, one.kind, np.zeros(300, np.int32))


def test_decisions_merge_only_when_their_paced_values_agree_too():
    """Three decisions alike in options, choice and myopic values; the third differs in its paced
    values: two rows (counts 2 and 1). The paced model reads the paced regrets (mixing puts them
    where the likelihood reads the myopic ones); without them it is refused."""
    values = np.array([[0.0, -1.0, -2.0]] * 3)
    myopic = np.array([[3.0, 1.0, 0.0]] * 3)
    paced = np.array([[1.0, 2.0, 0.5], [1.0, 2.0, 0.5], [1.0, 2.5, 0.5]])
    n, chosen, kind = np.full(3, 3), np.ones(3, np.int64), np.zeros(3, np.int8)
    ch = Choices.of_arrays(values, n, chosen, kind, myopic=myopic, paced=paced)
    assert len(ch) == 2 and ch.w.tolist() == [2, 1] and ch.decisions == 3
    assert ch.h.tolist() == [1.0, 0.0, 1.5, 1.5, 0.0, 2.0] and ch.hc.tolist() == [0.0, 0.0]  # in r's order
    assert ch.mixing("mixed") is ch and ch.mixing("kinds") is ch
    p = ch.mixing("paced")
    assert p.g is ch.h and p.gc is ch.hc and p.h is None
    assert ch.subset(np.array([False, True])).hc.tolist() == [0.0]
    with pytest.raises(ValueError, match="paced model needs decisions with their paced values"):
        fit_choices(Choices.of_arrays(values, n, chosen, kind, myopic=myopic), "paced")


def test_a_fit_of_a_stream_is_the_fit_of_the_file_read_whole(recorded, tmp_path):
    """fit_records of a RecordStream (a JSON Lines log read a batch at a time) gives the numbers of
    the same log read whole."""
    from harness.records.codec import records_of_run
    from harness.players.fit import fit_records
    from harness.records.record import RecordStream, read_records, write_records_jsonl

    path = write_records_jsonl(tmp_path / "games.jsonl", (rec for _, rec in records_of_run(recorded)))
    whole = fit_records(read_records(path), "solver:temperature").to_dict()
    streamed = fit_records(RecordStream(path, batch=7), "solver:temperature").to_dict()
    assert _close(streamed, whole) and whole["games"] == 30


# ---------------------------------------------------------------------------------------------
# the extended family: myopic values, a temperature per kind, the weight between them


def test_the_myopic_values_are_what_greedy_maximises(analyser):
    """greedy plays a best option by the myopic values at every decision, keeps and boxes; the
    solver does not. The keep values of the turn's first roll equal a brute-force expectation over
    the reroll of greedy's own turn plan (harness.game.turn.turn_policy on best_immediate stop values)."""
    from harness.game import registry
    from harness.records.codec import arrays_of_recording
    from harness.game.loop import play
    from harness.game.scoring import best_immediate, context

    rules = analyser.rules
    rec = play(rules, [registry.make(s, rules) for s in ("greedy", "solver")], np.arange(6), 4, record=True).recording
    rolls, keeps, boxes = arrays_of_recording(rec)[:3]
    _, d = analyser.walk(rolls, keeps, boxes, decisions=True, myopic=True)
    _, plain = analyser.walk(rolls, keeps, boxes, decisions=True)
    assert "myopic" not in plain and np.array_equal(plain["values"], d["values"])
    m, n, ch = d["myopic"], d["n"], d["chosen"]
    legal = np.arange(m.shape[1])[None, :] < n[:, None]
    assert np.isfinite(m[legal]).all() and np.isneginf(m[~legal]).all()
    regret = m.max(axis=1) - m[np.arange(len(n)), ch]
    greedy = d["seatgame"] % 2 == 0
    for k in (0, 1):
        assert regret[greedy & (d["kind"] == k)].max() <= 1e-9
        assert regret[~greedy & (d["kind"] == k)].mean() > 0.3  # the solver plays for more than this turn
    # boxes of equal gain are ranked as greedy breaks their tie (cheapest first): its box is the only best one
    box = greedy & (d["kind"] == 1)
    assert ((m[box] >= m[box].max(axis=1, keepdims=True) - 1e-9).sum(axis=1) == 1).all()
    # stop: the best box score of the dice in hand
    _first_keeps_follow_the_turn_plan(rules, d, rolls, m, best_immediate(context(rules), False, False, 0))


def _first_keeps_follow_the_turn_plan(rules, d, rolls, m, stops):
    """At the first roll of the first turn of each seat-game (d: the walk's decision arrays), each
    keep's value in m is a brute-force expectation over the reroll of the turn plan on the stop
    values ``stops`` (R,) of the empty sheet (harness.game.turn.turn_policy), and stop's is ``stops``."""
    from harness.game.turn import turn_policy

    dk, rr = rules.dice, rules.rolls_per_turn - 1
    values = turn_policy(dk, stops, stops, rr)[2]
    first = np.flatnonzero((d["turn"] == 0) & (d["roll"] == 0) & (d["kind"] == 0))
    assert len(first) == rolls.shape[0]
    for i in first:
        r = rolls[d["seatgame"][i], 0, 0]
        subs = dk.sub_keep[dk.sub_ptr[r] : dk.sub_ptr[r + 1]]
        for a, k in enumerate(subs[:-1]):
            lo, hi = dk.trans_ptr[k], dk.trans_ptr[k + 1]
            want = dk.trans_prob[lo:hi] @ values[rr - 1][dk.trans_roll[lo:hi]]
            assert m[i, a] == pytest.approx(want, rel=1e-12)
        assert m[i, len(subs) - 1] == stops[r]


def test_the_paced_values_are_the_bonus_bots_own_values(analyser):
    """Each option's paced value is the bonus bot's own: at every box decision of a game, its box
    values (strategies.kernels.bonus_values_batch on the position, the state replayed from the
    record; a box tied with the bot's is lowered by PACED_TIE), at every stop its stop value, and
    at the first roll each keep's value is a brute-force expectation over the reroll of the bot's
    own turn plan (harness.game.turn.turn_policy on its stop values). The bot plays a best option by
    them at every decision; the solver and greedy do not."""
    from harness.game import registry
    from harness.records.codec import arrays_of_recording
    from harness.game.loop import play
    from harness.game.scoring import context, score_options_batch
    from strategies.kernels import bonus_values_batch

    rules = analyser.rules
    bot = registry.make("bonus", rules)
    rec = play(
        rules, [registry.make(s, rules) for s in ("bonus", "solver", "greedy")], np.arange(3), 4, record=True
    ).recording
    rolls, keeps, boxes = arrays_of_recording(rec)[:3]
    _, d = analyser.walk(rolls, keeps, boxes, decisions=True, myopic=True, paced=True)
    _, plain = analyser.walk(rolls, keeps, boxes, decisions=True, myopic=True)
    assert "paced" not in plain and np.array_equal(plain["myopic"], d["myopic"])
    h, n, ch = d["paced"], d["n"], d["chosen"]
    legal = np.arange(h.shape[1])[None, :] < n[:, None]
    assert np.isfinite(h[legal]).all() and np.isneginf(h[~legal]).all()
    regret = h.max(axis=1) - h[np.arange(len(n)), ch]
    who = d["seatgame"] % 3
    for k in (0, 1):
        assert regret[(who == 0) & (d["kind"] == k)].max() <= 1e-9
        for other in (1, 2):
            assert (regret[(who == other) & (d["kind"] == k)] > 1e-9).mean() > 0.05
    ctx, T, checked = context(rules), rules.threshold, 0
    for sg in range(rolls.shape[0]):
        mask, upper, flag = 0, 0, False
        for t in range(rules.n_boxes):
            nr = int((rolls[sg, t] >= 0).sum())
            r = rolls[sg, t, nr - 1]
            sc, al, ex = score_options_batch(
                ctx, np.array([r], np.int16), np.array([nr == 1]), np.array([flag]), np.array([mask], np.int64)
            )
            i = np.flatnonzero((d["seatgame"] == sg) & (d["turn"] == t) & (d["kind"] == 1))
            own = bonus_values_batch(
                sc,
                al,
                ex,
                np.array([mask], np.int64),
                np.array([upper], np.int64),
                T,
                float(rules.bonus_value),
                rules.upper_face,
                bot._p,
                bot._opp,
                1.0,
            )[0]
            allowed = [b for b in range(rules.n_boxes) if (int(al[0]) >> b) & 1]
            if len(i):
                got = h[i[0], : len(allowed)]
                best = max(own[b] for b in allowed)
                top = next(b for b in analyser.order if b in allowed and own[b] == best)  # the bot's box
                want = [own[b] - (analyser.PACED_TIE if b != top and own[b] >= best - 1e-9 else 0.0) for b in allowed]
                assert got.tolist() == want
                checked += 1
            s = np.flatnonzero((d["seatgame"] == sg) & (d["turn"] == t) & (d["kind"] == 0) & (d["roll"] == nr - 1))
            if len(s):  # stopped with rerolls left: the stop option (the last) is the bot's stop value
                stops = bot.stop_values(mask, min(upper, T), flag, nr == 1)
                assert h[s[0], n[s[0]] - 1] == stops[r]
            b = int(boxes[sg, t])
            upper += int(sc[0, b]) if rules.upper_face[b] > 0 else 0
            flag = flag or (b == rules.key_box and sc[0, b] > 0)
            mask |= 1 << b
    assert checked == rolls.shape[0] * rules.n_boxes  # every box decision
    _first_keeps_follow_the_turn_plan(rules, d, rolls, h, bot.stop_values(0, 0, False, False))


def test_the_family_likelihood_and_its_gradient_by_hand():
    """Two decisions by hand: utility (1 - w) value + w myopic, a temperature per kind; the
    kernel's gradient is the log-likelihood's (central differences)."""
    from harness.players.fit import FamilyLikelihood

    values = np.array([[10.0, 9.0, 7.0, -np.inf], [5.0, 5.0, 1.0, 0.0]])
    myopic = np.array([[0.0, 4.0, 1.0, -np.inf], [2.0, 0.0, 3.0, 1.0]])
    ch = Choices.of_arrays(values, np.array([3, 4]), np.array([1, 2]), np.array([0, 1], np.int8), myopic=myopic)
    lik = FamilyLikelihood(ch)
    w, tk, tb, p = 0.3, 2.0, 0.7, 0.1

    def prob(v, g, c, t, n):
        u = (1 - w) * v + w * g
        e = np.exp((u - u.max()) / t)
        return p / n + (1 - p) * e[c] / e.sum()

    want = math.log(prob(values[0, :3], myopic[0, :3], 1, tk, 3)) + math.log(prob(values[1], myopic[1], 2, tb, 4))
    ll, grad = lik.at((w, tk, tb, p))
    assert ll == pytest.approx(want, rel=1e-12)
    for j in range(4):
        h = 1e-6
        up, dn = np.array([w, tk, tb, p]), np.array([w, tk, tb, p])
        up[j] += h
        dn[j] -= h
        assert grad[j] == pytest.approx((lik.at(up)[0] - lik.at(dn)[0]) / (2 * h), rel=1e-5, abs=1e-8)
    # top-1 agreement: both options played are the best by the myopic values, neither by the values;
    # at w = 0.5 decision 0's utility regrets are (2, 0.5, 3): a best option, decision 1's (0.5, 1.5, 2, 3.5): not
    assert (lik.top1(0.0), lik.top1(0.5), lik.top1(0.9)) == (0.0, 0.5, 1.0)


def family_synthetic(
    rng: np.random.Generator, d: int, w: float, tk: float, tb: float, p: float, width: int = 16
) -> Choices:
    """d decisions of random values and myopic values, the choice drawn from the family."""
    n = rng.integers(2, width + 1, size=d)
    values, myopic = np.full((d, width), -np.inf), np.full((d, width), -np.inf)
    kind = (rng.random(d) < 0.4).astype(np.int8)
    chosen = np.empty(d, dtype=np.int64)
    for i in range(d):
        v = -rng.gamma(0.7, 3.0, size=n[i])
        g = 0.6 * v + rng.normal(0.0, 2.0, size=n[i])  # related to the value, not the same
        values[i, : n[i]], myopic[i, : n[i]] = v, g
        u = (1 - w) * v + w * g
        e = np.exp((u - u.max()) / (tb if kind[i] else tk))
        prob = p / n[i] + (1 - p) * e / e.sum()
        chosen[i] = rng.choice(n[i], p=prob / prob.sum())
    return Choices.of_arrays(values, n, chosen, kind, np.float32, myopic)


def test_the_mixed_model_recovers_a_synthetic_player():
    """1,500 synthetic decisions from (weight 0.4, keep temperature 0.5, box temperature 2, blunder
    0.05): each parameter's 99.9 % interval holds the truth and is narrow; the fit is not flagged.
    Coverage of the 95 % intervals over many sets: benchmarks/bench_fit.py family."""
    truth = {"weight": 0.4, "keep_temperature": 0.5, "box_temperature": 2.0, "blunder": 0.05}
    f = fit_choices(
        family_synthetic(np.random.default_rng(20261201), 1500, *truth.values()),
        "mixed",
        options=FitOptions(confidence=0.999),
    )
    assert not f.poor and f.theta is not None and f.spec is None and f.decisions == 1500
    for k, x in truth.items():
        e = f.params[k]
        assert e.lo <= x <= e.hi and e.hi - e.lo < 2 * x, (k, e)


@pytest.fixture(scope="module")
def two_heuristics(analyser) -> DecisionTable:
    return play_table(analyser, ["greedy", "bonus"], np.arange(30), 2)


@pytest.fixture(scope="module")
def compared(two_heuristics):
    return fit_table(two_heuristics, "dial+mixed", options=FitOptions(pooled=False))


def test_greedy_is_fitted_by_the_family_and_bonus_better_than_by_the_dial(compared):
    """30 games each (1,300 decisions): the dial fits both POOR. greedy is the mixed model at
    weight 1 (its keeps and boxes the argmax of the myopic values: both temperatures and the
    blunder rate 0), not POOR (nor in any of 5 records of 10, 30 or 100 games: benchmarks/
    BENCHMARKS.md, "Player models"). bonus is no member of kinds or mixed (flagged from 100 games
    under both; the paced model is the one that holds it, the tests after this), but the mixed
    model comes much closer than the dial: its regret distribution's statistic is a fifth of the
    dial's or less."""
    dial, mixed = compared.model_fit("solver:temperature,blunder"), compared.model_fit("mixed")
    for name in ("greedy", "bonus"):
        assert dial.player(name).poor
    g = mixed.player("greedy")
    assert not g.poor and g.verdict == "ok" and g.params["weight"].value == 1.0 and g.params["weight"].lo > 0.99
    assert (g.params["keep_temperature"].value, g.params["box_temperature"].value, g.blunder) == (0.0, 0.0, 0.0)
    assert g.top1 > 0.9 > dial.player("greedy").top1
    b = mixed.player("bonus")
    assert b.regret_test.statistic < dial.player("bonus").regret_test.statistic / 5
    assert 0.05 < b.params["weight"].value < 0.2


def test_bonus_is_the_paced_model_and_the_dial_is_poor_on_a_tiny_rule_set(tmp_path):
    """100 games of bonus on tiny_bonus (1,334 decisions): the dial flags it POOR; under the paced
    model it is not flagged (both tests' p above 0.5: it is paced at weight 1, both temperatures and
    the blunder rate 0, every one in its interval), and the held-out model choice takes paced,
    with a log-likelihood per decision within 0.001 of 0 (the dial's: below -0.1)."""
    from tests.test_solver import TINY

    path = tmp_path / "tiny_bonus.toml"
    path.write_text(TINY["tiny_bonus"])
    rep = fit_table(
        play_table(Analyser(load_rules(str(path))), ["bonus"], 100, 1, paced=True),
        "dial+paced",
        options=FitOptions(pooled=False),
    )
    dial, paced = rep.model_fit("solver:temperature,blunder").player("bonus"), rep.model_fit("paced").player("bonus")
    assert dial.poor and paced.decisions == dial.decisions == 1334
    assert not paced.poor and paced.lr.p > 0.5 and paced.regret_test.p > 0.5
    e = paced.params
    # with both temperatures at their floor the log-likelihood is nearly flat in the weight near 1
    # (-0.2716043 at 0.95, -0.2716055 at 0.990, -0.2716061 at 1), so where the optimiser stops there
    # is its own matter (SLSQP: 0.990 with scipy 1.17.1, above 0.999 with the scipy this test was
    # written against): the estimate and the truth, 1, are in the interval
    w = e["weight"]
    assert w.lo <= w.value <= w.hi == 1.0 and 0.8 < w.lo < 0.95 and paced.top1 == 1.0
    for k in ("keep_temperature", "box_temperature", "blunder"):
        assert e[k].value == 0.0 == e[k].lo and e[k].hi < 0.1
    (choice,) = rep.choice
    assert choice.chosen == "paced"
    held = {h.model: h.loglik_per_decision for h in choice.models}
    assert held["paced"] > -1e-3 and held["solver:temperature,blunder"] < -0.1


def test_models_are_chosen_on_held_out_games(compared, two_heuristics):
    """Each player's seat-games split in halves by a seeded hash; every model fitted to one half
    and judged on the other: the held-out figures are those of a fit by hand on the same halves,
    and the mixed model is chosen for both heuristic players."""
    from harness.players.fit import FamilyLikelihood, family_mle, fold

    t = two_heuristics
    assert [c.player for c in compared.choice] == ["greedy", "bonus"] and compared.holdout_seed == 1
    for c in compared.choice:
        assert c.chosen == "mixed" and [h.model for h in c.models] == ["solver:temperature,blunder", "mixed"]
        mine = np.asarray(t.labels)[t.seatgame] == c.player
        half = np.array([fold(1, t.games[i], int(t.seats[i])) for i in range(len(t.labels))])[t.seatgame]
        train, test = (Choices.of_table(t, mine & (half == f)) for f in (0, 1))
        assert (c.train_decisions, c.test_decisions) == (train.decisions, test.decisions)
        assert c.train_decisions + c.test_decisions == compared.player(c.player).decisions
        assert 0.3 < c.train_decisions / (c.train_decisions + c.test_decisions) < 0.7
        theta, _ = family_mle(FamilyLikelihood(train), "mixed")
        lik = FamilyLikelihood(test)
        h = c.models[1]
        assert h.loglik_per_decision == pytest.approx(lik.at(theta)[0] / test.decisions, rel=1e-9)
        assert h.top1 == pytest.approx(lik.top1(theta[0]), rel=1e-12)
        dial = mle(Likelihood(train), "solver:temperature,blunder")
        assert c.models[0].loglik_per_decision == pytest.approx(
            Likelihood(test).at(dial.temperature, dial.blunder) / test.decisions, rel=1e-9
        )
        assert c.models[1].loglik_per_decision > c.models[0].loglik_per_decision
    # another seed, another split (the same seat-games, in other halves)
    assert [fold(2, g, 0) for g in range(40)] != [fold(1, g, 0) for g in range(40)]


@pytest.fixture(scope="module")
def small_recorded(tmp_path_factory) -> str:
    return _record(tmp_path_factory, ("greedy", "solver:blunder=0.1"), 6, 3)


def test_fit_compares_models_and_draws_the_population(small_recorded, tmp_path, capsys):
    """fit --model dial+mixed: both models' tables, the held-out model choice, the population bands
    (printed, in the JSON, drawn); a fit of a model no bot plays is refused as a calibrate reference.
    Each player's regret per decision is analyse's (regret over every decision / every decision, one
    legal option included) to 1e-9 and its band analyse's rating; the likelihood's informative
    decisions are fewer."""
    out, png = tmp_path / "fit.json", tmp_path / "pop.png"
    assert (
        main(
            [
                "fit",
                small_recorded,
                "--model",
                "dial+mixed",
                "--out",
                str(out),
                "--plot",
                str(png),
                "--min-decisions",
                "1",
                "--max-half-width",
                "100",
            ]
        )
        == 0
    )
    shown = capsys.readouterr().out
    for what in (
        "Model solver:temperature,blunder:",
        "Model mixed: utility = (1 - weight) x value + weight x myopic",
        "Model choice on held-out games",
        "Population: skill bands",
        f"drew {png}",
    ):
        assert what in shown, what
    d = json.loads(out.read_text())
    assert [a["model"] for a in d["alternatives"]] == ["mixed"]
    chosen = {c["player"]: c["chosen"] for c in d["model_choice"]["players"]}
    assert chosen["greedy"] == "mixed"
    assert main(["analyse", small_recorded, "--json"]) == 0
    an = {p["player"]: p for p in json.loads(capsys.readouterr().out)["players"]}
    assert sorted(an) == sorted(p["player"] for p in d["players"]) == ["greedy", "solver:blunder=0.1"]
    for r in (d, *d["alternatives"]):
        for p in r["players"]:
            a = an[p["player"]]
            assert p["regret_per_decision"] == pytest.approx(a["regret_per_decision"], abs=1e-9, rel=0)
            assert p["band"] == a["rating"]
            assert p["all_decisions"] == round(a["decisions_per_game"] * a["games"])
    assert [(p["decisions"], p["all_decisions"]) for p in d["players"]] == [(259, 265), (262, 268)]
    assert d["pooled"]["all_decisions"] == 265 + 268
    # the population: the bands of analyse's rating scale that have players, best first
    pop = d["population"]
    assert [(b["band"], b["from"], b["below"], b["players"]) for b in pop["bands"]] == [
        ("intermediate", 0.4, 1.0, ["solver:blunder=0.1"]),
        ("casual", 1.0, 2.0, ["greedy"]),
    ]
    assert [(b["band"], b["below"]) for b in pop["scale"]] == [
        (b.name, b.below if math.isfinite(b.below) else None) for b in SCALE
    ]
    assert {p["player"]: p["band"] for p in d["players"]} == {"greedy": "casual", "solver:blunder=0.1": "intermediate"}
    assert pop["bands"][1]["params"]["mixed"]["weight"] == [
        d["alternatives"][0]["players"][0]["params"]["weight"]["value"]
    ]
    assert "  intermediate  [0.4, 1)             1        0.581 (0.581 – 0.581)" in shown
    assert "  casual        [1, 2)               1        1.168 (1.168 – 1.168)" in shown
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    alt = tmp_path / "mixed.json"
    alt.write_text(json.dumps(d["alternatives"][0]))
    with pytest.raises(UserError, match="no bot that plays it"):
        reference_of(f"{alt}#solver:blunder=0.1")
    assert reference_of(f"{out}#solver:blunder=0.1")[0].startswith("solver:blunder=")


def test_a_paced_fit_of_records_read_in_batches_is_the_fit_of_one_table(small_recorded, monkeypatch):
    """fit_records with the paced model walks the records with their paced values, a batch at a
    time (the streamed path of fit and its kernel arrays), and finds the numbers of fit_table on
    the whole decision table walked with them."""
    import harness.decisions.analysis as A
    import harness.players.fit as F
    from harness.records.record import read_records

    res = read_records(small_recorded)
    table = A.decision_table(res.arrays, paced=True)
    assert table.paced is not None and table.myopic is None
    whole = fit_table(table, "paced", player="greedy", origin=FitOrigin(res.source, "scandinavian", 6))
    monkeypatch.setattr(F.report, "BATCH_GAMES", 4)
    got = F.fit_records(res, "paced", player="greedy")
    assert _close(got.to_dict(), whole.to_dict())
    assert got.players[0].decisions > 200 and 0 < got.players[0].params["weight"].value <= 1


def test_models_are_named_one_several_or_all():
    from harness.players.fit import ALL_MODELS, parse_models

    assert parse_models("all") == ALL_MODELS == ("solver:temperature,blunder", "kinds", "paced", "mixed")
    assert parse_models("dial+mixed+dial") == ("solver:temperature,blunder", "mixed")
    assert parse_model("dial") == "solver:temperature,blunder" and parse_model("kinds") == "kinds"
    assert parse_model(" paced ") == "paced"
    for bad in ("mixed:weight", "paced:weight", "dial+greedy"):
        with pytest.raises(UserError, match="unknown model"):
            parse_models(bad)


# ---------------------------------------------------------------------------------------------
# bounded memory: the store's segments beyond --max-memory in a scratch file, read a block at a time


@pytest.fixture(scope="module")
def six_games(tmp_path_factory) -> str:
    return _record(tmp_path_factory, ("solver:temperature=1", "greedy"), 6, 2)


@pytest.fixture
def small_store(monkeypatch, tmp_path):
    """Batches of one game, segments of 200 rows and blocks of 128 (a six-game log, about 520 rows,
    makes several of each), scratch files under tmp_path/tmp; gives that directory."""
    import tempfile

    import harness.players.fit as F

    monkeypatch.setattr(F.report, "BATCH_GAMES", 1)
    monkeypatch.setattr(F.store, "SEGMENT_ROWS", 200)
    monkeypatch.setattr(F.store, "BLOCK_ROWS", 128)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def test_a_fit_spilled_to_disk_is_the_fit_in_memory_to_the_last_bit(six_games, small_store, monkeypatch):
    """A fit with a budget of 0 bytes (every sealed segment written to the scratch file, every pass
    reading it back a block at a time, on two threads) equals the fit kept in memory on one thread
    exactly: the same JSON, no tolerance. The scratch directory exists while the store is spilled
    and is gone afterwards; in memory, none is made."""
    import harness.players.fit as F
    from harness.records.record import RecordStream

    seen = []
    real = F.DecisionStore._spill

    def spill(self):
        real(self)
        seen.append((self.spilled_bytes, sorted(p.name for p in small_store.iterdir())))

    monkeypatch.setattr(F.DecisionStore, "_spill", spill)
    monkeypatch.setattr(F.store, "n_threads", lambda: 1)
    whole = F.fit_records(RecordStream(six_games), "solver:temperature,blunder").to_dict()
    assert not seen
    monkeypatch.setattr(F.store, "n_threads", lambda: 2)
    monkeypatch.setattr(F.store, "PARALLEL_ROWS", 0)
    spilled = F.fit_records(
        RecordStream(six_games), "solver:temperature,blunder", options=F.FitOptions(max_memory=0)
    ).to_dict()
    assert spilled == whole
    assert len(seen) >= 2 and seen[-1][0] > 40_000 and all(len(names) == 1 for _, names in seen)
    assert list(small_store.iterdir()) == []
    assert whole["pooled"]["decisions"] > 400 and whole["games"] == 6


def test_the_store_keeps_its_budget_and_its_blocks_read_back_as_written(six_games, small_store):
    """Stores of a six-game log with the myopic and paced values, one without a budget, one of 20 kB:
    after every batch at most the budget is in memory (besides the open segment), the rest in the
    scratch file; each player's blocks read back are its rows of the store in memory, options,
    myopic and paced regrets and counts alike, in the same order; its decisions split by kind and
    by half add up; the likelihoods of both (the dial's and the extended family's with a weight on
    the myopic or on the paced values) are equal to the last bit."""
    import harness.decisions.analysis as A
    import harness.players.fit as F
    from harness.records.record import RecordStream

    stores = [F.DecisionStore(myopic=True, paced=True, max_bytes=m) for m in (1 << 40, 20_000)]
    for _, table in A.decision_batches(RecordStream(six_games), 1, myopic=True, paced=True):
        seat = np.asarray(table.seats, np.int32)[table.seatgame]
        who = 2 * seat + (np.asarray(table.games)[table.seatgame] % 2).astype(np.int32)  # halves: odd games
        for st in stores:
            st.add(table.values, table.n, table.chosen, table.kind, who, table.myopic, table.paced)
        assert stores[1].memory_bytes <= 20_000
    mem, disk = stores
    try:
        mem.finish(), disk.finish()
        assert disk.spilled_bytes > 40_000 and mem.spilled_bytes == 0 and mem.scratch is None
        assert (disk.rows, disk.options, disk.decisions) == (mem.rows, mem.options, mem.decisions)
        assert disk.segments >= 2
        for player in (0, 1):
            a, b = mem.blocks([player]), disk.blocks([player])
            assert not a.spilled and b.spilled and len(a.parts) == len(b.parts) >= 3 and len(a) == len(b)
            for i in range(len(a.parts)):
                x, y = a.load(i).compact(), b.load(i)
                for name in ("ptr", "r", "g", "h", "rc", "gc", "hc", "u", "kind", "w", "who"):
                    assert np.array_equal(getattr(x, name), getattr(y, name)), name
            for by in ("kind", "half"):
                parts = [b.where(**{by: v}).decisions for v in (0, 1)]
                assert min(parts) > 0 and sum(parts) == b.decisions == a.decisions
            assert F.Likelihood(a).best_blunder(1.3) == F.Likelihood(b).best_blunder(1.3)
            theta = (0.3, 0.8, 1.7, 0.02)
            fa, fb = F.FamilyLikelihood(a), F.FamilyLikelihood(b)
            (la, ga), (lb, gb) = fa.at(theta), fb.at(theta)
            assert la == lb and np.array_equal(ga, gb) and fa.top1(0.3) == fb.top1(0.3)
            pa, pb = F.FamilyLikelihood(a.mixing("paced")), F.FamilyLikelihood(b.mixing("paced"))
            (la2, ga2), (lb2, gb2) = pa.at(theta), pb.at(theta)
            assert la2 == lb2 and np.array_equal(ga2, gb2) and la2 != la
            assert pa.top1(0.3) == pb.top1(0.3)
    finally:
        disk.close()
    assert list(small_store.iterdir()) == []


def test_the_scratch_files_are_removed_when_the_fit_fails(six_games, small_store, monkeypatch):
    """A fit that fails after its store went to disk (here: the second player's fit raises)
    leaves no scratch directory behind."""
    import harness.players.fit as F
    from harness.records.record import RecordStream

    real, calls = F.fit_choices, []

    def failing(*a, **k):
        calls.append(sorted(p.name for p in small_store.iterdir()))
        if len(calls) == 2:
            raise RuntimeError("stop here")
        return real(*a, **k)

    monkeypatch.setattr(F.report, "fit_choices", failing)
    with pytest.raises(RuntimeError, match="stop here"):
        F.fit_records(RecordStream(six_games), "solver:temperature", options=F.FitOptions(max_memory=0))
    assert len(calls[1]) == 1 and calls[1][0].startswith("yatzy-fit-")  # it was there while fitting
    assert list(small_store.iterdir()) == []

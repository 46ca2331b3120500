"""The game codec: every form of a game converts to every other without loss, and a run's arrays
read straight from its records Parquet equal the arrays built through GameRecord objects."""

from __future__ import annotations

import json
from itertools import combinations_with_replacement

import numpy as np
import pytest

from harness.records import codec
from harness.records.codec import (
    GameRecord,
    RunGames,
    arrays_of_recording,
    arrays_of_records,
    decode_faces,
    faces_code,
    read_run,
    record_from_trace,
    records_of_run,
    turns_of_recording,
)
from harness.util.errors import UserError
from harness.records.record import check_seat_games, read_records, validate_record, write_records_jsonl
from harness.game.rules import load_rules

#: (rules, settings, seats): recorded runs of 3 chunks of 4 games
RUNS = {
    "scandinavian": ("scandinavian", {"upper_bonus_threshold": 62}, ("solver:temperature=2", "greedy")),
    "columns2": ("scandinavian", {"columns": 2}, ("greedy", "random", "timeout")),
    "forced": ("forced", {}, ("greedy", "random")),
    "yahtzee": ("yahtzee", {}, ("greedy", "random")),
    "saved_rolls": ("maxi", {"saved_rolls": True}, ("greedy", "timeout")),
}
#: rule sets the analysis kernel walks here (saved rolls it refuses; the others need a solve)
WALKED = ("scandinavian", "columns2", "forced")
GAMES, CHUNK, SEED = 12, 4, 5


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = {}
    for key, (rules, settings, seats) in RUNS.items():
        out[key] = run(
            RunConfig(
                seats=seats,
                rules=rules,
                settings=settings,
                games=GAMES,
                chunk_size=CHUNK,
                seed=SEED,
                workers=1,
                record=True,
            ),
            tmp_path_factory.mktemp(key) / "run",
        )
    return out


def _rules(key):
    rules, settings, _ = RUNS[key]
    return load_rules(rules, dict(settings))


def _padded(a, width):
    out = np.full(a.shape[:2] + (width,), -1, dtype=a.dtype)
    out[:, :, : a.shape[2]] = a
    return out


def _same_arrays(got, want):
    """Kernel arrays equal, up to trailing -1 roll columns (records give the most rolls they hold,
    a run's file every roll a turn can have)."""
    width = max(got[0].shape[2], want[0].shape[2])
    for i in (0, 1):
        np.testing.assert_array_equal(_padded(got[i], width), _padded(want[i], width))
    np.testing.assert_array_equal(got[2], want[2])
    assert list(got[3]) == list(want[3]) and list(got[5]) == list(want[5])
    np.testing.assert_array_equal(got[4], want[4])


# ---------------------------------------------------------------------------------------------
# the face code


@pytest.mark.parametrize("n", [5, 6])
def test_the_face_code_and_its_inverse(n):
    for size in range(n + 1):
        faces = np.array(
            [list(f) + [0] * (n - size) for f in combinations_with_replacement(range(1, 7), size)] or [[0] * n]
        )
        rng = np.random.default_rng(size)
        shuffled = rng.permuted(faces, axis=1)  # order does not matter, 0 = no die
        codes = faces_code(shuffled)
        counts, got_size, ok = decode_faces(codes, n)
        assert ok.all() and (got_size == size).all()
        want = np.stack([(faces == f).sum(axis=1) for f in range(1, 7)], axis=1)
        np.testing.assert_array_equal(counts, want)
    assert faces_code(np.array([[6, 6, 2, 4, 1]])).tolist() == [12466]
    not_codes = [-1, 7, 10, 21, 1270, 66665, 1111111 if n == 6 else 111111]
    _, _, ok = decode_faces(np.array(not_codes), n)
    assert not ok.any()


# ---------------------------------------------------------------------------------------------
# a run: Parquet -> arrays straight, and through GameRecord objects


@pytest.mark.parametrize("key", list(RUNS))
def test_a_runs_arrays_from_parquet_equal_the_arrays_of_its_records(runs, key):
    rules = _rules(key)
    recs = [rec for _, rec in records_of_run(runs[key])]
    runrec = read_run(runs[key])
    assert len(runrec) == len(recs) == GAMES and runrec.regular.all()
    _same_arrays(runrec.arrays(), arrays_of_records(recs, rules))
    _same_arrays(runrec.arrays(3, 9), arrays_of_records(recs[3:9], rules))
    # the arrays' own checks agree with validate_record on every (valid) game
    assert check_seat_games(
        rules, runrec.rolls, runrec.keeps, runrec.boxes, runrec.numbers["score"], runrec.numbers["extra"], runrec.totals
    ).all()
    assert all(validate_record(rec, rules) == rec.totals for rec in recs)
    # records built one by one from the arrays' source are the run's records
    assert [r.to_json() for r in RunGames(runrec)] == [r.to_json() for r in recs]
    assert RunGames(runrec)[-1] == recs[-1] and RunGames(runrec)[2:4] == recs[2:4]


@pytest.mark.parametrize("key", WALKED)
def test_the_kernel_gives_the_same_figures_on_both_paths(runs, key):
    from harness.decisions.analysis import Analyser

    an = Analyser(_rules(key))
    recs = [rec for _, rec in records_of_run(runs[key])]
    fast, table = an.arrays(read_run(runs[key]).arrays(), decisions=True)
    slow, ref = an.records(recs, decisions=True)
    for name in fast:
        np.testing.assert_array_equal(fast[name], slow[name])
    for name in ("values", "n", "chosen", "kind", "seatgame", "turn", "roll", "upper", "regret"):
        np.testing.assert_array_equal(getattr(table, name), getattr(ref, name))
    assert (table.labels, table.games) == (ref.labels, ref.games)


def test_analyse_and_fit_of_a_run_are_those_of_its_records(runs):
    from harness.players.fit import fit_records
    from harness.records.record import ReadResult
    from harness.decisions.skill import analyse_records

    res = read_records(runs["scandinavian"])
    assert isinstance(res.games, RunGames) and res.arrays is not None
    as_records = ReadResult(res.source, list(res.games), res.errors, res.lineups)  # the path through records
    fast, slow = analyse_records(res, worst=4), analyse_records(as_records, worst=4)
    assert json.dumps(fast.to_dict()) == json.dumps(slow.to_dict())
    fast, slow = fit_records(res, "solver:temperature"), fit_records(as_records, "solver:temperature")
    assert json.dumps(fast.to_dict()) == json.dumps(slow.to_dict())


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize("key", list(RUNS))
def test_recording_parquet_record_jsonl_record_arrays_round_trip(runs, key, tmp_path):
    from harness.game import registry
    from harness.game.loop import play
    from harness.play.replay import record_of_replay, replay

    rules_name, settings, seats = RUNS[key]
    rules = _rules(key)
    bots = [registry.make(s, rules) for s in seats]
    res = play(rules, bots, np.arange(GAMES), SEED, record=True)
    rec = res.recording
    # Recording -> Parquet (the run's records/ files) -> GameRecord
    from_parquet = [r for _, r in records_of_run(runs[key])]
    for g, r in enumerate(from_parquet):
        assert list(r.turns) == sorted(
            (t for s in range(len(seats)) for t in turns_of_recording(rec, rules, g, s)),
            key=lambda t: ((t.column - 1) * rules.n_boxes + t.turn, t.seat),
        )
        assert r.totals == tuple(res.total[g].tolist())
    # the trace gives the same record
    trace, one = replay(rules_name, dict(settings), list(seats), SEED, 5)
    assert record_of_replay(trace, one, rules_name, list(seats), SEED, 5).turns == from_parquet[5].turns
    # GameRecord -> JSON Lines -> GameRecord
    path = write_records_jsonl(tmp_path / "games.jsonl", from_parquet)
    back = read_records(path)
    assert not back.errors and back.games == from_parquet
    assert [GameRecord.from_json(r.to_json()) for r in from_parquet] == from_parquet
    # GameRecord -> arrays = the engine's recording (a stop is no keep of a record)
    rolls, keeps, boxes = arrays_of_recording(rec)
    keeps = keeps.copy()
    last = (rolls >= 0).sum(axis=2) - 1
    at = np.arange(keeps.shape[2]) >= last[..., None]
    keeps[at] = -1
    want = (
        rolls,
        keeps,
        boxes,
        [g for g in range(GAMES) for _ in seats],
        np.tile(np.arange(len(seats)), GAMES),
        [b.label for _ in range(GAMES) for b in bots],
    )
    _same_arrays(arrays_of_records(back.games, rules), want)


def test_the_records_file_layout_is_the_one_on_disk(runs):
    import pyarrow.parquet as pq

    rules = _rules("scandinavian")
    path = sorted((runs["scandinavian"] / "records").iterdir())[0]
    schema = pq.read_schema(path)
    r = rules.rolls_per_turn
    want = [
        *codec.RECORD_KEYS,
        *((f"roll_{i + 1}", "int32") for i in range(r)),
        *((f"keep_{i + 1}", "int32") for i in range(r - 1)),
        ("box", "dictionary<values=string, indices=int8, ordered=0>"),
        ("score", "int16"),
        ("extra", "int16"),
        ("first_roll", "bool"),
    ]
    assert [(f.name, str(f.type)) for f in schema] == want


# ---------------------------------------------------------------------------------------------
# bad games of a run: the arrays' checks flag exactly what validate_record refuses


def _tamper(run_dir, change):
    """Rewrite every records file of ``run_dir`` through ``change(table dict, rules)`` and fix the
    manifest's checksums (as a run with wrong records but sound files)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.records.rundir import MANIFEST, dumps_manifest, file_sha256, load_manifest

    m = load_manifest(run_dir)
    for c in m["chunks"]:
        path = run_dir / c["file"].replace("chunks/", "records/")
        t = pq.read_table(path)
        cols = {k: t.column(k).to_numpy().copy() for k in t.column_names if k != "box"}
        box = t.column("box").combine_chunks()
        cols["box"] = box.indices.to_numpy().copy()
        change(cols, c["start"])
        out = {k: pa.array(v) for k, v in cols.items()}
        out["box"] = pa.DictionaryArray.from_arrays(pa.array(cols["box"]), box.dictionary)
        pq.write_table(pa.table({k: out[k] for k in t.column_names}), path)
        c["records_sha256"] = file_sha256(path)
    (run_dir / MANIFEST).write_text(dumps_manifest(m))


def test_the_bad_games_of_a_run_are_those_validate_record_refuses(runs, tmp_path):
    import shutil

    src = runs["scandinavian"]
    run_dir = tmp_path / "run"
    shutil.copytree(src, run_dir)
    nb = _rules("scandinavian").n_boxes
    per_game = 2 * nb  # rows

    def change(cols, start):
        row = lambda g, s, t: (g - start) * per_game + s * nb + t  # noqa: E731
        games = range(start, start + CHUNK)
        if 0 in games:
            cols["score"][row(0, 1, 3)] += 1  # a score
        if 1 in games:
            cols["box"][row(1, 0, 4)] = cols["box"][row(1, 0, 5)]  # a box written twice
        if 2 in games:
            cols["extra"][row(2, 0, 0)] = 50  # an extra bonus not earned
        if 5 in games:  # a keep not in its roll
            i = next(i for i in range(row(5, 0, 0), row(6, 0, 0)) if cols["roll_2"][i])
            cols["keep_1"][i] = int(next(f for f in "123456" if f not in str(cols["roll_1"][i])))
        if 6 in games:
            i = row(6, 0, 2)  # a gap between rolls (irregular)
            cols["roll_2"][i], cols["roll_3"][i] = 0, cols["roll_2"][i] or cols["roll_1"][i]
        if 9 in games:
            cols["roll_1"][row(9, 1, 0)] = 1234  # four dice (irregular)
        if 10 in games:  # kept every die, then rolled on
            i = next(i for i in range(row(10, 0, 0), row(11, 0, 0)) if cols["roll_2"][i])
            cols["keep_1"][i] = cols["roll_1"][i]

    _tamper(run_dir, change)
    res = read_records(run_dir)
    want = []
    for lu, rec in records_of_run(run_dir):
        try:
            validate_record(rec)
        except UserError as exc:
            want.append((rec.game, f"{run_dir} lineup {lu}: {exc}"))
    assert [tuple(b) for b in res.errors] == want and len(want) >= 5
    good = [rec for _, rec in records_of_run(run_dir) if rec.game not in {g for g, _ in want}]
    assert list(res.games) == good and len(res.arrays) == len(good)
    _same_arrays(res.arrays.arrays(), arrays_of_records(good, _rules("scandinavian")))


def test_a_code_that_is_no_dice_is_named_as_before(runs, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(runs["forced"], run_dir)

    nb = _rules("forced").n_boxes

    def change(cols, start):
        if start == 4:
            cols["roll_1"][3 * 2 * nb + nb + 2] = 17  # game 7, seat 1, turn 3

    _tamper(run_dir, change)
    with pytest.raises(UserError, match=r"part-L0000-G000000000004\.parquet: game 7 seat 1: 17 is not a dice code$"):
        read_records(run_dir)
    with pytest.raises(UserError, match="17 is not a dice code"):
        list(records_of_run(run_dir, games=[7]))
    assert len(list(records_of_run(run_dir, games=[6]))) == 1


def test_record_from_trace_is_the_codecs():
    from harness.records import record

    assert record.record_from_trace is record_from_trace and record.records_of_run is records_of_run
    assert record.GameRecord is GameRecord

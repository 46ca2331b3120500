"""The run directory: chunk checksums verified on resume and on read, I/O failures as one line, no debris."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from harness.records import rundir
from harness.cli import main
from harness.util.errors import UserError
from harness.records.rundir import MANIFEST, load_manifest, load_run, rows_digest, write_bytes_atomic
from harness.play.runconfig import RunConfig
from harness.play.runner import run
from harness.reports.summary import summarize


def cfg(**kw) -> RunConfig:
    base = dict(seats=("timeout", "random"), rules="scandinavian", games=300, seed=11, chunk_size=100, workers=1)
    base.update(kw)
    return RunConfig(**base)


def chunk_bytes(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "chunks").iterdir())}


def flip_middle(path: Path, n: int = 64) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + n] = bytes(b ^ 0xFF for b in data[mid : mid + n])
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    return run(cfg(), tmp_path_factory.mktemp("ref") / "run")


def test_manifest_records_each_chunks_sha256(reference):
    m = load_manifest(reference)
    assert len(m["chunks"]) == 3
    for c in m["chunks"]:
        assert c["sha256"] == rundir.file_sha256(reference / c["file"])


def test_damaged_chunk_is_refused_on_read_and_replayed_on_resume(tmp_path, reference, capsys):
    out = run(cfg(), tmp_path / "run")
    victim = out / load_manifest(out)["chunks"][1]["file"]
    flip_middle(victim)
    # on read: one line naming the chunk and the command that repairs it
    with pytest.raises(UserError, match=rf"{victim.name}: damaged .*sha256.*yatzy-harness run --resume {out}"):
        summarize(out)
    assert main(["report", str(out), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "damaged" in err[0]
    # on resume: the chunk is played again, byte for byte what an undamaged run holds
    run(cfg(), out, resume=True)
    assert chunk_bytes(out) == chunk_bytes(reference)
    assert rows_digest(out) == rows_digest(reference)
    assert summarize(out).to_dict()["entrants"] == summarize(reference).to_dict()["entrants"]


def test_chunk_missing_from_the_manifest_is_replayed(tmp_path, reference):
    """A crash between writing a chunk and recording it: the file cannot be verified, so it is replayed."""
    out = run(cfg(), tmp_path / "run")
    m = load_manifest(out)
    victim = out / m["chunks"][2]["file"]
    flip_middle(victim)
    m["chunks"] = m["chunks"][:2]
    m["complete"] = False
    rundir.write_json_atomic(out / MANIFEST, m)
    run(cfg(), out, resume=True)
    assert chunk_bytes(out) == chunk_bytes(reference)


def test_write_bytes_atomic_leaves_nothing_behind_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rundir.os, "fsync", full_disk)
    with pytest.raises(OSError):
        write_bytes_atomic(target, b"new content")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.bin"]


def test_full_disk_mid_run_is_one_line_resumable_and_leaves_no_temp_file(tmp_path, reference, monkeypatch, capsys):
    out = tmp_path / "run"
    real_fsync = rundir.os.fsync
    calls = {"chunks": 0}
    real_write = rundir.write_bytes_atomic

    def flaky(path, data):
        if path.suffix == ".parquet":
            calls["chunks"] += 1
            if calls["chunks"] == 2:  # the second chunk hits a full disk after its temp file exists

                def no_space(fd):
                    raise OSError(errno.ENOSPC, "No space left on device")

                rundir.os.fsync = no_space
                try:
                    return real_write(path, data)
                finally:
                    rundir.os.fsync = real_fsync
        return real_write(path, data)

    monkeypatch.setattr("harness.play.runner.write_bytes_atomic", flaky)
    code = main(
        [
            "run",
            "--seats",
            "timeout,random",
            "--games",
            "300",
            "--seed",
            "11",
            "--chunk-size",
            "100",
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "No space left on device" in err[0] and f"yatzy-harness run --resume {out}" in err[0]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert len(load_manifest(out)["chunks"]) == 1  # what was complete is recorded
    monkeypatch.undo()
    run(cfg(), out, resume=True)
    assert chunk_bytes(out) == chunk_bytes(reference)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--seats", "timeout,random", "--games", "10", "--out", "/proc/yatzy-harness-x", "--quiet"],
        ["report", "{run}", "--out", "/proc/yatzy-harness-x", "--no-plots"],
    ],
)
def test_unwritable_output_is_one_line_exit_2(argv, reference, capsys):
    argv = [a.replace("{run}", str(reference)) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert (
        len(err) == 1 and err[0].startswith("yatzy-harness: error: cannot write") and "/proc/yatzy-harness-x" in err[0]
    )
    assert "Traceback" not in captured.err


def test_load_run_reads_a_run_directory_in_one_place(reference):
    info = load_run(reference)
    assert info.games == 300 and info.complete and info.lineups == (("timeout", "random"),)
    assert all(ref.sha256 for refs in info.chunks for ref in refs)
    assert json.loads((reference / MANIFEST).read_text())["chunks"][0]["sha256"] == info.chunks[0][0].sha256


# ---------------------------------------------------------------------------------------------
# records (run --record)


def record_bytes(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "records").iterdir())}


def test_run_records_hold_every_roll_and_decision_reproducibly(tmp_path):
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    from harness.game.loop import play
    from harness.game.registry import make
    from harness.game.rules import load_rules
    from harness.records.codec import faces_code

    one = run(cfg(seats=("greedy", "random"), record=True, games=200, workers=1), tmp_path / "one")
    two = run(cfg(seats=("greedy", "random"), record=True, games=200, workers=2), tmp_path / "two")
    assert record_bytes(one) == record_bytes(two)  # the worker count changes nothing
    m = load_manifest(one)
    assert all(
        c["records_sha256"] == rundir.file_sha256(one / c["file"].replace("chunks/", "records/")) for c in m["chunks"]
    )
    t = pd.concat(pq.read_table(p).to_pandas() for p in sorted((one / "records").iterdir()))
    rules = load_rules("scandinavian")
    res = play(rules, [make("greedy", rules), make("random", rules)], np.arange(200), 11, record=True)
    rec = res.recording
    assert len(t) == 200 * 2 * rules.n_boxes
    assert (t["roll_1"].to_numpy() == faces_code(rules.dice.roll_faces)[rec.rolls[..., 0].reshape(-1)]).all()
    assert (t["score"].to_numpy() == rec.scores.reshape(-1)).all()
    assert list(t["box"].astype(str)[:3]) == [rules.box_names[b] for b in rec.boxes[0, 0, :3]]
    # per seat-game, points written + bonus + extras = the chunk rows' totals
    rows = pd.concat(pq.read_table(p).to_pandas() for p in sorted((one / "chunks").iterdir()))
    written = t.groupby(["game", "seat"])["score"].sum().to_numpy()
    assert (written + rows["bonus"].to_numpy() == rows["total"].to_numpy()).all()


def test_faces_code():
    import numpy as np

    from harness.records.codec import faces_code

    assert faces_code(np.array([[6, 6, 2, 4, 1], [0, 0, 0, 0, 0], [5, 0, 5, 0, 0]])).tolist() == [12466, 0, 55]


def test_damaged_records_are_replayed_and_record_is_part_of_the_runs_identity(tmp_path):
    ref = run(cfg(record=True), tmp_path / "ref")
    out = run(cfg(record=True), tmp_path / "run")
    victim = sorted((out / "records").iterdir())[1]
    flip_middle(victim)
    run(cfg(record=True), out, resume=True)
    assert record_bytes(out) == record_bytes(ref) and chunk_bytes(out) == chunk_bytes(ref)
    with pytest.raises(UserError, match=r"record"):
        run(cfg(), out, resume=True)  # resuming without --record would leave chunks without records


@pytest.mark.parametrize(
    "typ", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
)
def test_numpy_of_equals_pyarrows_own_conversion(typ):
    """rundir.numpy_of reads a column from its buffers (pyarrow's to_numpy imports pandas): the same
    values and dtype as to_numpy, for every chunking and offset, and nulls or strings go to to_numpy."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    values = rng.integers(0, 2, 203).astype(bool) if typ == "bool" else (rng.random(203) * 100).astype(typ)
    arr = pa.array(values)
    table = pa.Table.from_batches([pa.record_batch([arr.slice(0, 70)], ["x"]), pa.record_batch([arr.slice(70)], ["x"])])
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, row_group_size=50)
    read = rundir.read_parquet(pa.BufferReader(buf.getvalue()))
    for col in (
        arr,
        arr.slice(3, 150),
        arr.slice(9),
        table.column("x"),
        table.column("x").slice(65, 20),
        read.column("x"),
        arr.slice(5, 0),
    ):
        got, want = rundir.numpy_of(col), col.to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    with_null = pa.array([True, None, False] if typ == "bool" else [1, None, 3], type=typ)
    got = rundir.numpy_of(with_null)
    assert np.array_equal(got, with_null.to_numpy(zero_copy_only=False), equal_nan=got.dtype.kind == "f")
    empty = pa.array([], type=typ)
    for col in (empty, pa.chunked_array([], type=typ), pa.chunked_array([empty, arr.slice(0, 3)])):
        got, want = rundir.numpy_of(col), col.to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    strings = pa.array(["a", "b"])
    assert rundir.numpy_of(strings).tolist() == ["a", "b"]

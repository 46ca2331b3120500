"""The runner: configs, lineups, chunk plan, reproducibility across workers/chunks/backends, resume, faults."""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness import cli
from harness.game import tournament
from harness.game.loop import play
from harness.util.errors import UserError
from harness.records.rundir import Chunk, load_manifest, plan, rows_digest
from harness.game.registry import make
from harness.game.rules import load_rules
from harness.game.strategy import Strategy
from harness.play.runconfig import RunConfig, builtin_run_configs_dir, split_specs
from harness.play.runner import RunStopped, extend, run
from harness.play.summary import summary_lines
from tests import runner_bots  # registers the test bots
from tests.test_cli import screen

TESTS = Path(__file__).resolve().parent


def files(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "chunks").iterdir())}


def cfg(**kw) -> RunConfig:
    base = dict(seats=("timeout", "random"), rules="scandinavian", games=300, seed=11, chunk_size=100, workers=1)
    base.update(kw)
    return RunConfig(**base)


# ---------------------------------------------------------------------------------------------
# configs


def test_config_errors_name_file_and_key(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('seats = ["greedy"]\ngames = 10\ncolour = "red"\n')
    with pytest.raises(UserError, match=r"bad\.toml: unknown key 'colour'"):
        RunConfig.from_toml(p)
    p.write_text('seats = ["greedy"]\ngames = -3\n')
    with pytest.raises(UserError, match=r"bad\.toml: games must be 1\.\.\d+, got -3"):
        RunConfig.from_toml(p)
    p.write_text('seats = ["greedy"]\nworkers = true\n')
    with pytest.raises(UserError, match=r"bad\.toml: workers must be a whole number, got True"):
        RunConfig.from_toml(p)
    p.write_text('mode = "tournament"\nentrants = ["greedy"]\n')
    with pytest.raises(UserError, match=r"bad\.toml: a tournament at 2-seat tables needs at least 2 entrants, got 1"):
        RunConfig.from_toml(p)
    p.write_text('seats = ["greedy"]\nscheduler = "tcp://x:1"\n')
    with pytest.raises(UserError, match=r"bad\.toml: scheduler 'tcp://x:1' needs backend = \"dask\""):
        RunConfig.from_toml(p)
    p.write_text('seats = ["greedy", "nosuchbot"]\n')
    with pytest.raises(UserError, match=r"bad\.toml: seats\[1\]: unknown strategy 'nosuchbot'"):
        RunConfig.from_toml(p).resolve()
    p.write_text('seats = ["greedy:depth=3"]\n')
    with pytest.raises(UserError, match=r"bad\.toml: seats\[0\]: strategy 'greedy': unknown parameter 'depth'"):
        RunConfig.from_toml(p).resolve()
    p.write_text('seats = ["greedy"]\n[settings]\nupper_bonus_thresold = 60\n')
    with pytest.raises(UserError, match=r"bad\.toml: .*unknown setting 'upper_bonus_thresold'"):
        RunConfig.from_toml(p).resolve()
    p.write_text('mode = "tournament"\nentrants = ["greedy", "greedy"]\n')
    with pytest.raises(UserError, match=r"entrants\[1\]: 'greedy' duplicates entrant 'greedy'"):
        RunConfig.from_toml(p).resolve()
    with pytest.raises(UserError, match="run config not found"):
        RunConfig.from_toml(tmp_path / "missing.toml")


def test_config_round_trip_and_overrides(tmp_path):
    rules = tmp_path / "my_rules.toml"
    rules.write_text((Path(load_rules("scandinavian").source)).read_text())
    p = tmp_path / "t.toml"
    p.write_text(
        'mode = "tournament"\nrules = "my_rules.toml"\nentrants = "random,timeout,greedy"\n'
        "games = 500\n[settings]\nupper_bonus_value = 40\n"
    )
    c = RunConfig.from_toml(p)
    assert c.rules == str(rules.resolve())  # relative to the config file
    assert c.entrants == ("random", "timeout", "greedy") and c.name == "t"
    assert RunConfig.from_dict(c.to_dict()) == c
    assert hash(RunConfig.from_dict(c.to_dict())) == hash(c)
    assert c.with_overrides(settings={"upper_bonus_value": "40"}) == c  # --set strings are stored typed
    d = c.with_overrides(games=7, workers=None, seed=5)
    assert (d.games, d.seed, d.workers) == (7, 5, 0)
    assert d.identity() == c.identity() | {"seed": 5}
    with pytest.raises(UserError, match="chunk_size must be 1..1000000, got 0"):
        c.with_overrides(chunk_size=0)
    r = c.resolve()
    assert r.rules.bonus_value == 40 and len(r.lineups) == 6


def test_example_configs_resolve():
    names = sorted(p.name for p in builtin_run_configs_dir().glob("*.toml"))
    assert {"quick.toml", "head_to_head.toml", "round_robin.toml", "gauntlet.toml", "table4.toml"} <= set(names)
    for name in names:
        RunConfig.from_toml(builtin_run_configs_dir() / name).resolve()
    quick = RunConfig.from_toml(builtin_run_configs_dir() / "quick.toml")
    assert quick.mode == "tournament" and quick.entrants == ("random", "timeout", "greedy")


def test_split_specs():
    assert split_specs("solver:temperature=0.5,blunder=0.1,greedy") == ["solver:temperature=0.5,blunder=0.1", "greedy"]
    assert split_specs("a, b:x=1 ,c") == ["a", "b:x=1", "c"]
    with pytest.raises(UserError, match="empty strategy spec"):
        split_specs("a,,b")


# ---------------------------------------------------------------------------------------------
# lineups and the chunk plan


def test_lineups():
    assert tournament.round_robin(["a", "b", "c"]) == [
        ("a", "b"),
        ("b", "a"),
        ("a", "c"),
        ("c", "a"),
        ("b", "c"),
        ("c", "b"),
    ]
    four = tournament.round_robin(["a", "b", "c", "d"], 3)
    assert len(four) == 12 and len(set(four)) == 12
    for e in "abcd":  # every entrant sits in every seat equally often
        assert [sum(lu[s] == e for lu in four) for s in range(3)] == [3, 3, 3]
    assert tournament.rotations("abc") == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert tournament.gauntlet("x", ["a", "b"]) == [("x", "a"), ("a", "x"), ("x", "b"), ("b", "x")]
    assert tournament.single(["g", "g"]) == [("g", "g")]


def test_plan_cuts_gaps_on_the_chunk_grid():
    assert plan(1, 250, 100) == [Chunk(0, 0, 100), Chunk(0, 100, 200), Chunk(0, 200, 250)]
    full = plan(2, 250, 100)
    assert [c.start for c in full] == [0, 0, 100, 100, 200, 200]  # game-major: tournaments stay balanced
    done = [Chunk(0, 0, 100), Chunk(1, 100, 200)]
    assert plan(2, 250, 100, done) == sorted(set(full) - set(done), key=lambda c: (c.start, c.lineup))
    # extending 250 -> 420 after a complete run: the ragged tail chunk stays, new chunks follow the grid
    assert plan(1, 420, 100, plan(1, 250, 100)) == [Chunk(0, 250, 300), Chunk(0, 300, 400), Chunk(0, 400, 420)]


# ---------------------------------------------------------------------------------------------
# results and reproducibility


def test_rows_are_the_engine_frame_plus_lineup(tmp_path):
    c = cfg(mode="tournament", seats=(), entrants=("timeout", "random", "greedy"), games=120, chunk_size=50)
    out = run(c, tmp_path / "r")
    m = load_manifest(out)
    assert m["format"] == 1 and m["kind"] == "tournament" and m["complete"] is True
    assert m["lineups"] == [
        ["timeout", "random"],
        ["random", "timeout"],
        ["timeout", "greedy"],
        ["greedy", "timeout"],
        ["random", "greedy"],
        ["greedy", "random"],
    ]
    assert [e["label"] for e in m["entrants"]] == ["timeout", "random", "greedy"]
    assert (m["games"], m["seed"], m["chunk_size"]) == (120, 11, 50)
    first = m["chunks"][0]
    assert len(m["chunks"]) == 18 and {k: v for k, v in first.items() if k != "sha256"} == {
        "lineup": 0,
        "start": 0,
        "stop": 50,
        "file": "chunks/part-L0000-G000000000000.parquet",
    }
    assert first["sha256"] == hashlib.sha256((out / first["file"]).read_bytes()).hexdigest()
    assert m["rules"]["digest"] == load_rules("scandinavian").digest and m["config"]["games"] == 120
    assert {"python", "numpy", "pyarrow", "pandas", "numba"} <= set(m["versions"])
    rules = load_rules("scandinavian")
    for lineup in (1, 4):
        labels = m["lineups"][lineup]
        want = play(rules, [make(x, rules) for x in labels], np.arange(120), 11).to_frame()
        got = pd.concat(
            [pq.read_table(out / ch["file"]).to_pandas() for ch in m["chunks"] if ch["lineup"] == lineup],
            ignore_index=True,
        )
        assert list(got.columns) == ["lineup"] + list(want.columns)
        assert str(got["lineup"].dtype) == "int16" and (got["lineup"] == lineup).all()
        assert list(got["strategy"].cat.categories) == ["greedy", "random", "timeout"]  # one dictionary per run
        pd.testing.assert_frame_equal(
            got.drop(columns="lineup").assign(strategy=got["strategy"].astype(str)),
            want.assign(strategy=want["strategy"].astype(str)),
        )
    # the manifest's exact sums match the files
    rows = pd.concat([pq.read_table(p).to_pandas() for p in sorted((out / "chunks").iterdir())])
    for label, (n, s, ss, w, sh) in m["totals"].items():
        t = rows.loc[rows["strategy"] == label, "total"].astype(np.int64)
        o = rows.loc[rows["strategy"] == label, "outcome"]
        assert (n, s, ss, w, sh) == (len(t), t.sum(), (t * t).sum(), (o == 2).sum(), (o == 1).sum())
    lines = summary_lines(m)
    assert len(lines) == 4 and lines[2].split()[0] == "greedy" and lines[3].startswith("  (win = sole")
    assert f"{m['totals']['greedy'][1] / 480:7.2f}" in lines[2]


def test_workers_1_and_2_write_identical_files(tmp_path):
    a = run(cfg(workers=1), tmp_path / "w1")
    b = run(cfg(workers=2), tmp_path / "w2")
    fa, fb = files(a), files(b)
    assert len(fa) == 3 and fa == fb
    assert rows_digest(a) == rows_digest(b)


def test_chunk_size_changes_files_not_rows(tmp_path):
    a = run(cfg(chunk_size=100), tmp_path / "c100")
    b = run(cfg(chunk_size=70, workers=2), tmp_path / "c70")
    assert len(files(a)) == 3 and len(files(b)) == 5
    assert rows_digest(a) == rows_digest(b)
    c = run(cfg(seed=12), tmp_path / "s12")
    assert rows_digest(c) != rows_digest(a)  # the digest does see the rows


def test_dask_backend_writes_identical_files(tmp_path):
    pytest.importorskip("distributed")
    a = run(cfg(workers=1), tmp_path / "local")
    b = run(cfg(workers=2, backend="dask", scheduler="inprocess"), tmp_path / "dask")
    assert files(a) == files(b)
    assert load_manifest(b)["versions"]["distributed"] != "not installed"


def test_extend_equals_one_long_run(tmp_path):
    long = run(cfg(games=420), tmp_path / "long")
    grown = run(cfg(games=250), tmp_path / "grown")
    assert extend(grown, 420, workers=2) == grown
    m = load_manifest(grown)
    assert m["games"] == 420 and m["complete"] and [c["stop"] for c in m["chunks"]] == [100, 200, 250, 300, 400, 420]
    assert rows_digest(grown) == rows_digest(long)
    assert m["totals"] == load_manifest(long)["totals"]
    with pytest.raises(UserError, match="games_range must start at 420, got 300"):
        run(cfg(), grown, games_range=(300, 500))
    with pytest.raises(UserError, match="cannot extend to 100"):
        extend(grown, 100)


def test_resume_refuses_a_changed_config_and_a_used_directory(tmp_path):
    out = run(cfg(), tmp_path / "r")
    with pytest.raises(UserError, match=r"exists and is not empty \(it holds a run: resume it with resume=True\)"):
        run(cfg(), out)
    assert "--" not in str(pytest.raises(UserError, run, cfg(), out).value)  # the library names no CLI flag
    assert cli.main(["run", "--seats", "random,timeout", "--games", "10", "--out", str(out), "--quiet"]) == 2
    with pytest.raises(UserError, match=r"cannot resume .* differs in seed \(run has 11, now 12\)"):
        run(cfg(seed=12), out, resume=True)
    with pytest.raises(UserError, match=r"differs in seats"):
        run(cfg(seats=("random", "timeout")), out, resume=True)
    with pytest.raises(UserError, match=r"differs in settings"):
        run(cfg(settings={"upper_bonus_value": 45}), out, resume=True)
    with pytest.raises(UserError, match="a run never shrinks"):
        run(cfg(games=200), out, resume=True)
    with pytest.raises(UserError, match="nothing to resume"):
        run(cfg(), tmp_path / "none", resume=True)
    before = files(out)
    run(cfg(workers=2), out, resume=True)  # execution keys may change; nothing to do
    assert files(out) == before


def test_resume_redoes_partial_and_damaged_chunks(tmp_path):
    ref = run(cfg(games=500), tmp_path / "ref")
    out = run(cfg(games=500), tmp_path / "r")
    chunks = sorted((out / "chunks").iterdir())
    chunks[1].write_bytes(chunks[1].read_bytes()[:1000])  # damaged
    chunks[3].rename(chunks[3].with_name(chunks[3].name + ".tmp"))  # partial
    chunks[4].unlink()  # missing
    run(cfg(games=500, workers=2), out, resume=True)
    assert files(out) == files(ref)
    assert load_manifest(out)["totals"] == load_manifest(ref)["totals"]


# ---------------------------------------------------------------------------------------------
# faults


def test_failing_bot_is_reported_with_game_and_traceback(tmp_path):
    c = cfg(seats=("random", "faulty"), games=400, chunk_size=50, workers=2)
    with pytest.raises(
        RunStopped,
        match=r"bot faulty \(seat 1, lineup 0 random/faulty\) failed in game 137 "
        r"at turn 4 \(keep after roll 1\), seed 11: ZeroDivisionError",
    ) as info:
        run(c, tmp_path / "r")
    out = tmp_path / "r"
    assert info.value.failure.game == 137 and info.value.failure.label == "faulty"
    logtext = (out / "run.log").read_text()
    assert "bot faulty (seat 1, lineup 0 random/faulty) failed in game 137" in logtext
    assert "Traceback (most recent call last)" in logtext and "in _explode" in logtext
    assert "return np.array([1 // 0])" in logtext
    assert f"replay:  yatzy-harness replay --run {out} --lineup 0 --game 137" in str(info.value)
    assert logtext.count("Traceback (most recent call last)") == 1 and "During handling" not in logtext
    assert "ForkProcess" in logtext  # the worker's own record reached the parent's log
    m = load_manifest(out)
    assert m["complete"] is False
    names = set(files(out))
    assert "part-L0000-G000000000100.parquet" not in names and "part-L0000-G000000000000.parquet" in names
    assert {ch["file"].split("/")[1] for ch in m["chunks"]} == names
    for name in names:  # what was written is whole
        assert pq.read_metadata(out / "chunks" / name).num_rows == 100
    runner_bots.FaultyBot.armed = False
    try:
        run(c, out, resume=True)
        ref = run(c, tmp_path / "ref")
    finally:
        runner_bots.FaultyBot.armed = True
    assert files(out) == files(ref) and load_manifest(out)["complete"]


def test_failing_bot_in_process_names_game(tmp_path):
    with pytest.raises(RunStopped, match="failed in game 137"):
        run(cfg(seats=("faulty", "timeout"), games=300, chunk_size=300, workers=1), tmp_path / "r")
    assert "in _explode" in (tmp_path / "r" / "run.log").read_text()


def test_failing_warm_up_game_is_reported_like_a_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(runner_bots.FaultyBot, "FAIL_AT", 0)  # game 0 is the parent's warm-up game
    with pytest.raises(
        RunStopped,
        match=r"bot faulty \(seat 0, lineup 0 faulty/timeout\) failed in game 0 \(its "
        r"warm-up game, before any chunk\) at turn 4 \(keep after roll 1\)",
    ) as info:
        run(cfg(seats=("faulty", "timeout"), games=100, chunk_size=50, workers=2), tmp_path / "r")
    assert info.value.failure.game == 0 and info.value.failure.label == "faulty"
    assert f"replay:  yatzy-harness replay --run {tmp_path / 'r'} --lineup 0 --game 0" in str(info.value)
    assert (tmp_path / "r" / "run.log").read_text().count("in _explode") == 1


def test_worker_log_records_reach_the_parent_handler(tmp_path):
    got: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.append(record)

    h = Keep(level=logging.WARNING)
    root = logging.getLogger()
    root.addHandler(h)
    try:
        run(cfg(seats=("chatty", "random"), games=200, chunk_size=100, workers=2), tmp_path / "r")
    finally:
        root.removeHandler(h)
    chatty = [r for r in got if r.name == "tests.runner_bots" and r.process != os.getpid()]
    assert sorted(r.getMessage().split(" in pid")[0] for r in chatty) == [
        "chatty bot playing games 0..99",
        "chatty bot playing games 100..199",
    ]
    assert all(r.processName.startswith("ForkProcess") for r in chatty)
    assert "chatty bot playing games 100..199" in (tmp_path / "r" / "run.log").read_text()
    assert root.handlers.count(h) == 0 and not any(type(x).__name__ == "MultiProcessingHandler" for x in root.handlers)


def test_a_parent_record_is_handled_at_once_under_forked_workers(tmp_path):
    """With forked workers the root handlers are wrapped so that the workers' records reach them
    (above); the parent's own records are handled there and then, by the thread that logs them.
    Queued, the runner's "interrupted" warning was written by the wrapper's thread while the
    progress bar was being closed, onto the end of the bar's line (issue 37)."""
    from harness.util.backends import run_logging

    got: list[tuple[str, str]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.append((record.getMessage(), threading.current_thread().name))

    h = Keep(level=logging.WARNING)
    root = logging.getLogger()
    root.addHandler(h)
    try:
        with run_logging(tmp_path / "run.log", forked_workers=True):
            assert any(type(x).__name__ != "Keep" and getattr(x, "sub_handler", None) is h for x in root.handlers)
            logging.getLogger("harness.play.runner").warning("said in the parent")
            assert got == [("said in the parent", threading.current_thread().name)]
    finally:
        root.removeHandler(h)
    assert "said in the parent" in (tmp_path / "run.log").read_text()


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import tests.runner_bots
    from harness import cli
    sys.exit(cli.main(sys.argv[1:]))
""")


def _cli_subprocess(
    tmp_path: Path, args: list[str], env_extra: dict[str, str], tty: bool = False
) -> subprocess.CompletedProcess:
    """The command in a child process; ``tty``: its stderr a pseudo-terminal of 100 x 30 (``run``
    draws its bar only on a terminal), read back with the terminal's line ends made plain."""
    script = tmp_path / "yh.py"
    script.write_text(SCRIPT.format(root=str(TESTS.parent)))
    env = {**os.environ, **env_extra}
    # a test session started in the background (``cmd &``, nohup) ignores SIGINT, and the child
    # would inherit that: Ctrl-C is what these tests send, so give the child the default handling
    kw: dict = dict(
        env=env,
        text=True,
        timeout=300,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    if not tty:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True, **kw)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:  # a terminal holds a few KiB: read while the child writes
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc = subprocess.run([sys.executable, str(script), *args], stdout=subprocess.PIPE, stderr=slave, **kw)
    finally:
        os.close(slave)
        reader.join(10)
        os.close(master)
    err = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, err)


def _no_process_mentions(text: str) -> bool:
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text in (d / "cmdline").read_bytes().decode(errors="replace"):
                    return False
            except OSError:
                continue
    return True


TRIP = dict(seats=("tripwire", "random"), games=1200, chunk_size=100, seed=5)
TRIP_ARGS = ["run", "--seats", "tripwire,random", "--games", "1200", "--chunk-size", "100", "--seed", "5", "--quiet"]


@pytest.fixture(scope="module")
def tripwire_ref(tmp_path_factory) -> Path:
    """The uninterrupted run the interrupted ones must end up equal to."""
    return run(RunConfig(**TRIP, workers=1), tmp_path_factory.mktemp("ref") / "ref")


def _trip_env(marker: Path, signame: str, parent: bool) -> dict[str, str]:
    marker.write_text("")
    env = {"YH_TRIP_FILE": str(marker), "YH_TRIP_GAME": "650", "YH_TRIP_SIGNAL": signame}
    return env | ({"YH_TRIP_PARENT": "1"} if parent else {})


def _resume_and_compare(out: Path, ref: Path, monkeypatch, capsys, workers: int = 2, kept: bool = False) -> None:
    m = load_manifest(out)
    assert m["complete"] is False
    # SIGKILL loses the chunk in flight; Ctrl-C lets it end its sub-batch (here the whole chunk)
    assert ("part-L0000-G000000000600.parquet" in files(out)) == kept
    assert cli.main(["run", "--resume", str(out), "--workers", "2", "--quiet"]) == 0
    assert "tripwire  mean" in capsys.readouterr().out
    assert files(out) == files(ref) and len(files(ref)) == 12
    m = load_manifest(out)
    assert m["complete"] and m["totals"] == load_manifest(ref)["totals"]
    assert [h["workers"] for h in m["history"]] == [workers, 2]


def test_sigkilled_run_resumes_identically(tmp_path, tripwire_ref, monkeypatch, capsys):
    out, marker = tmp_path / "killed", tmp_path / "armed"
    proc = _cli_subprocess(
        tmp_path, TRIP_ARGS + ["--workers", "2", "--out", str(out)], _trip_env(marker, "KILL", parent=True)
    )
    assert not marker.exists() and proc.returncode == -signal.SIGKILL  # a worker SIGKILLed the runner at game 650
    import time

    for _ in range(100):  # the orphaned worker dies with its parent (PR_SET_PDEATHSIG)
        if _no_process_mentions(str(out)):
            break
        time.sleep(0.1)
    assert _no_process_mentions(str(out))
    _resume_and_compare(out, tripwire_ref, monkeypatch, capsys)


def test_ctrl_c_stops_workers_and_resumes_identically(tmp_path, tripwire_ref, monkeypatch, capsys):
    out, marker = tmp_path / "interrupted", tmp_path / "armed"
    proc = _cli_subprocess(
        tmp_path, TRIP_ARGS + ["--workers", "2", "--out", str(out)], _trip_env(marker, "INT", parent=True)
    )
    assert not marker.exists() and proc.returncode == 130, proc.stderr
    assert f"continue with: yatzy-harness run --resume {out}" in proc.stderr
    assert "interrupted:" in (out / "run.log").read_text()
    _resume_and_compare(out, tripwire_ref, monkeypatch, capsys, kept=True)


@pytest.fixture
def sigint_default():
    """Ctrl-C raises KeyboardInterrupt during the test, even in a session started in the background
    (which ignores SIGINT); the session's own handling is restored after."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_in_process_run(tmp_path, tripwire_ref, monkeypatch, capsys, sigint_default):
    out, marker = tmp_path / "interrupted", tmp_path / "armed"
    for k, v in _trip_env(marker, "INT", parent=False).items():
        monkeypatch.setenv(k, v)
    assert cli.main(TRIP_ARGS + ["--workers", "1", "--out", str(out)]) == 130
    assert not marker.exists()
    err = capsys.readouterr().err
    assert (
        err == f"yatzy-harness: interrupted: 700 of 1,200 games kept; continue with: yatzy-harness run --resume {out}\n"
    )
    assert sorted(files(out)) == [f"part-L0000-G{g:012d}.parquet" for g in range(0, 700, 100)]
    _resume_and_compare(out, tripwire_ref, monkeypatch, capsys, workers=1, kept=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_under_a_progress_bar_starts_its_lines_afresh(tmp_path, tripwire_ref, workers):
    """Ctrl-C while the bar is drawn (issue 37): the runner's warning and the command's line each
    start a line of their own, not glued to the end of the bar's line. In this process (1 worker)
    and with forked workers, whose log records reach the console through a queue and a thread: the
    parent's own warning must not wait there while the bar is closed."""
    out, marker = tmp_path / "interrupted", tmp_path / "armed"
    args = [a for a in TRIP_ARGS if a != "--quiet"] + ["--workers", str(workers), "--out", str(out)]
    proc = _cli_subprocess(tmp_path, args, _trip_env(marker, "INT", parent=workers > 1), tty=True)
    assert not marker.exists() and proc.returncode == 130, proc.stderr
    assert "game/s]" in proc.stderr  # the bar was drawn (stderr is a terminal)
    said = [line for line in screen(proc.stderr) if line.strip() and "game/s]" not in line]
    # one line (issue 49): the bar is erased, the runner's warning goes to run.log only
    assert len(said) == 1, said
    assert said[0].startswith("yatzy-harness: interrupted: ") and " of 1,200 games kept; " in said[0]
    assert said[0].endswith(f"continue with: yatzy-harness run --resume {out}")
    assert "interrupted:" in (out / "run.log").read_text()


def test_run_draws_no_bar_into_a_log_file(tmp_path):
    """stderr a file or a pipe (a log): no bar, not a carriage return (issue 52); the summary on stdout."""
    args = [a for a in TRIP_ARGS if a not in ("--quiet", "tripwire,random")]
    args = [*args[:2], "random,timeout", *args[2:], "--workers", "1", "--out", str(tmp_path / "r")]
    proc = _cli_subprocess(tmp_path, args, {})
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "game/s" not in proc.stderr and "\x1b" not in proc.stderr
    assert "results:" in proc.stdout


# ---------------------------------------------------------------------------------------------
# command line


def test_cli_flags_override_the_file(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text('mode = "tournament"\nentrants = ["random", "timeout", "greedy"]\ngames = 5000\nseed = 3\n')
    out = tmp_path / "o"
    code = cli.main(
        [
            "run",
            str(conf),
            "--seats",
            "timeout,random",
            "--games",
            "150",
            "--chunk-size",
            "60",
            "--workers",
            "1",
            "--seed",
            "8",
            "--set",
            "upper_bonus_value=45",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    m = load_manifest(out)
    assert m["kind"] == "run" and m["lineups"] == [["timeout", "random"]]
    assert (m["games"], m["seed"], m["chunk_size"]) == (150, 8, 60)
    assert m["rules"]["settings"]["upper_bonus_value"] == 45 and m["config"]["settings"] == {"upper_bonus_value": 45}
    assert text.startswith(f"results: {out}") and text.count(" mean ") == 2
    assert cli.main(["run", str(conf), "--games", "0", "--quiet", "--out", str(tmp_path / "x")]) == 2
    assert "yatzy-harness: error: --games must be 1..999999999999, got 0\n" == capsys.readouterr().err
    assert cli.main(["run", "--resume", str(out), "--seed", "9", "--quiet"]) == 2
    assert "differs in seed (run has 8, now 9)" in capsys.readouterr().err
    assert cli.main(["run", "--resume", str(out), "--games", "200", "--quiet"]) == 0  # grow the run
    m = load_manifest(out)
    assert m["games"] == 200 and [c["stop"] for c in m["chunks"]] == [60, 120, 150, 180, 200]


def test_dead_worker_stops_the_run_cleanly(tmp_path, tripwire_ref, monkeypatch, capsys):
    out, marker = tmp_path / "dead", tmp_path / "armed"
    for k, v in _trip_env(marker, "KILL", parent=False).items():  # the worker SIGKILLs itself
        monkeypatch.setenv(k, v)
    with pytest.raises(RunStopped, match=r"a worker process died \(killed\? out of memory\?\)") as info:
        run(RunConfig(**TRIP, workers=2), out)
    assert info.value.run_dir == out and not marker.exists()
    assert "a worker process died" in (out / "run.log").read_text()
    for name in files(out):
        assert pq.read_metadata(out / "chunks" / name).num_rows == 200
    _resume_and_compare(out, tripwire_ref, monkeypatch, capsys)


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask cluster (separate worker process) that knows the test bots."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None, preload=["tests.runner_bots"]
    )
    yield cluster.scheduler_address
    cluster.close()


def test_dask_cluster_plays_identically_and_forwards_failures(tmp_path, dask_cluster):
    got: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.append(record)

    on_dask = dict(backend="dask", scheduler=dask_cluster)
    a = run(cfg(seats=("chatty", "random"), workers=1), tmp_path / "local")
    root = logging.getLogger()
    root.addHandler(h := Keep(level=logging.WARNING))
    try:
        b = run(cfg(seats=("chatty", "random"), **on_dask), tmp_path / "dask")
        with pytest.raises(RunStopped, match=r"bot faulty \(seat 0, lineup 0 faulty/random\) failed in game 137"):
            run(cfg(seats=("faulty", "random"), **on_dask), tmp_path / "faulty")
    finally:
        root.removeHandler(h)
    assert files(a) == files(b)
    remote = [r for r in got if r.process != os.getpid()]
    assert {r.getMessage().split(" in pid")[0] for r in remote if r.name == "tests.runner_bots"} >= {
        "chatty bot playing games 0..99",
        "chatty bot playing games 100..199",
        "chatty bot playing games 200..299",
    }
    logtext = (tmp_path / "faulty" / "run.log").read_text()
    assert "failed in game 137" in logtext and "in _explode" in logtext
    assert "part-L0000-G000000000000.parquet" in files(tmp_path / "faulty")


# ---------------------------------------------------------------------------------------------
# command line: what flags mean, conflicts, error messages, a failing bot on the console


def _cli(monkeypatch, capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_flags_alone_take_runconfigs_defaults_not_quick_toml(tmp_path, monkeypatch, capsys):
    from harness.play.runconfig import DEFAULT_CHUNK_SIZE

    code, _, err = _cli(
        monkeypatch,
        capsys,
        "run",
        "--seats",
        "timeout,random",
        "--games",
        "30",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "flags"),
        "--quiet",
    )
    assert code == 0, err
    m = load_manifest(tmp_path / "flags")
    assert m["chunk_size"] == DEFAULT_CHUNK_SIZE == 50_000 and m["seed"] == RunConfig.seed
    assert m["config"]["mode"] == "run" and "entrants" not in m["config"]
    # a gauntlet from flags plays exactly the field given
    code, _, err = _cli(
        monkeypatch,
        capsys,
        "run",
        "--candidate",
        "timeout",
        "--entrants",
        "random",
        "--games",
        "20",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "g"),
        "--quiet",
    )
    assert code == 0, err
    assert load_manifest(tmp_path / "g")["lineups"] == [["timeout", "random"], ["random", "timeout"]]
    # with no config and no what-to-play flag, the run is quick.toml's (flags still override it)
    code, _, err = _cli(
        monkeypatch, capsys, "run", "--games", "20", "--workers", "1", "--out", str(tmp_path / "q"), "--quiet"
    )
    assert code == 0, err
    quick = RunConfig.from_toml(builtin_run_configs_dir() / "quick.toml")
    m = load_manifest(tmp_path / "q")
    assert m["chunk_size"] == quick.chunk_size and [e["spec"] for e in m["entrants"]] == list(quick.entrants)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--seats", "greedy", "--entrants", "random,timeout"], "--seats and --entrants do not combine"),
        (["--seats", "greedy", "--candidate", "random"], "--seats and --candidate do not combine"),
        (["--candidate", "greedy"], "--candidate needs --entrants, the field it plays against"),
        (["--seats", "greedy,random", "--table", "2"], "--table does not go with --seats"),
        (["--candidate", "greedy", "--entrants", "random", "--table", "3"], "--table does not go with --candidate"),
        (["gauntlet", "--table", "4"], "--table is the table size of a tournament, but "),
        (["--seats", "timeout", "--games", "0"], "--games must be 1..999999999999, got 0"),
        (["--seats", "timeout", "--workers", "-1"], "--workers must be 0..4096, got -1"),
        (["--seats", "timeout", "--seed", "-1"], "--seed must be 0..18446744073709551615, got -1"),
        (["--seats", "timeout", "--chunk-size", "-5"], "--chunk-size must be 1..1000000, got -5"),
        (["--seats", "timeout,nobot"], "--seats: unknown strategy 'nobot'"),
        (["--candidate", "nobot", "--entrants", "random"], "--candidate: unknown strategy 'nobot'"),
        (["--seats", "timeout", "--rules", "nope"], "--rules: unknown rule set 'nope'"),
        (["--seats", "timeout", "--set", "bogus=1"], "--set: unknown setting 'bogus'"),
        (["--entrants", "timeout"], "--entrants: a tournament at 2-seat tables needs at least 2 entrants, got 1"),
        (["--entrants", "timeout,random", "--table", "1"], "--table must be 2..8, got 1"),
        (["--entrants", "timeout,random", "--table", "9"], "--table must be 2..8, got 9"),
        (["--seats", "timeout", "--backend", "local", "--scheduler", "tcp://x:1"], 'needs backend = "dask"'),
    ],
)
def test_run_flags_that_conflict_or_are_wrong_are_one_line(tmp_path, monkeypatch, capsys, argv, message):
    code, _, err = _cli(monkeypatch, capsys, "run", *argv, "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert "command-line flags" not in err and not (tmp_path / "o").exists()


def test_errors_name_the_file_or_the_flag(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text('mode = "tournament"\nentrants = ["random", "timeout", "greedy"]\ntable = 4\n')
    code, _, err = _cli(monkeypatch, capsys, "run", str(conf), "--quiet")
    assert code == 2 and f"{conf}: a tournament at 4-seat tables needs at least 4 entrants, got 3" in err
    conf.write_text('mode = "tournament"\nentrants = ["random", "timeout", "greedy"]\n')
    code, _, err = _cli(monkeypatch, capsys, "run", str(conf), "--table", "4", "--quiet")
    assert code == 2 and f"{conf} and --table: a tournament at 4-seat tables needs at least 4 entrants" in err
    conf.write_text('seats = ["timeout", "nobot"]\n')
    code, _, err = _cli(monkeypatch, capsys, "run", str(conf), "--games", "5", "--quiet")
    assert code == 2 and f"{conf}: seats[1]: unknown strategy 'nobot'" in err


def test_table_range_is_the_same_everywhere():
    for table in (0, 1, 9):
        with pytest.raises(UserError, match=rf"<python>: table must be 2\.\.8, got {table}$"):
            RunConfig(mode="tournament", entrants=("a", "b", "c"), table=table)


def test_cache_dir_is_an_execution_key(tmp_path):
    a = cfg(cache_dir=str(tmp_path / "one"))
    assert a.cache_dir == str(tmp_path / "one") and a.to_dict()["cache_dir"] == str(tmp_path / "one")
    assert a.identity() == cfg(cache_dir="elsewhere").identity() == cfg().identity()
    assert RunConfig.from_dict(a.to_dict()) == a
    with pytest.raises(UserError, match="<python>: cache_dir must be a directory path, got ''"):
        cfg(cache_dir="")


def test_two_runs_in_one_process_each_use_only_their_own_cache_dir(tmp_path, monkeypatch):
    """The library writes no environment: a run's cache_dir is its own for the run's length, so a
    second run in the same process with another folder reads and writes only that one (issue 47)."""
    from harness.util import cache

    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    before_env, before_default = dict(os.environ), cache.default_cache_dir()
    one, two = tmp_path / "one", tmp_path / "two"

    def listing(d: Path) -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(d)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(d.rglob("*"))}

    run(cfg(seats=("solver", "greedy"), rules="forced", games=40, chunk_size=20, cache_dir=str(one)), tmp_path / "a")
    first = listing(one)
    assert [n for n in first if n.startswith("solve-")], first  # the solver's value table
    run(cfg(seats=("solver", "greedy"), rules="forced", games=40, chunk_size=20, cache_dir=str(two)), tmp_path / "b")
    assert listing(one) == first  # the second run read and wrote nothing of the first's folder
    assert set(listing(two)) == set(first)  # it solved and wrote its own table
    assert dict(os.environ) == before_env and cache.default_cache_dir() == before_default
    assert files(tmp_path / "a") == files(tmp_path / "b")
    # a third run with no cache_dir uses the default folder, not the last run's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run(cfg(seats=("solver", "greedy"), rules="forced", games=40, chunk_size=20), tmp_path / "c")
    assert set(listing(tmp_path / "xdg" / "yatzy-harness")) == set(first) and listing(two).keys() == first.keys()


def test_failing_bot_on_the_console_once(tmp_path):
    """One block on stderr (bot, seat, game, turn as replay counts it, replay and resume commands);
    the traceback once: in run.log, and on the console only with --verbose."""
    args = [
        "run",
        "--seats",
        "random,faulty",
        "--games",
        "300",
        "--chunk-size",
        "100",
        "--seed",
        "11",
        "--workers",
        "2",
        "--quiet",
    ]
    plain = _cli_subprocess(tmp_path, args + ["--out", str(tmp_path / "a")], {})
    verbose = _cli_subprocess(tmp_path, args + ["--out", str(tmp_path / "b"), "--verbose"], {})
    for proc, traces in ((plain, 0), (verbose, 1)):
        err = proc.stderr
        assert proc.returncode == 1, err
        assert err.count("Traceback (most recent call last)") == traces and err.count("in _explode") == traces
        assert err.count("failed in game 137") == 1 and "The above exception" not in err
        assert "bot faulty (seat 1, lineup 0 random/faulty) failed in game 137 at turn 4 (keep after roll 1)" in err
    a = tmp_path / "a"
    assert f"replay:  yatzy-harness replay --run {a} --lineup 0 --game 137\n" in plain.stderr
    assert f"resume:  yatzy-harness run --resume {a}   (after fixing the bot;" in plain.stderr
    assert "--verbose prints the traceback here" in plain.stderr
    log = (a / "run.log").read_text()
    assert log.count("Traceback (most recent call last)") == 1 and "During handling" not in log
    # replay counts the same turn: the failing bot's last line in the trace is its turn 4, roll 1
    rep = _cli_subprocess(tmp_path, ["replay", "--run", str(a), "--game", "137"], {})
    assert rep.returncode == 1
    assert rep.stdout.splitlines()[-1].startswith("turn  4 seat 1 faulty: roll 1:")
    assert rep.stderr.count("Traceback (most recent call last)") == 1
    assert "faulty (seat 1) failed at turn 4 (keep after roll 1) in game 137" in rep.stderr


def test_a_shipped_config_is_found_by_name_or_bare_file_name(tmp_path, monkeypatch):
    from harness.play.runconfig import resolve_config_path

    monkeypatch.chdir(tmp_path)
    shipped = builtin_run_configs_dir() / "bonus63.toml"
    assert resolve_config_path("bonus63") == shipped
    assert resolve_config_path("bonus63.toml") == shipped  # not in the working directory: the shipped one
    (tmp_path / "bonus63.toml").write_text('seats = ["greedy"]\n')
    assert resolve_config_path("bonus63.toml") == Path("bonus63.toml")  # a local file wins
    with pytest.raises(
        UserError,
        match=r"run config not found: sub/bonus63\.toml \(not a file; shipped configs: "
        r"bonus62, bonus63, .*quick",
    ):
        resolve_config_path("sub/bonus63.toml")


# ---------------------------------------------------------------------------------------------
# progress while chunks play (hardening issue item 10)


def _bar_positions(monkeypatch) -> list[list[int]]:
    """Record every position each of the runner's progress bars is moved to."""
    import tqdm as tqdm_module

    seen: list[list[int]] = []

    class Recording(tqdm_module.tqdm):
        def __init__(self, *a, **kw):
            kw["file"] = open(os.devnull, "w")
            super().__init__(*a, **kw)
            seen.append([])
            self._mine = seen[-1]

        def update(self, n=1):
            out = super().update(n)
            self._mine.append(self.n)
            return out

    monkeypatch.setattr(tqdm_module, "tqdm", Recording)
    import harness.play.runner

    monkeypatch.setattr(harness.play.runner, "tqdm", Recording)  # the name the runner draws its bar with
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_moves_per_batch_within_a_chunk_and_rows_stay_identical(tmp_path, monkeypatch, workers):
    """One chunk of 600 games per lineup: the bar moves in batches of the engine (here 64 games:
    every batch is reported, from this process and from forked workers), not once per chunk; the
    files are byte for byte those of a quiet run, which plays each chunk in sub-batches of ~2 s."""
    import time

    from harness.play import runner
    from harness.play import worker

    quiet = run(cfg(games=600, chunk_size=600, workers=workers), tmp_path / "quiet")
    monkeypatch.setattr(worker, "FIRST_BATCH", 64)
    monkeypatch.setattr(worker, "BATCH_SECONDS", 1e-9)  # every batch the smallest
    monkeypatch.setattr(worker.journal, "SECONDS", 1e-9)  # (the local backend's sub-batches, journalled)
    monkeypatch.setattr(runner, "PROGRESS_EVERY", 0.005)
    engine_play = worker.play

    def slow_play(*a, **kw):  # a batch takes 50 ms at least, so the parent sees each one
        time.sleep(0.05)
        return engine_play(*a, **kw)

    monkeypatch.setattr(worker, "play", slow_play)
    seen = _bar_positions(monkeypatch)
    loud = run(cfg(games=600, chunk_size=600, workers=workers), tmp_path / "loud", quiet=False)
    assert files(loud) == files(quiet)
    (positions,) = seen
    assert positions[-1] == 600
    # more positions than the single chunk of the one lineup: the bar moved inside the chunk
    assert len(set(positions)) >= 3 and min(positions) < 600
    assert worker._progress is None  # the hook is this run's only


def test_progress_batches_join_to_the_chunk_of_one_batch(tmp_path, monkeypatch):
    """play_chunk with a progress hook: the batches' games add up to the chunk, and the Parquet
    bytes (analysis columns and records included) equal one batch's."""
    from harness.play import worker
    from harness.play.runconfig import RunConfig as RC

    r = RC(seats=("greedy", "random"), rules="scandinavian", games=300, seed=5, record=True).resolve()
    rules = r.rules
    job = worker.Job(
        dict(rules.spec), rules.source, {}, rules.digest, r.entrants, tuple(tuple(x) for x in r.lineups), 5, record=True
    )
    for s in r.strategies.values():
        s.prepare()
    worker.install(job, rules, r.strategies)
    try:
        chunk = Chunk(0, 0, 300)
        one = worker.play_chunk(job, chunk)
        monkeypatch.setattr(worker, "FIRST_BATCH", 50)
        monkeypatch.setattr(worker, "BATCH_SECONDS", 1e-9)
        ticks: list[int] = []
        worker.set_progress(ticks.append)
        try:
            many = worker.play_chunk(job, chunk)
        finally:
            worker.set_progress(None)
    finally:
        worker.forget(job)
    assert ticks == [50] * 6
    assert many.data == one.data and many.records == one.records and many.sums == one.sums


class _InterruptedInKernel(Strategy):
    """Answers as Ctrl-C inside a numba kernel looks from Python: a SystemError raised from it."""

    name = "interrupted-in-kernel"

    def keep(self, view):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<numba kernel> returned a result with an exception set") from exc

    def choose(self, view):
        return np.argmax(view.allowed_matrix(), axis=1)


def test_ctrl_c_inside_a_kernel_is_an_interrupt_not_a_failed_run(tmp_path):
    from harness.play.worker import Job, play_chunk

    rules = load_rules("scandinavian")
    with pytest.raises(KeyboardInterrupt):
        play(rules, [_InterruptedInKernel(rules)], np.arange(3), 1)
    job = Job(dict(rules.spec), rules.source, {}, rules.digest, (("x", "random"),), (("x",),), 1)
    from harness.play import worker

    worker.install(job, rules, {"x": _InterruptedInKernel(rules)})
    try:
        with pytest.raises(KeyboardInterrupt):
            play_chunk(job, Chunk(0, 0, 3))
    finally:
        worker.forget(job)

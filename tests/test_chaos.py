"""Chaos with real processes (issue 49): Ctrl-C at random points, SIGKILL of the harness with engines
and their children running, a disqualified run resumed, Dask workers killed from start-up on.

Each test asserts the recovery and that no result changed (chunk files byte for byte, the
manifest's sums). These are the short forms; ``benchmarks/chaos.py`` runs the long ones (more
points, bigger runs). The random points come from a seed printed on failure.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from harness import cli
from harness.play.runner import RunConfig, load_manifest, run
from tests.test_cli import screen
from tests.test_evaluate import cache, tiny_dir  # noqa: F401  (fixtures)

TESTS = Path(__file__).resolve().parent
#: the long forms (benchmarks/chaos.py): every case on its own, every Dask moment on a cluster of its own
LONG = os.environ.get("YH_CHAOS_LONG") == "1"
ENGINES = TESTS / "engines"

#: The harness's command line in a process of its own; sub-batches of 0.2 s instead of 2 s, so a
#: short run has many (the journal's behaviour does not depend on their length).
SCRIPT = textwrap.dedent("""\
    import sys
    sys.path.insert(0, {root!r})
    from harness.play import journal
    journal.SECONDS = 0.2
    from harness import cli
    sys.exit(cli.main(sys.argv[1:]))
""")


def harness(tmp_path: Path, args: list[str]) -> subprocess.Popen:
    script = tmp_path / "yh.py"
    script.write_text(SCRIPT.format(root=str(TESTS.parent)))
    # Ctrl-C is what these tests send: give the child the default handling even when this session ignores it
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def chunk_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "chunks").iterdir())}


def wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the harness ended ({proc.returncode}) before {what}: {proc.communicate()}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


# ---------------------------------------------------------------------------------------------
# Ctrl-C keeps what was played

PLAY = ["run", "--seats", "greedy,random", "--games", "40000", "--chunk-size", "20000", "--seed", "17"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The uninterrupted run every interrupted one must end up equal to."""
    return run(
        RunConfig(seats=("greedy", "random"), games=40_000, chunk_size=20_000, seed=17, workers=1),
        tmp_path_factory.mktemp("ref") / "ref",
    )


@pytest.mark.parametrize("workers,twice", [(1, False), (2, False), (2, True)] if LONG else [(1, False), (2, True)])
def test_ctrl_c_at_a_random_point_keeps_the_games_and_resumes_to_the_same_bytes(
    tmp_path, reference, capsys, workers, twice
):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out = tmp_path / "run"
    proc = harness(tmp_path, PLAY + ["--workers", str(workers), "--out", str(out)])
    wait_for(lambda: (out / "chunks").is_dir(), 120, "the run to start", proc)
    time.sleep(rng.uniform(0.5, 2.5))  # somewhere in set-up or play
    proc.send_signal(signal.SIGINT)
    if twice:
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # the second Ctrl-C stops at once
    _, err = proc.communicate(timeout=120)
    said = [x for x in screen(err) if x.strip() and "game/s]" not in x]  # the bar apart (erased on a terminal)
    # a second Ctrl-C stops at once: it may land while Python's default handler is back, which ends
    # the process by the signal itself (no line, as a shell's Ctrl-C would); what is on disk resumes
    at_once = twice and proc.returncode == -signal.SIGINT
    if proc.returncode == 130 or at_once:
        if not at_once:
            assert len(said) == 1 and said[0].startswith("yatzy-harness: interrupted: "), (seed, err)
            assert said[0].endswith(f"continue with: yatzy-harness run --resume {out}"), (seed, err)
            kept = int(said[0].split("interrupted: ")[1].split(" of ")[0].replace(",", ""))
            parts = list((out / "journal").glob("*.bin")) if (out / "journal").is_dir() else []
            on_disk = sum(c["stop"] - c["start"] for c in load_manifest(out)["chunks"]) + sum(
                int(p.stem.split("-")[-1]) - int(p.stem.split("-")[-2].lstrip("G")) for p in parts
            )
            assert kept == on_disk, (seed, err)
        # the same command again, without --resume, says what to do in one line
        again = harness(tmp_path, PLAY + ["--workers", str(workers), "--out", str(out), "--quiet"])
        _, err2 = again.communicate(timeout=120)
        assert again.returncode == 2 and err2.count("\n") == 1 and f"--resume {out}" in err2, err2
        assert cli.main(["run", "--resume", str(out), "--quiet"]) == 0
        capsys.readouterr()
    else:
        # it ended before the signal: nothing to resume. A Ctrl-C that comes as the interpreter shuts
        # down (the handlers are back to the system's default by then) ends it by the signal, as
        # a shell's would, with the run complete on disk
        finished = proc.returncode == -signal.SIGINT and not err.strip() and load_manifest(out)["complete"]
        assert proc.returncode == 0 or finished, (seed, err)
    assert chunk_bytes(out) == chunk_bytes(reference), seed
    assert load_manifest(out)["totals"] == load_manifest(reference)["totals"]
    assert not list((out / "journal").glob("*")) if (out / "journal").is_dir() else True


def test_interrupted_chunk_keeps_its_played_sub_batches(tmp_path, reference, capsys):
    """The failure of the issue: a run stopped inside its first chunks kept nothing of them."""
    out = tmp_path / "run"
    proc = harness(tmp_path, PLAY + ["--workers", "1", "--out", str(out), "--chunk-size", "40000"])
    wait_for(
        lambda: (out / "journal").is_dir() and len(list((out / "journal").glob("*.bin"))) >= 2,
        120,
        "two sub-batches journalled",
        proc,
    )
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert load_manifest(out)["chunks"] == []  # no chunk is complete, yet games are kept
    kept = int(err.split("interrupted: ")[1].split(" of ")[0].replace(",", ""))
    assert kept > 0
    assert cli.main(["run", "--resume", str(out), "--quiet"]) == 0
    capsys.readouterr()
    ref = run(
        RunConfig(seats=("greedy", "random"), games=40_000, chunk_size=40_000, seed=17, workers=1), tmp_path / "ref"
    )
    assert chunk_bytes(out) == chunk_bytes(ref)


def test_a_pool_kept_across_runs_journals_each_run_into_its_own_directory(tmp_path, monkeypatch):
    """A pool kept across runs (a calibration's sampling session) had its workers journal every
    run's sub-batches into the first run's directory, the journal they inherited at the fork; a
    third run of the same lineup, games and chunks then took the second run's parts for its own
    (calibrate's response at temperature 5.2 after 0 and 20: 104.3 points for 119.4)."""
    from harness.play import journal
    from harness.util import backends

    monkeypatch.setattr(journal, "SECONDS", 0.001)  # (before the pool forks: a sub-batch of 256 games)

    def config(seats: tuple[str, str], workers: int) -> RunConfig:
        return RunConfig(seats=seats, games=3000, chunk_size=1500, seed=3, workers=workers)

    with backends.held("local", 2, None):
        for name, seats in (("r1", ("random", "random")), ("r2", ("greedy", "random")), ("r3", ("random", "greedy"))):
            run(config(seats, 2), tmp_path / name)
    fresh = run(config(("random", "greedy"), 1), tmp_path / "fresh")
    assert chunk_bytes(tmp_path / "r3") == chunk_bytes(fresh)
    for name in ("r1", "r2", "r3"):
        assert not list((tmp_path / name).glob("journal/*")), name


# ---------------------------------------------------------------------------------------------
# no process outlives the harness


@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_of_the_harness_leaves_no_engine_nor_its_children(tmp_path, workers):
    pids = tmp_path / "pids"
    spec = f'engine:cmd="{sys.executable} {ENGINES / "forker.py"} {pids}",name=forker'
    proc = harness(
        tmp_path,
        [
            "run",
            "--seats",
            f"{spec},greedy",
            "--games",
            "2000000",
            "--chunk-size",
            "100000",
            "--workers",
            str(workers),
            "--quiet",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    # the parent's handshake engine (stopped before play), then one engine per worker, each with 3 sleepers
    wait_for(lambda: pids.is_file() and len(pids.read_text().splitlines()) >= 1 + workers, 120, "the engines", proc)
    lines = [[int(x) for x in line.split()] for line in pids.read_text().splitlines()]
    playing = lines[1:]
    assert all(alive(p) for line in playing for p in line), lines
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    everyone = [p for line in lines for p in line]
    try:
        wait_for(lambda: not any(alive(p) for p in everyone), 20, "every engine process to go")
    finally:
        for p in everyone:  # never leave them to the next test
            if alive(p):
                os.kill(p, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# a disqualification is part of the run


def test_a_disqualified_run_stays_stopped_until_told_and_says_so(tmp_path, capsys):
    engine = f"{sys.executable} {ENGINES / 'misbehave.py'} illegal 0"
    spec = f'engine:cmd="{engine}",name=bot,min_games=5'
    out = tmp_path / "r"
    code = cli.main(
        [
            "run",
            "--seats",
            f"{spec},greedy",
            "--games",
            "40",
            "--chunk-size",
            "10",
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    first = capsys.readouterr().err
    assert code == 1
    reason = next(x for x in first.splitlines() if "disqualified" in x).split("run stopped: ", 1)[1]
    m = load_manifest(out)
    assert m["disqualified"]["engine"] == "bot" and m["disqualified"]["reason"] == reason
    assert m["disqualified"]["corrupted"] == m["disqualified"]["games"] > 0
    assert m["disqualified"]["faults"]["faults_illegal"] > 0

    code = cli.main(["run", "--resume", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and reason in err and "--continue-disqualified" in err, err
    assert load_manifest(out)["chunks"] == m["chunks"] and not load_manifest(out)["complete"]

    assert cli.main(["report", str(out), "--no-plots", "--out", str(tmp_path / "rep")]) == 0
    head = capsys.readouterr().out.splitlines()
    assert any(line.startswith("DISQUALIFIED: " + reason) for line in head[:3]), head[:5]

    assert cli.main(["run", "--resume", str(out), "--quiet", "--continue-disqualified"]) == 0
    capsys.readouterr()
    m2 = load_manifest(out)
    assert m2["complete"] and m2["disqualified"] == m["disqualified"]
    assert m2["continued"]["flag"] == "--continue-disqualified" and m2["continued"]["engine"] == "bot"
    assert m2["continued"]["games_kept"] == sum(c["stop"] - c["start"] for c in m["chunks"])
    assert cli.main(["report", str(out), "--no-plots", "--out", str(tmp_path / "rep2")]) == 0
    text = capsys.readouterr().out
    assert "DISQUALIFIED: " + reason in text and "Played on after the disqualification" in text
    assert json.loads((out / "manifest.json").read_text())["continued"] == m2["continued"]


# ---------------------------------------------------------------------------------------------
# the cluster from its first second

distributed = pytest.importorskip("distributed")


def worker_pids() -> list[int]:
    """This process's Dask worker processes (a LocalCluster's nannies start them as our children)."""
    import psutil

    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if any("spawn_main" in part for part in p.cmdline()):
                found.append(p.pid)
        except psutil.Error:  # gone meanwhile
            continue
    return found


class Killer:
    """SIGKILLs worker processes from a thread, one per step: a step is (delay, when), the kill coming
    ``delay`` s after ``when()`` first holds (None: as a worker process exists)."""

    def __init__(self, *steps) -> None:
        self.steps, self.killed = list(steps), []
        self.stop = False
        self.thread = threading.Thread(target=self._go, daemon=True)

    def _go(self) -> None:
        for delay, when in self.steps:
            while not self.stop and not (worker_pids() and (when is None or when())):
                time.sleep(0.02)
            time.sleep(delay)
            pids = worker_pids()
            if self.stop or not pids:
                return
            os.kill(pids[0], signal.SIGKILL)
            self.killed.append(pids[0])

    def __enter__(self) -> Killer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop = True
        self.thread.join(5)


#: A run of slow bots (~2,000 games/s a worker), so that it still plays when a killed worker is back
DASK_RUN = dict(seats=("bonus", "random"), games=1600, chunk_size=80, seed=23)


@pytest.fixture(scope="module")
def dask_reference(tmp_path_factory) -> Path:
    return run(RunConfig(**DASK_RUN, workers=1), tmp_path_factory.mktemp("dref") / "ref")


def _moments(out: Path, seed: int) -> dict[str, tuple[float, object]]:
    """start-up: a worker process exists, then 0-2 s (its set-up, the cluster's, the first tasks');
    mid-task: chunks in flight on both workers; between tasks: most chunks written, a worker idle or
    taking its next."""
    written = lambda: len(list((out / "chunks").glob("*.parquet"))) if (out / "chunks").is_dir() else 0  # noqa: E731
    return {
        "start-up": (random.Random(seed).uniform(0, 2.0), None),
        "mid-task": (0.0, lambda: written() >= 2),
        "between tasks": (0.0, lambda: written() >= 15),
    }


@pytest.mark.parametrize(
    "moments", [["start-up"], ["mid-task"], ["between tasks"]] if LONG else [["start-up", "mid-task", "between tasks"]]
)
def test_a_dask_worker_killed_at_any_moment_is_survived_with_the_same_bytes(tmp_path, dask_reference, moments):
    out = tmp_path / "run"
    seed = random.randrange(1 << 30)
    steps = _moments(out, seed)
    with Killer(*(steps[m] for m in moments)) as k:
        run(RunConfig(**DASK_RUN, workers=2, backend="dask"), out)
    assert len(k.killed) == len(moments), (moments, seed, k.killed)
    assert chunk_bytes(out) == chunk_bytes(dask_reference), (moments, seed)
    assert load_manifest(out)["totals"] == load_manifest(dask_reference)["totals"]


def test_an_exact_sweep_survives_a_worker_killed_at_start_up(tiny_dir, cache, capsys, monkeypatch):
    """The issue's failure: a worker SIGKILLed ~2 s after the workers start ended the sweep with a
    CommClosedError traceback. Every evaluation is held 3 s (the tests' task hook), so the sweep is
    still under way when the kill comes, however fast the machine."""
    argv = [
        "sweep",
        str(tiny_dir / "tiny_bonus.toml"),
        "--set",
        "upper_bonus_threshold=3..4",
        "--entrants",
        "greedy,solver",
        "--json",
    ]
    assert cli.main(argv) == 0
    local = json.loads(capsys.readouterr().out)
    from harness.jobs import cluster
    from tests.task_delay import Delay

    monkeypatch.setattr(cluster, "TASK_HOOK", Delay(3.0, "e"))  # every task: each spec here has an "e"
    with Killer((2.0, None)) as k:
        code = cli.main(argv + ["--backend", "dask", "--workers", "2"])
    out, err = capsys.readouterr()
    assert k.killed and code == 0, err
    drop = ("seconds", "evaluated", "from_cache", "cached")

    def clean(x):
        if isinstance(x, dict):
            return {a: clean(b) for a, b in x.items() if a not in drop}
        return [clean(v) for v in x] if isinstance(x, list) else x

    assert clean(json.loads(out)) == clean(local)


def test_scheduler_addresses_are_checked_before_use(tmp_path):
    """Malformed: one line; refused, or not a Dask scheduler (an HTTP server): one line, where
    Dask's client retried a refused address for 30 s and waited on an HTTP server for minutes (the
    bound below is a liveness guard, far above the ~8 s these take)."""
    import http.server

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    addresses = {
        "not-an-address": "is not a Dask scheduler address: give tcp://HOST:PORT",
        f"tcp://127.0.0.1:{server.server_address[1]}": "is not a Dask scheduler (it sent nothing in 5 s",
        f"tcp://127.0.0.1:{free}": "connection refused",
    }
    try:
        procs = {
            a: harness(
                tmp_path,
                [
                    "run",
                    "--seats",
                    "greedy,random",
                    "--games",
                    "10",
                    "--quiet",
                    "--scheduler",
                    a,
                    "--out",
                    str(tmp_path / str(i)),
                ],
            )
            for i, a in enumerate(addresses)
        }
        for address, said in addresses.items():
            _, err = procs[address].communicate(timeout=25)
            assert procs[address].returncode == 2 and err.count("\n") == 1 and said in err, (address, err)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        server.shutdown()
        server.server_close()


def test_a_run_that_loses_every_worker_says_so_in_one_line_and_resumes(tmp_path, dask_reference, capsys, monkeypatch):
    from harness.play import runner

    monkeypatch.setattr(runner, "LOST_AFTER", 2.0)
    cluster = distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    address = cluster.scheduler_address
    # a worker without a nanny: killed, nothing restarts it
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--no-nanny",
            "--nthreads",
            "1",
            "--no-dashboard",
        ],
        env={**os.environ, "PYTHONPATH": str(TESTS.parent)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out = tmp_path / "run"
    try:
        with distributed.Client(address) as client:
            client.wait_for_workers(1, timeout=120)

        def kill_after_a_chunk() -> None:
            wait_for(lambda: (out / "chunks").is_dir() and any((out / "chunks").glob("*.parquet")), 120, "a chunk")
            worker.kill()

        t = threading.Thread(target=kill_after_a_chunk, daemon=True)
        t.start()
        with pytest.raises(runner.RunStopped) as stopped:
            run(RunConfig(**DASK_RUN, workers=1, backend="dask", scheduler=address), out)
        t.join(10)
        msg = str(stopped.value)
        assert "\n" not in msg and "every Dask worker is gone" in msg and f"run --resume {out}" in msg
        assert not load_manifest(out)["complete"] and load_manifest(out)["chunks"]
    finally:
        worker.kill()
        worker.wait(10)
        cluster.close()
    assert cli.main(["run", "--resume", str(out), "--backend", "local", "--workers", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert chunk_bytes(out) == chunk_bytes(dask_reference)

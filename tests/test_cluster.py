"""Exact jobs on Dask (harness.jobs.cluster): the bytes of a local single-process run on LocalClusters of 2 and
3 workers with completions forced out of order, a SIGKILLed worker's task run again, an interrupted
run resumed from the cache with its futures cancelled, the workers' code checked, the dry run's counts,
the multi-candidate root-finding's chains the same on any workers."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from harness.studies import chain as CH
from harness.jobs import cluster as C
from harness.studies import depth as D
from harness.cli import main
from harness.util.errors import UserError
from harness.exact.evaluate import evaluate
from harness.game.rules import load_rules
from tests.task_delay import Delay
from tests.test_evaluate import cache, tiny_dir  # noqa: F401  (fixtures)

pytest.importorskip("distributed")

#: what differs between two runs on one machine anyway: time taken and cache hits
TIMING = ("seconds", "evaluated", "from_cache", "cached")


def _normalised(text: str) -> bytes:
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMING}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return json.dumps(strip(json.loads(text)), indent=2).encode()


def _sweep_argv(path: str, *extra: str) -> list[str]:
    return [
        "sweep",
        path,
        "--set",
        "upper_bonus_threshold=3..5",
        "--entrants",
        "greedy,solver:temperature=1,solver",
        "--depth",
        "--rates",
        "0.6,0.75",
        "--json",
        *extra,
    ]


def _run(argv: list[str], capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_a_sweep_with_depth_on_2_and_3_dask_workers_is_the_local_run_byte_for_byte(
    tiny_dir, tmp_path, capsys, monkeypatch
):
    path = str(tiny_dir / "tiny_bonus.toml")
    local = _run(_sweep_argv(path, "--workers", "1", "--cache-dir", str(tmp_path / "local")), capsys)
    chains = [c for cell in json.loads(local)["cells"] for c in cell["depth"]["chains"]]
    assert all(len(c["levels"]) >= 3 for c in chains)  # random and at least two levels above it
    tasks = len(json.loads(local)["cells"]) * 14  # at least the bots, the grid and random per cell
    # half the tasks (by their spec's crc32) wait 0.2 s: completions come out of submission order
    monkeypatch.setattr(C, "TASK_HOOK", Delay(0.2))
    for n in (2, 3):
        assert tasks > n
        got = _run(
            _sweep_argv(path, "--backend", "dask", "--workers", str(n), "--cache-dir", str(tmp_path / f"d{n}")), capsys
        )
        assert json.loads(got)["from_cache"] == 0  # every evaluation computed by the workers
        assert _normalised(got) == _normalised(local)


def test_completions_do_arrive_out_of_order_and_the_chain_takes_k_candidates(tiny_dir, cache, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    order: list[str] = []
    mine = D.depth_of_skill(
        rules, (0.6, 0.75), evaluator=D.Evaluator(on_done=lambda r, s, e: order.append(e.bot)), candidates=3
    )
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache / "dask"))
    monkeypatch.setattr(C, "TASK_HOOK", Delay(0.3))
    seen: list[str] = []
    with C.open_tasks("dask", 3) as tasks:
        theirs = D.depth_of_skill(
            rules,
            (0.6, 0.75),
            evaluator=D.Evaluator(tasks=tasks, on_done=lambda r, s, e: seen.append(e.bot)),
            candidates=3,
        )
    assert sorted(seen) == sorted(order) and seen != order  # the same evaluations, in another order
    j, k = mine.to_json(), theirs.to_json()
    j.pop("seconds"), k.pop("seconds")
    assert json.dumps(j) == json.dumps(k)
    one = D.depth_of_skill(rules, (0.6, 0.75))
    for c3, c1 in zip(mine.chains, one.chains):
        assert [lv.index for lv in c3.levels] == [lv.index for lv in c1.levels]
        for lv in c3.levels[1:]:
            assert abs(lv.rate - c3.p) <= D.RATE_TOL and lv.rounds is not None
        assert sum(lv.rounds for lv in c3.levels[1:]) <= sum(lv.iterations for lv in c1.levels[1:])


def test_a_sweep_submits_the_longest_remaining_work_first_and_priorities_never_change_a_figure(tiny_dir, cache):
    from harness.jobs.driver import SOLVE_PRIORITY
    from harness.studies.sweep import parse_settings, sweep

    class Recording(C.Tasks):  # in this process, each submission's priority noted
        def __init__(self):
            super().__init__()
            self.seen: list[tuple[str, tuple, int]] = []

        def submit(self, fn, *args, key="", priority=0, name=""):
            self.seen.append((fn.__name__, args[1:], priority))
            return super().submit(fn, *args, key=key, priority=priority, name=name)

    path = str(tiny_dir / "tiny_bonus.toml")
    axes, fixed = parse_settings(["upper_bonus_threshold=3..4"])
    bots = ["greedy", "solver:temperature=1", "solver"]
    rounds = {}
    for k in (1, 2):
        tasks = Recording()
        got = sweep(
            path, axes, fixed, bots, D.DepthRequest((0.6, 0.75), candidates=k), evaluator=D.Evaluator(tasks=tasks)
        )
        plain = sweep(path, axes, fixed, bots, D.DepthRequest((0.6, 0.75), candidates=k), evaluator=D.Evaluator())
        assert [c.to_json() for c in got.cells] == [c.to_json() for c in plain.cells]
        first = {}
        for name, args, priority in tasks.seen:
            if name == "solve_task":
                assert priority == SOLVE_PRIORITY
            else:
                first.setdefault(args[0], priority)
        longest = round(D.expected_rounds(0.6, k))
        # W and the grid carry the 60 % chain's rounds; greedy, which only the bots' fetch asks for, 1
        # W and the grid (the top, 0.0, is the bots' solver too) carry the 60 % chain's rounds
        assert first["random"] == first["solver:temperature=0.0"] == first["solver:temperature=1.0"] == longest
        assert first["greedy"] == 1 and tasks.seen[0][2] in (longest, SOLVE_PRIORITY)
        # a chain's later rounds: one less each round, never below 0
        later = [p for n, a, p in tasks.seen if n == "evaluate_task" and p not in (1, longest)]
        assert later and min(later) >= 0 and max(later) == longest - 1
        rounds[k] = longest
    assert rounds[2] < rounds[1]  # a level in fewer rounds with two candidates


def test_a_task_whose_worker_is_sigkilled_runs_again(tiny_dir, cache, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    spec = "solver:temperature=1.5"
    want = evaluate(rules, spec, use_cache=False)
    monkeypatch.setattr(C, "TASK_HOOK", Delay(4, f"{spec}"))  # the task sleeps 4 s before it evaluates
    with C.open_tasks("dask", 2) as tasks:
        ev = D.Evaluator(tasks=tasks)
        got = _killing_mid_task(
            tasks.client, spec_key(ev, rules, spec), lambda: ev.many([(rules, spec), (rules, "greedy")])
        )
        assert got.mean == want.mean and (got.distribution == want.distribution).all()


def _killing_mid_task(client, prefix: str, job):
    """Run ``job`` in a thread, SIGKILL the worker running the task whose key starts with
    ``prefix`` a second into it (the task sleeps 4 s first: :data:`C.TASK_HOOK`), and return the
    job's first result once it is done (the worker gone for good)."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(job()))
    t.start()
    deadline = time.time() + 60
    victim = None
    while victim is None and time.time() < deadline:
        victim = next(
            (addr for addr, keys in client.processing().items() if any(str(k).startswith(prefix) for k in keys)), None
        )
        time.sleep(0.1)
    assert victim is not None, "the task never started"
    time.sleep(1.0)  # mid-task: in its 4 s sleep
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    t.join(120)
    assert not t.is_alive()
    assert pid not in client.run(os.getpid).values()
    return out[0][0]


def spec_key(ev: D.Evaluator, rules, spec: str) -> str:
    digest, label = ev.key(rules, spec)
    return f"evaluate-{digest[:20]}-{D._tag(label)}"


def test_an_interrupted_run_is_cancelled_and_a_rerun_reuses_every_finished_evaluation(tiny_dir, cache, monkeypatch):
    path = str(tiny_dir / "tiny_bonus.toml")
    from harness.studies.sweep import parse_settings, sweep

    axes, fixed = parse_settings(["upper_bonus_threshold=3..5"])
    bots = ["greedy", "solver:temperature=1", "solver"]
    monkeypatch.setattr(C, "TASK_HOOK", Delay(0.5))
    finished: list[str] = []

    def stop_after_five(rules, spec, e):
        finished.append(e.bot)
        if len(finished) == 5:
            raise KeyboardInterrupt

    with C.open_tasks("dask", 2) as tasks:
        with pytest.raises(KeyboardInterrupt):
            sweep(
                path,
                axes,
                fixed,
                bots,
                D.DepthRequest((0.75,)),
                evaluator=D.Evaluator(tasks=tasks, on_done=stop_after_five),
            )
        time.sleep(1.0)
        assert not any(tasks.client.processing().values())  # the pending futures were cancelled
    monkeypatch.setattr(C, "TASK_HOOK", None)
    again = sweep(path, axes, fixed, bots, D.DepthRequest((0.75,)))
    assert again.from_cache >= 5  # the five finished before Ctrl-C, and any other the workers finished
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache / "fresh"))
    fresh = sweep(path, axes, fixed, bots, D.DepthRequest((0.75,)))
    assert [c.to_json() for c in again.cells] == [c.to_json() for c in fresh.cells]


def test_workers_running_other_code_are_refused(monkeypatch):
    with C.open_tasks("dask", 1) as tasks:
        with pytest.raises(UserError, match="other harness code"):
            C.check_workers(tasks.client, "0123456789abcdef")
        report = tasks.client.run(C._worker_report)
        assert all(r["threads"] == "1" and r["version"] == C.code_version() for r in report.values())


def test_the_dry_run_counts_the_evaluations_and_finds_them_cached_after_a_run(tiny_dir, cache, capsys):
    path = str(tiny_dir / "tiny_bonus.toml")
    argv = ["sweep", path, "--set", "upper_bonus_threshold=3..5", "--entrants", "greedy,solver", "--json"]
    before = json.loads(_run([*argv, "--dry-run"], capsys))
    assert before["evaluations"] == 6 and before["cached"] == 0 and before["table_solves"] == 3
    done = json.loads(_run([*argv, "--workers", "1"], capsys))
    after = json.loads(_run([*argv, "--dry-run"], capsys))
    assert after["evaluations"] == after["cached"] == done["evaluated"] == 6 and after["cpu_seconds"] == 0
    depth = json.loads(_run([*argv, "--depth", "--rates", "0.75", "--workers", "1"], capsys))
    again = json.loads(_run([*argv, "--depth", "--rates", "0.75", "--dry-run"], capsys))
    assert again["evaluations"] == again["cached"] == depth["evaluated"] and again["of_them_estimated"] == 0
    # a wider sweep: its new cell's chain is counted as the cached cells' chains at that rate
    wider = [*argv, "--depth", "--rates", "0.75", "--dry-run"]
    wider[wider.index("upper_bonus_threshold=3..5")] = "upper_bonus_threshold=3..6"
    guess = json.loads(_run(wider, capsys))
    chains = [c for cell in depth["cells"] for c in cell["depth"]["chains"]]
    levels = sum(len(c["levels"]) - 1 for c in chains) / len(chains)
    assert len(chains) == 3 and guess["of_them_estimated"] == round(CH.EVALS_PER_LEVEL * levels)
    # the dry run walks the chain --candidates asks for: a cached K = 2 chain is found, not re-estimated
    k2 = [*argv, "--depth", "--rates", "0.75", "--candidates", "2"]
    fresh = json.loads(_run([*k2, "--dry-run"], capsys))
    assert fresh["of_them_estimated"] > 0
    ran = json.loads(_run([*k2, "--workers", "1"], capsys))
    walked = json.loads(_run([*k2, "--dry-run"], capsys))
    assert walked["evaluations"] == walked["cached"] == ran["evaluated"] and ran["from_cache"] > 0
    assert walked["of_them_estimated"] == 0


def test_the_progress_bar_counts_the_tasks_on_stderr(tiny_dir, cache, capsys):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    ev = D.Evaluator(tasks=C.Tasks(), progress=True)
    ev.many([(rules, b) for b in ("greedy", "solver:temperature=1", "solver:temperature=2")])
    assert ev.computed == 3 and "CPU-min left" in ev.cpu_left()
    ev.close()
    assert "exact evaluations" in capsys.readouterr().err


def test_calibrate_exact_on_dask_is_the_local_search(tiny_dir, tmp_path, capsys):
    path = str(tiny_dir / "tiny_bonus.toml")
    argv = [
        "calibrate",
        "--rules",
        path,
        "--exact",
        "--strategy",
        "solver",
        "--param",
        "temperature",
        "--target-win-rate",
        "0.3",
        "--against",
        "solver",
        "--lo",
        "0",
        "--hi",
        "50",
        "--json",
    ]
    local = json.loads(_run([*argv, "--cache-dir", str(tmp_path / "a"), "--out", str(tmp_path / "o1")], capsys))
    dask = json.loads(
        _run(
            [
                *argv,
                "--cache-dir",
                str(tmp_path / "b"),
                "--out",
                str(tmp_path / "o2"),
                "--backend",
                "dask",
                "--workers",
                "2",
            ],
            capsys,
        )
    )
    local.pop("files"), dask.pop("files")
    assert json.dumps(local) == json.dumps(dask) and len(local["evaluations"]) >= 3


def test_each_table_is_solved_once_by_a_task_of_its_own_before_the_evaluations_that_read_it(tiny_dir, cache):
    from harness.exact import solver as S
    from harness.studies.sweep import parse_settings, sweep

    path = str(tiny_dir / "tiny_bonus.toml")
    axes, fixed = parse_settings(["upper_bonus_threshold=3..5"])
    ev = D.Evaluator(tasks=C.Tasks())
    # greedy first: a rule set a plain bot was evaluated on still gets its table solved for solver
    res = sweep(path, axes, fixed, ["greedy", "solver:temperature=1", "solver"], D.DepthRequest((0.75,)), evaluator=ev)
    assert len(ev.solve_seconds) == 3 and ev.computed == res.evaluated
    assert all(S.cache_path(load_rules(path, dict(c.settings))).exists() for c in res.cells)
    again = D.Evaluator(tasks=C.Tasks())
    sweep(path, axes, fixed, ["greedy", "solver"], D.DepthRequest((0.75,)), evaluator=again)
    assert again.solve_seconds == [] and again.computed == 0


def _figures(ev) -> tuple:
    return (
        ev.column.tobytes(),
        ev.distribution.tobytes(),
        ev.mean,
        ev.std,
        ev.p_bonus,
        np.asarray(ev.box_mean).tobytes(),
        np.asarray(ev.box_scored).tobytes(),
        ev.extra_mean,
    )


@pytest.mark.parametrize(
    "name, spec", [("tiny_bonus", "solver:target=39,temperature=3"), ("tiny_generala", "solver:target=47,blunder=0.2")]
)
def test_target_play_split_into_blocks_on_2_and_3_dask_workers_is_the_local_run_byte_for_byte(
    name, spec, tiny_dir, cache, monkeypatch
):
    """Target play's pass cut into many blocks a layer (far more than workers), half of them held
    back so that they finish out of order: the partials summed in block order give the bits of
    the run in this process."""
    from harness.exact import target_pass as T

    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    monkeypatch.setattr(T, "BLOCK_ROWS", 5)
    timing = T.Timing()
    want = evaluate(rules, spec, use_cache=False, timing=timing)
    assert max(len(b) for b in timing.blocks) >= 8  # more blocks in a layer than workers
    whole = evaluate(rules, spec, use_cache=False, cache_dir=cache / "whole")
    monkeypatch.setattr(T, "BLOCK_ROWS", 1 << 17)
    assert abs(evaluate(rules, spec, use_cache=False).mean - want.mean) < 1e-12  # other blocks: other last bits
    monkeypatch.setattr(T, "BLOCK_ROWS", 5)
    assert _figures(whole) == _figures(want)
    monkeypatch.setattr(C, "TASK_HOOK", Delay(0.05))  # (blocks named by spec, layer and index: crc32 even waits)
    for n in (2, 3):
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache / f"d{n}"))
        with C.open_tasks("dask", n) as tasks:
            done: list[tuple[int, int]] = []
            submit = tasks.submit

            def noted(fn, *args, key="", priority=0, name=""):
                fut = submit(fn, *args, key=key, priority=priority, name=name)
                if fn is T.target_block_task:
                    blk = args[3]
                    fut.add_done_callback(lambda f, b=(blk.k, blk.index): done.append(b))
                return fut

            tasks.submit = noted
            got = D.Evaluator(tasks=tasks).many([(rules, spec)])[0]
        assert not got.cached and _figures(got) == _figures(want)
        assert done != sorted(done)  # completions out of block order


def test_a_target_block_whose_worker_is_sigkilled_runs_again(tiny_dir, cache, monkeypatch):
    from harness.exact import target_pass as T

    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    spec = "solver:target=39"
    monkeypatch.setattr(T, "BLOCK_ROWS", 50)
    want = evaluate(rules, spec, use_cache=False)
    monkeypatch.setattr(C, "TASK_HOOK", Delay(4, f"{spec} layer 2 block 1"))  # that block sleeps 4 s before it runs
    with C.open_tasks("dask", 2) as tasks:
        got = _killing_mid_task(
            tasks.client, f"target-{rules.digest[:12]}-2-1-", lambda: D.Evaluator(tasks=tasks).many([(rules, spec)])
        )
        assert _figures(got) == _figures(want)


def test_a_worker_whose_cache_lacks_the_target_table_says_so_instead_of_solving_its_own(tiny_dir, cache, monkeypatch):
    from harness.exact import target_pass as T
    from harness.exact.evaluate import solitaire_bot

    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    spec = "solver:target=39"
    tp = solitaire_bot(rules, spec).target_play()  # the client's table, in its cache
    blocks: list = []
    real = T.run_block
    monkeypatch.setattr(T, "run_block", lambda ps, blk: blocks.append(blk) or real(ps, blk))
    T.target_column(rules, tp)  # (its blocks kept, to send one)
    T._PASS.clear()
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache / "elsewhere"))  # a worker that does not share it
    with pytest.raises(UserError, match="not in this worker's cache"):
        T.target_block_task(rules, spec, tp.table.tmax, blocks[0])

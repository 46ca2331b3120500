"""Exact jobs on Dask (issue 39): the cost model, a reduced sweep at 1, 2 and 3 workers, and the projection
of the full scandinavian sweep with the depth of skill to 8, 32 and 64 workers.

* ``costs``: one evaluation of each kind and one table solve on one thread, on generala with an upper
  bonus at thresholds 3, 6 and 12 (9,792 to 32,352 solver states), and the fit a + b x states of each
  kind that :mod:`harness.studies.cost` holds::

      python benchmarks/bench_dask.py costs

* ``scaling``: the reduced sweep (generala, upper_bonus_value=35, upper_bonus_threshold=4..7: 4 values,
  the bots greedy, solver:temperature=1 and solver, the depth of skill at 60 % and 75 %) cold (an empty
  cache each time: tables and evaluations) on a Dask LocalCluster of N single-threaded workers for each
  N; wall time from the first task (the cluster's start apart), the workers' CPU, the dry run's
  estimate beside it, and every chain's rounds (recorded) with each evaluation's measured seconds, so
  that ``project`` can replay them; writes JSON to ``--out``::

      python benchmarks/bench_dask.py scaling --workers 1,2,3 --out results/bench-dask.json
      python benchmarks/bench_dask.py scaling --workers 3 --candidates 3 --out results/bench-dask-k3.json

* ``chains``: one rule set's depth of skill (60 % and 75 %) with ``--candidates`` K on ``--workers``
  forked processes, cold: each chain's rounds after the grid (how many evaluations each asked for),
  for ``project --chains``::

      python benchmarks/bench_dask.py chains --rules scandinavian --candidates 2 --out results/chains-scand-k2.json

* ``project``: a processor-sharing simulation of the same scheduling (each chain resumes when its own
  evaluations are in; a rule set's table solved before its evaluations that read it; ``--cores`` cores
  shared by the running tasks) replays the recorded sweep at N = 1, 2, 3 on 2 cores against the
  measured walls (the check), then the full 16-value scandinavian sweep (three bots, chains at 60 % and
  75 %) from per-evaluation costs measured on this machine (benchmarks/BENCHMARKS.md), at 8, 32 and 64
  workers with a core each; and its critical path::

      python benchmarks/bench_dask.py project --runs results/bench-dask.json --k3 results/bench-dask-k3.json

* ``reuse``: a chain's evaluations per level with the earlier levels' evaluations reused (as it is),
  without (the grid and the level below only), and its rounds with ``--candidates`` 2, 3 and 5::

      python benchmarks/bench_dask.py reuse --rules generala

* ``split``: where one evaluation's time goes on one thread: the policy's outcome rows of the live
  states (a function of the state and the bot: they split across workers by blocks of states) and
  the forward pass's pushes (in one place), and the bytes of the rows such a split would move::

      python benchmarks/bench_dask.py split --rules standard --bots solver:temperature=1
"""

from __future__ import annotations

import argparse
import collections
import heapq
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RULES = "generala"
SETTINGS = ["upper_bonus_value=35", "upper_bonus_threshold=4..7"]
BOTS = ["greedy", "solver:temperature=1", "solver"]
RATES = (0.6, 0.75)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


# ---------------------------------------------------------------------------------------------
# costs


def costs(args: argparse.Namespace) -> None:
    os.environ["YATZY_HARNESS_THREADS"] = "1"
    os.environ["YATZY_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="bench-dask-costs-")
    import numpy as np

    from harness.exact.evaluate import evaluate
    from harness.game.rules import load_rules
    from harness.exact.solver import build_plan, solve

    print(load())
    evaluate(load_rules("forced"), "solver:temperature=3")  # the kernels compiled or loaded first
    if args.rules:
        return _costs_of(args, evaluate, load_rules, build_plan, solve)
    kinds = {"plain": "greedy", "solver": "solver", "softmax": "solver:temperature=1"}
    rows = []
    for t in (3, 6, 12):
        rules = load_rules("generala", ["upper_bonus_value=35", f"upper_bonus_threshold={t}"])
        n = build_plan(rules).n_states
        t0 = time.process_time()
        solve(rules)
        got = {"solve": time.process_time() - t0}
        for kind, spec in kinds.items():
            t0 = time.process_time()
            evaluate(rules, spec)
            got[kind] = time.process_time() - t0
        rows.append((n, got))
        print(f"threshold {t}: {n:,} states, " + ", ".join(f"{k} {v:.3f} s" for k, v in got.items()), flush=True)
    states = np.array([n for n, _ in rows], float)
    for kind in ("solve", *kinds):
        b, a = np.polyfit(states, [g[kind] for _, g in rows], 1)
        print(f"{kind}: {a:.3f} s + {b * 1e6:.2f} us a state")
    print(load())


def _costs_of(args: argparse.Namespace, evaluate: Any, load_rules: Any, build_plan: Any, solve: Any) -> None:
    """One rule set (``--rules``, ``--set``): CPU seconds of its table's solve and of one evaluation of
    each of ``--bots``, one thread, each ``--repeat`` times (the median kept), written to ``--out``
    for ``project --costs``."""
    rules = load_rules(args.rules, args.set)
    n = build_plan(rules).n_states
    out: dict[str, Any] = {"rules": args.rules, "set": args.set, "states": n, "load_start": load()}
    t0 = time.process_time()
    solve(rules)
    out["solve"] = time.process_time() - t0
    print(f"{args.rules} {' '.join(args.set)}: {n:,} states; solve {out['solve']:.3f} s", flush=True)
    out["bots"] = {}
    for spec in args.bots.split(","):
        got = []
        for _ in range(args.repeat):
            t0 = time.process_time()
            evaluate(rules, spec, use_cache=False)
            got.append(time.process_time() - t0)
        out["bots"][spec] = sorted(got)[len(got) // 2]
        print(f"  {spec}: {', '.join(f'{g:.3f}' for g in got)} s of CPU", flush=True)
    out["load_end"] = load()
    print(out["load_end"])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))


# ---------------------------------------------------------------------------------------------
# scaling


def _recorded(gen, rounds: list[list[str]]):
    """``gen`` (a task of harness.jobs.driver) passed through, each of its rounds of requests
    appended to ``rounds``."""
    try:
        specs = next(gen)
        while True:
            rounds.append(list(specs))
            specs = gen.send((yield specs))
    except StopIteration as stop:
        return stop.value


def _recording(jobs: list[dict[str, Any]]):
    """Wrappers of harness.studies.sweep's chain and fetch that record each task's rounds of requests."""
    import harness.studies.sweep as SW
    from harness.studies.depth import chain, fetch

    def wrap(gen, what):  # the job noted when the task is made, in sweep()'s order of cells
        job = {"what": what, "rounds": []}
        jobs.append(job)
        return _recorded(gen, job["rounds"])

    SW.chain = lambda p, *a, **k: wrap(chain(p, *a, **k), f"chain {p}")
    SW.fetch = lambda specs: wrap(fetch(specs), "bots")


def scaling(args: argparse.Namespace) -> None:
    from harness.jobs.cluster import open_tasks
    from harness.studies.cost import estimate_sweep
    from harness.studies.depth import DepthRequest, Evaluator, expected_rounds
    from harness.studies.sweep import cell_rules, parse_settings, sweep

    axes, fixed = parse_settings(SETTINGS)
    depth = DepthRequest(tuple(RATES), candidates=args.candidates)
    out = []
    for n in [int(x) for x in args.workers.split(",")]:
        cache = tempfile.mkdtemp(prefix=f"bench-dask-{n}-")
        os.environ["YATZY_HARNESS_CACHE"] = cache
        est = estimate_sweep(RULES, axes, fixed, BOTS, depth)
        jobs: list[dict[str, Any]] = []
        _recording(jobs)
        at_start = load()
        t_open = time.perf_counter()
        with open_tasks("dask", n) as tasks:
            t0 = time.perf_counter()
            ev = Evaluator(tasks=tasks)
            res = sweep(RULES, axes, fixed, BOTS, depth, evaluator=ev)
            wall = time.perf_counter() - t0
            usage = tasks.client.run(lambda: resource.getrusage(resource.RUSAGE_SELF)[:2])
        cpu = sum(u + s for u, s in usage.values())
        digests = {rs.name + str(i): rs for i, (_, rs) in enumerate(cell_rules(RULES, axes, fixed))}
        seconds = {f"{d}|{label}": e.seconds for (d, label), e in ev.memo.items() if not e.cached}
        # each recorded job's cell: jobs come cell by cell, 1 + len(RATES) of them per cell
        per = 1 + len(RATES)
        cells = list(digests.values())
        for i, job in enumerate(jobs):
            rs = cells[i // per]
            job["digest"] = rs.digest
            # the priority sweep() gave it: its expected rounds
            job["length"] = (
                expected_rounds(float(job["what"].split()[1]), args.candidates)
                if job["what"].startswith("chain")
                else 1.0
            )
            job["rounds"] = [[f"{rs.digest}|{ev.key(rs, s)[1]}" for s in r] for r in job["rounds"]]
        row = {
            "workers": n,
            "candidates": args.candidates,
            "wall": wall,
            "cluster_start": t0 - t_open,
            "workers_cpu": cpu,
            "evaluations": ev.computed,
            "evaluation_seconds": ev.cpu,
            "solves": ev.solve_seconds,
            "estimate": est.to_json(),
            "load_start": at_start,
            "load_end": load(),
            "steps": [
                [
                    c.p,
                    c.steps,
                    len(c.levels) - 1,
                    [lv.iterations for lv in c.levels[1:]],
                    [lv.rounds for lv in c.levels[1:]],
                ]
                for cell in res.cells
                for c in cell.depth.chains
            ],
            "jobs": jobs,
            "seconds": seconds,
            "table": json.dumps([c.to_json() for c in res.cells], sort_keys=True),
        }
        out.append(row)
        print(
            f"N={n} K={args.candidates}: wall {wall:.1f} s (cluster start {t0 - t_open:.1f} s), workers' CPU "
            f"{cpu:.1f} s, {ev.computed} evaluations ({ev.cpu:.1f} s in the tasks), {len(ev.solve_seconds)} solves "
            f"({sum(ev.solve_seconds):.1f} s); dry run: {est.evaluations} evaluations, {est.cpu:.1f} CPU-s; "
            f"load {at_start.split('load average:')[1].strip()} -> {row['load_end'].split('load average:')[1].strip()}",
            flush=True,
        )
    tables = {r["table"] for r in out}
    print(f"the sweep's figures are {'the same' if len(tables) == 1 else 'DIFFERENT'} at every worker count")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))


def chains(args: argparse.Namespace) -> None:
    """One rule set's depth of skill (``--rules``, chains at 60 % and 75 %) with ``--candidates`` K on
    ``--workers`` forked processes, cold (an empty cache): each chain's rounds after its first (W and
    the grid) as the number of evaluations each asked for, with its levels and steps, written to
    ``--out`` for ``project --chains`` (the full sweep's chains laid out as this rule set's)."""
    os.environ["YATZY_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="bench-dask-chains-")
    os.environ["YATZY_HARNESS_THREADS"] = "1"
    from harness.studies import depth as D
    from harness.jobs.cluster import open_tasks
    from harness.game.rules import load_rules

    rules = load_rules(args.rules, args.set)
    recorded: list[dict[str, Any]] = []
    orig = D.chain

    def recording(p, *a, **k):  # the job noted when the task is made, in the order of the rates
        job = {"p": p, "rounds": []}
        recorded.append(job)
        return _recorded(orig(p, *a, **k), job["rounds"])

    D.chain = recording
    at_start = load()
    t0 = time.perf_counter()
    with open_tasks("local", args.workers) as tasks:
        d = D.depth_of_skill(rules, RATES, evaluator=D.Evaluator(tasks=tasks), candidates=args.candidates)
    wall = time.perf_counter() - t0
    D.chain = orig
    out = {
        "rules": args.rules,
        "set": args.set,
        "candidates": args.candidates,
        "workers": args.workers,
        "wall": wall,
        "load_start": at_start,
        "load_end": load(),
        "chains": [],
    }
    for job, c in zip(recorded, d.chains):
        after = [len(r) for r in job["rounds"][1:]]
        out["chains"].append(
            {
                "p": c.p,
                "steps": c.steps,
                "levels": len(c.levels) - 1,
                "rounds": after,
                "evaluations": sum(after),
                "exact": all(lv.exact for lv in c.levels[1:] if lv.index > (c.first_fraction is not None)),
            }
        )
        print(
            f"p = {c.p}: {c.steps:.6f} steps, {len(c.levels) - 1} levels, {sum(after)} evaluations after the grid "
            f"in {len(after)} rounds in a row",
            flush=True,
        )
    print(f"wall {wall:.1f} s on {args.workers} workers; {at_start} -> {out['load_end']}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))


# ---------------------------------------------------------------------------------------------
# projection


def simulate(
    jobs: list[dict[str, Any]],
    cost: dict[str, float],
    needs_table: set[str],
    solve: dict[str, float],
    workers: int,
    cores: float,
    overhead: float = 0.0,
) -> float:
    """Wall time of ``jobs`` (each a digest and rounds of keys) on ``workers`` single-threaded workers
    sharing ``cores`` cores (processor sharing); a key in ``needs_table`` waits for its rule set's
    solve (cost ``solve[digest]``); each task costs ``cost[key]`` + ``overhead`` on a free core.
    Mirrors :meth:`harness.jobs.driver.Evaluator.drive` on Dask: jobs start longest first, a
    round's tasks carry the rounds its job has left (``length``, its expected rounds, less the
    rounds asked before; a key keeps its first asker's), a solve above all, and a free worker takes
    the highest priority waiting, the earliest submitted among equals (jobs recorded without
    ``length``, as the code before priorities ran: first come first served, solves too)."""
    from harness.jobs.driver import SOLVE_PRIORITY

    ready: list[tuple[float, int, Any]] = []
    seq = itertools.count()
    state: dict[Any, str] = {}
    prio: dict[Any, int] = {}
    waiting: dict[Any, list[int]] = collections.defaultdict(list)
    held: dict[str, list[str]] = collections.defaultdict(list)
    solved: set[str] = set()
    pos = [0] * len(jobs)
    left = [float(job.get("length", 0.0)) for job in jobs]
    solve_priority = SOLVE_PRIORITY if any("length" in job for job in jobs) else 0
    running: dict[Any, float] = {}
    t = 0.0

    def queue(task: Any, priority: int) -> None:
        state[task] = "queued"
        heapq.heappush(ready, (-priority, next(seq), task))

    def submit(key: str, priority: int) -> None:
        if key in state:
            return
        prio[key] = priority
        digest = key.split("|")[0]
        if key in needs_table and digest not in solved:
            state[key] = "held"
            if not held[digest]:
                queue(("solve", digest), solve_priority)
            held[digest].append(key)
            return
        queue(key, priority)

    def start_round(j: int) -> None:
        while pos[j] < len(jobs[j]["rounds"]):
            keys = jobs[j]["rounds"][pos[j]]
            priority = max(int(round(left[j])), 0)
            left[j] -= 1.0
            todo = [k for k in keys if state.get(k) != "done"]
            if todo:
                for k in todo:
                    submit(k, priority)
                    waiting[k].append(j)
                return
            pos[j] += 1

    def finish(task: Any) -> None:
        state[task] = "done"
        if isinstance(task, tuple):
            solved.add(task[1])
            for k in held.pop(task[1], []):
                queue(k, prio[k])
            return
        for j in waiting.pop(task, []):
            if all(state.get(k) == "done" for k in jobs[j]["rounds"][pos[j]]):
                pos[j] += 1
                start_round(j)

    for j in sorted(range(len(jobs)), key=lambda j: -left[j]):
        start_round(j)
    while ready or running:
        while ready and len(running) < workers:
            task = heapq.heappop(ready)[2]
            running[task] = (solve[task[1]] if isinstance(task, tuple) else cost[task]) + overhead
        rate = min(1.0, cores / len(running))
        dt = min(running.values())
        t += dt / rate
        for task in list(running):
            running[task] -= dt
            if running[task] <= 1e-12:
                del running[task]
                finish(task)
    return t


def critical_path(
    jobs: list[dict[str, Any]], cost: dict[str, float], solve: dict[str, float], needs_table: set[str]
) -> float:
    """The longest run of evaluations that must follow each other: a job's rounds, each as its
    dearest evaluation, after its rule set's solve (infinitely many workers)."""
    return max(
        sum(max(cost[k] for k in r) for r in job["rounds"])
        + (solve[job["digest"]] if any(k in needs_table for r in job["rounds"] for k in r) else 0.0)
        for job in jobs
    )


def _needs(key: str) -> bool:
    label = key.split("|", 1)[1]
    return label.startswith("solver")


#: Per-evaluation CPU seconds of scandinavian when no ``--costs`` file is given: the first
#: measurement, at load average 2-8 (benchmarks/BENCHMARKS.md, "Sweeps and the depth of skill").
LOADED_COSTS = {"solve": 10.0, "bots": {"greedy": 12.0, "random": 12.0, "solver": 25.0, "solver:temperature=1": 73.5}}


def scandinavian(
    k3: dict[str, float] | None = None, costs: dict[str, Any] | None = None, recorded: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], dict[str, float], dict[str, float], set[str]]:
    """The full sweep's jobs: 16 thresholds x (three bots; chains at 60 % and 75 %), per-evaluation
    costs on one core from ``costs`` (``costs --rules scandinavian --out``: a solve, greedy, random,
    solver and a temperature evaluation, each taken for every value of the sweep; default
    :data:`LOADED_COSTS`), the chains' levels and evaluations per level as measured on scandinavian at
    the standard threshold (60 %: 17 levels, 54 evaluations after the grid; 75 %: 6 levels, 21).
    ``k3``: rounds and evaluations per level scaled by the ratios measured with --candidates 3 on the
    reduced sweep; ``recorded`` (a ``chains --out`` file): each chain's rounds as recorded there."""
    from harness.studies.depth import expected_rounds

    c = costs or LOADED_COSTS
    k = recorded["candidates"] if recorded is not None else 1
    soft = c["bots"]["solver:temperature=1"]
    plain = {b: c["bots"][b] for b in ("greedy", "random", "solver")}
    grid = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 1000.0]
    jobs, cost, solve = [], {}, {}
    needs = set()
    for t in range(55, 71):
        d = f"scand{t}"
        solve[d] = c["solve"]

        def key(label: str, c: float) -> str:
            out = f"{d}|{label}"
            cost[out] = c
            if label.startswith("solver"):
                needs.add(out)
            return out

        bots = [key("greedy", plain["greedy"]), key("solver:temperature=1.0", soft), key("solver", plain["solver"])]
        jobs.append({"digest": d, "rounds": [bots], "length": 1.0})
        first = [key("random", plain["random"])] + [
            key("solver" if v == 0 else f"solver:temperature={v!r}", plain["solver"] if v == 0 else soft) for v in grid
        ]
        for p, per_level in ((0.6, [3] * 14 + [4] * 3), (0.75, [4] * 3 + [3] * 3)):
            rounds = [first]
            if recorded is not None:
                got = next(c["rounds"] for c in recorded["chains"] if c["p"] == p)
                rounds += [[key(f"T{p}-{i}-{j}", soft) for j in range(n)] for i, n in enumerate(got)]
                jobs.append({"digest": d, "rounds": rounds, "length": expected_rounds(p, k)})
                continue
            for lv, n in enumerate(per_level):
                if k3 is None:
                    rounds += [[key(f"T{p}-{lv}-{i}", soft)] for i in range(n)]
                else:
                    r = max(1, round(n * k3["rounds"]))
                    e = n * k3["evaluations"]
                    rounds += [[key(f"T{p}-{lv}-{i}-{j}", soft) for j in range(max(1, round(e / r)))] for i in range(r)]
            jobs.append({"digest": d, "rounds": rounds, "length": expected_rounds(p, 1 if k3 is None else 3)})
    return jobs, cost, solve, needs


def project(args: argparse.Namespace) -> None:
    runs = json.loads(Path(args.runs).read_text())
    base = next(r for r in runs if r["workers"] == 1)
    # CPU seconds of each task: its seconds in the N = 1 run scaled by that run's CPU over its tasks'
    # seconds (the one worker got less than a core when the machine was shared)
    scale = base["workers_cpu"] / (base["evaluation_seconds"] + sum(base["solves"]))
    cost = {k: v * scale for k, v in base["seconds"].items()}
    solve = {job["digest"]: (max(base["solves"]) if base["solves"] else 0.0) * scale for job in base["jobs"]}
    needs = {k for k in cost if _needs(k)}
    print(f"the reduced sweep replayed (each task's CPU seconds from the N = 1 run, x{scale:.3f} of its seconds):")
    print(
        "| workers | measured wall | cores it got (workers' CPU / wall) | simulated on those cores | error | "
        "tasks' CPU over N = 1's | simulated with it | error | simulated on 2 free cores | speed-up measured | "
        "speed-up on 2 free cores |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    w1 = base["wall"]
    free1 = simulate(base["jobs"], cost, needs, solve, 1, args.cores, args.overhead)
    contention = 1.0
    for r in runs:
        got = r["workers_cpu"] / r["wall"]
        sim = simulate(base["jobs"], cost, needs, solve, r["workers"], got, args.overhead)
        # the same work took more CPU with several workers busy (shared caches, memory, clock): the
        # scheduling replayed with each task's CPU scaled by the run's CPU over the N = 1 run's
        infl = r["workers_cpu"] / base["workers_cpu"]
        if r["workers"] == 2:
            contention = infl
        c2 = {k: v * infl for k, v in cost.items()}
        s2 = {k: v * infl for k, v in solve.items()}
        sim2 = simulate(base["jobs"], c2, needs, s2, r["workers"], got, args.overhead)
        free = simulate(base["jobs"], cost, needs, solve, r["workers"], args.cores, args.overhead)
        print(
            f"| {r['workers']} | {r['wall']:.1f} s | {got:.2f} | {sim:.1f} s | {100 * (sim / r['wall'] - 1):+.1f} % | "
            f"x{infl:.3f} | {sim2:.1f} s | {100 * (sim2 / r['wall'] - 1):+.1f} % | "
            f"{free:.1f} s | {w1 / r['wall']:.2f} | {free1 / free:.2f} |"
        )
    for r in runs:  # the factor measured on the N = 2 run, checked on the others
        if r["workers"] > 2:
            got = r["workers_cpu"] / r["wall"]
            sim = simulate(
                base["jobs"],
                {k: v * contention for k, v in cost.items()},
                needs,
                {k: v * contention for k, v in solve.items()},
                r["workers"],
                got,
                args.overhead,
            )
            print(
                f"N = {r['workers']} replayed with the N = 2 run's factor x{contention:.3f}: {sim:.1f} s against "
                f"{r['wall']:.1f} s measured ({100 * (sim / r['wall'] - 1):+.1f} %)"
            )
    if args.contention is not None:
        contention = args.contention
    cp = critical_path(base["jobs"], cost, solve, needs)
    print(f"critical path of the reduced sweep: {cp:.1f} s; CPU in the tasks {sum(cost.values()):.1f} s")
    k3 = None
    if args.k3:
        r3 = json.loads(Path(args.k3).read_text())[0]
        it1 = sum(sum(s[3]) for s in base["steps"])
        ro3 = sum(sum(s[4]) for s in r3["steps"])
        ev3 = sum(sum(s[3]) for s in r3["steps"])
        k3 = {"rounds": ro3 / it1, "evaluations": ev3 / it1}
        print(
            f"--candidates 3 on the reduced sweep: {ro3} rounds and {ev3} evaluations for the levels against "
            f"{it1} with one at a time (x{k3['rounds']:.2f} rounds, x{k3['evaluations']:.2f} evaluations); "
            f"wall at N = {r3['workers']}: {r3['wall']:.1f} s"
        )
    costs = json.loads(Path(args.costs).read_text()) if args.costs else None
    print(
        f"\nper-evaluation CPU seconds of scandinavian: {json.dumps(costs or LOADED_COSTS)}"
        + (f" ({args.costs}: {costs.get('load_start', '')})" if costs else " (the first measurement, under load)")
        + f"; each task's CPU x{contention:.3f} (every core busy)"
    )
    schemes: list[tuple[str, Any, Any]] = [("one candidate a round", None, None)]
    if k3:
        schemes.append(("--candidates 3", k3, None))
    for path in args.chains or []:
        rec = json.loads(Path(path).read_text())
        schemes.append((f"--candidates {rec['candidates']}, chains as recorded on {rec['rules']} ({path})", None, rec))
        print(
            f"{path}: "
            + "; ".join(
                f"p = {c['p']}: {c['levels']} levels, {c['evaluations']} evaluations after the "
                f"grid in {len(c['rounds'])} rounds"
                for c in rec["chains"]
            )
        )
    for label, scale, rec in schemes:
        jobs, c, sv, nd = scandinavian(scale, costs, rec)
        # every worker's core busy, as the N = 2 run's two were: each task's CPU times that run's
        c = {k: v * contention for k, v in c.items()}
        sv = {k: v * contention for k, v in sv.items()}
        total = sum(c.values()) + sum(sv.values())
        cp = critical_path(jobs, c, sv, nd)
        print(
            f"\nscandinavian, 16 thresholds, 3 bots, chains at 60 % and 75 % ({label}): "
            f"{len(c)} evaluations, {total / 3600:.2f} CPU-hours; critical path {cp / 60:.1f} min "
            f"({max(len(j['rounds']) for j in jobs)} rounds in a row)"
        )
        print("| workers | projected wall | speed-up over 1 |")
        print("|---:|---:|---:|")
        one = simulate(jobs, c, nd, sv, 1, 1)
        for n in (1, 8, 32, 64):
            w = simulate(jobs, c, nd, sv, n, n)
            print(f"| {n} | {w / 60:.1f} min | {one / w:.1f} |")


def reuse(args: argparse.Namespace) -> None:
    """Evaluations per level with and without the reuse of the earlier levels' evaluations (every
    dial value evaluated so far re-scored against the new level below, at no cost: the bracket and
    the interpolation start from them), and with --candidates 3 (rounds and evaluations)."""
    os.environ["YATZY_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="bench-dask-reuse-")
    from harness.studies import chain as CH
    from harness.studies import depth as D
    from harness.game.rules import load_rules

    rules = load_rules(args.rules, args.set)
    orig = CH._root  # chain() finds a level's root one at a time through this name

    def grid_only(p, below, below_v, known, dial, tol):
        sub = {v: e for v, e in known.items() if v in dial.grid or v == below_v}
        res = yield from orig(p, below, below_v, sub, dial, tol)
        known.update(sub)
        return res

    print(load())
    for label, patch, k in (
        ("reuse (the chain as it is)", None, 1),
        ("grid and the level below only", grid_only, 1),
        ("reuse, --candidates 2", None, 2),
        ("reuse, --candidates 3", None, 3),
        ("reuse, --candidates 5", None, 5),
    ):
        CH._root = patch or orig
        d = D.depth_of_skill(rules, (0.6, 0.75), candidates=k)
        for c in d.chains:
            its = [lv.iterations for lv in c.levels[1:]]
            rounds = [lv.rounds if lv.rounds is not None else lv.iterations for lv in c.levels[1:]]
            print(
                f"{label}: p = {c.p}: {c.steps:.6f} steps, {len(its)} levels, {sum(its)} evaluations for the levels "
                f"({sum(its) / len(its):.2f} a level), {sum(rounds)} rounds in a row ({sum(rounds) / len(its):.2f} "
                f"a level)",
                flush=True,
            )
    CH._root = orig
    print(load())


def split(args: argparse.Namespace) -> None:
    """Where one evaluation's time goes on one thread: the policy's outcome rows of every live state
    (``policy_fill``: a function of the state and the bot only, so it splits across workers by
    blocks of states), and inside them the bot's policy (``solver_policy``: the solver's values of
    every keep and box) and the turns' outcomes under it (``policy_outcomes``); the rest (the
    forward pass's pushes through the layers, in one place); and the bytes of the rows a split
    would move."""
    os.environ["YATZY_HARNESS_THREADS"] = "1"
    os.environ["YATZY_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="bench-dask-split-")
    import harness.exact.evaluate as E
    import harness.exact.kernels.policy as EK
    from harness.exact import solver as S
    from harness.game.rules import load_rules

    orig = E.policy_fill
    spent = {"fill": 0.0, "solver_policy": 0.0, "policy_outcomes": 0.0}

    def timed(*a, **k):
        fill, *rest = orig(*a, **k)

        def f(lo, hi, row_of, live, outp, P, start):
            t0 = time.process_time()
            fill(lo, hi, row_of, live, outp, P, start)
            spent["fill"] += time.process_time() - t0

        return (f, *rest)

    def kernel(name):
        fn = getattr(EK, name)

        def k(*a):
            t0 = time.process_time()
            fn(*a)
            spent[name] += time.process_time() - t0

        setattr(EK, name, k)

    E.policy_fill = timed
    kernel("solver_policy")  # a Python function choosing soft_policy or hard_policy
    kernel("policy_outcomes")
    print(load())
    E.evaluate(load_rules("forced"), "solver:temperature=3", use_cache=False)  # compiled first
    for spec in args.bots.split(","):
        rules = load_rules(args.rules, args.set)
        S.solve(rules)
        plan = S.build_plan(rules)
        n_out = len(S.outcome_codes(rules, plan.layout).o_box)
        for key in spent:
            spent[key] = 0.0
        t0 = time.process_time()
        E.evaluate(rules, spec, use_cache=False)
        total = time.process_time() - t0
        print(
            f"{args.rules} {' '.join(args.set)} {spec}: {plan.n_states:,} states, {total:.2f} s of CPU, of which "
            f"the outcome rows {spent['fill']:.2f} s ({100 * spent['fill'] / total:.1f} %: the bot's policy "
            f"{spent['solver_policy']:.2f} s, the turns' outcomes {spent['policy_outcomes']:.2f} s), the rest "
            f"{total - spent['fill']:.2f} s; the rows a split would move: {plan.n_states:,} x {n_out} x 8 B = "
            f"{plan.n_states * n_out * 8 / 2**20:.0f} MiB",
            flush=True,
        )
    print(load())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("costs")
    c.add_argument("--rules", default=None, help="one rule set's costs instead of the generala fit")
    c.add_argument("--set", action="append", default=[])
    c.add_argument("--bots", default="greedy,random,solver,solver:temperature=1")
    c.add_argument("--repeat", type=int, default=1)
    c.add_argument("--out", default=None)
    s = sub.add_parser("scaling")
    s.add_argument("--workers", default="1,2,3")
    s.add_argument("--candidates", type=int, default=1)
    s.add_argument("--out", default=None)
    ch = sub.add_parser("chains")
    ch.add_argument("--rules", default="scandinavian")
    ch.add_argument("--set", action="append", default=[])
    ch.add_argument("--candidates", type=int, default=2)
    ch.add_argument("--workers", type=int, default=2)
    ch.add_argument("--out", default=None)
    p = sub.add_parser("project")
    p.add_argument("--runs", required=True)
    p.add_argument("--k3", default=None)
    p.add_argument(
        "--chains",
        action="append",
        default=None,
        help="a 'chains --out' file: the sweep's chains laid out as recorded there (repeatable)",
    )
    p.add_argument("--cores", type=float, default=2.0)
    p.add_argument("--overhead", type=float, default=0.0, help="seconds added to every task")
    p.add_argument(
        "--contention",
        type=float,
        default=None,
        help="factor on every task's CPU in the full projection (default: the N = 2 run's CPU over the "
        "N = 1 run's, every core busy)",
    )
    p.add_argument(
        "--costs", default=None, help="scandinavian's per-evaluation costs: a 'costs --rules scandinavian --out' file"
    )
    r = sub.add_parser("reuse")
    r.add_argument("--rules", default="generala")
    r.add_argument("--set", action="append", default=[])
    sp = sub.add_parser("split")
    sp.add_argument("--rules", default="standard")
    sp.add_argument("--set", action="append", default=[])
    sp.add_argument("--bots", default="solver:temperature=1")
    args = ap.parse_args()
    {"costs": costs, "scaling": scaling, "chains": chains, "project": project, "reuse": reuse, "split": split}[
        args.cmd
    ](args)


if __name__ == "__main__":
    main()

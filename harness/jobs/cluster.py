"""Where exact evaluations run: in this process, on forked local workers, or as tasks on a Dask cluster.

An exact job (``evaluate``, ``sweep``, ``calibrate --exact``, the depth of skill) is cut into
independent tasks, one evaluation of one bot at one rule set (:class:`harness.jobs.driver.Evaluator`
asks for them; :func:`harness.jobs.driver.drive` lets several chains and cells ask at once). Target play's
evaluation that ``evaluate`` asks for on Dask is itself cut into tasks, blocks of each layer of its pass
(:mod:`harness.exact.target_pass`), driven from the client. This module
gives the evaluator its :class:`Tasks`: ``submit`` a call, take results ``as_completed`` (in any
order: an evaluation is recorded under its (rule-set digest, bot label), so the order never shows
in a result), ``cancel`` what is pending (Ctrl-C)::

    with open_tasks("dask", workers=3) as tasks:          # a LocalCluster of 3 single-threaded workers
        ev = Evaluator(tasks)
    with open_tasks("dask", scheduler="tcp://host:8786") as tasks: ...

On Dask:

* **Tables are solved once and shared through the cache directory**, never moved as task
  results: before the evaluations of a rule set whose value table is not cached, one solve task
  writes it (atomically, :func:`harness.exact.solver.save_table`), and every evaluation then reads it from
  the shared cache. The cache directory must be one path every worker sees (a shared file system);
  :class:`harness.jobs.dask_plugin.Setup` sets it on every worker, restarted ones included. Cache files are keyed by the
  rule set's digest and the file format's version (:data:`harness.exact.solver.FORMAT`,
  :data:`harness.exact.evaluate.FORMAT`); the code itself is checked instead: every worker's
  :func:`~harness.jobs.versions.code_version` (a digest of the harness's and the bots' sources and
  the numeric libraries' versions) must equal the client's, at start and in every task, so one cache
  is never written by two versions of the code.
* **Workers**: ``threads`` numba / solver threads each (:data:`THREADS_ENV`, default 1: one task a
  core), a LocalCluster's workers ``memory_limit`` each (default :data:`WORKER_MEMORY`); a worker's
  task lost with it (SIGKILL, out of memory) is run again elsewhere (Dask's
  ``distributed.scheduler.allowed-failures``), a task that raised is retried :data:`RETRIES` times.
* **Same answer**: every evaluation is the one :func:`harness.exact.evaluate.evaluate` computes in this
  process: its forward pass is cut into the same parts on any number of threads
  (:func:`harness.exact.evaluate.policy_fill`), so the bits do not depend on the worker or its threads;
  target play's blocks are cut from the layer's cells alone and their partials summed in block order.
  They may differ between CPU kinds (numba compiles for the host CPU: fused multiply-adds and vector
  widths change the last bits of sums); a cluster of mixed CPU kinds is therefore not promised the
  laptop's bytes, only its figures to ~1e-15.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import os
import time
from typing import Any, Callable, Iterable, Iterator, Sequence

from harness.exact import solver as S
from harness.exact.evaluate import evaluate
from harness.jobs.versions import check_version, code_version
from harness.game.registry import make
from harness.util.backends import dask_client, local_cluster, open_backend, require_distributed
from harness.util.cache import CACHE_ENV, default_cache_dir
from harness.util.errors import RunFailed, UserError

log = logging.getLogger(__name__)

#: The environment variable that sets the solver's and the forward pass's threads in a process
#: (:func:`harness.exact.threads.n_threads`); Dask workers get it from :class:`Setup`.
THREADS_ENV = "YATZY_HARNESS_THREADS"
#: Memory limit of each LocalCluster worker: a scandinavian temperature evaluation peaks at ~0.9 GiB
#: (benchmarks/BENCHMARKS.md, "Sweeps and the depth of skill"); Dask pauses a worker at 80 % and
#: restarts it at 95 %.
WORKER_MEMORY = "3GiB"
#: How many times a task that raised is run again (a lost worker's tasks are rerun by the scheduler).
RETRIES = 2
#: A job whose cluster has had no worker for this long stops in one line (seconds); its finished
#: evaluations are cached, so the same command goes on from them.
LOST_AFTER = 10.0
#: Tries of the start-up (the set-up plugin, the workers' code check) while workers die under it.
START_TRIES = 5


#: Called with a task's name just before the task runs, in the process that runs it; None: nothing.
#: Tests set it (``monkeypatch.setattr(cluster, "TASK_HOOK", Delay(...))``, a picklable callable) to
#: hold chosen tasks back and so force completions out of order or kill a worker mid-task; the hook
#: in force when :func:`open_tasks` is entered travels with every task of that job.
TASK_HOOK: Callable[[str], None] | None = None


def run_task(
    fn: Callable[..., Any], name: str, version: str | None, hook: Callable[[str], None] | None, *args: Any
) -> Any:
    """Every task, wherever it runs: refused by a worker whose code is not the client's ``version``,
    then ``hook(name)`` (:data:`TASK_HOOK`) if there is one, then ``fn(*args)``."""
    check_version(version)
    if hook is not None and name:
        hook(name)
    return fn(*args)


def evaluate_task(rules: Any, spec: str) -> Any:
    """One task: the evaluation of ``spec`` on ``rules`` (from the shared cache, or computed and
    written there)."""
    return evaluate(rules, spec)


def solve_task(rules: Any) -> float:
    """One task: solve (or load) the value table of ``rules`` into the shared cache; the seconds it took."""
    t0 = time.perf_counter()
    S.solve(rules)
    return time.perf_counter() - t0


def needs_table(rules: Any, spec: str) -> bool:
    """Whether evaluating ``spec`` reads the solver's value table of ``rules`` (and it is not cached)."""
    strat = make(spec, rules)
    if type(strat).__module__ != "strategies.solver" or getattr(strat, "target", None):
        return False
    return not S.cache_path(rules).exists()


class Tasks:
    """Tasks on a ``concurrent.futures`` executor (``None``: in this process, at submit time)."""

    remote = False

    def __init__(
        self,
        executor: cf.Executor | None = None,
        workers: int = 1,
        description: str = "in this process",
        hook: Callable[[str], None] | None = None,
    ):
        self.executor = executor
        self.workers = workers
        self.description = description
        self.version: str | None = None
        self.hook = hook

    def submit(self, fn: Callable[..., Any], *args: Any, key: str = "", priority: int = 0, name: str = "") -> Any:
        """``fn(*args)`` as a future, through :func:`run_task` (``name``: what :data:`TASK_HOOK` is
        told). ``priority``: Dask's (higher first among the tasks waiting for a worker); forked
        workers take their tasks in the order submitted."""
        if self.executor is None:
            f: cf.Future = cf.Future()
            try:
                f.set_result(run_task(fn, name, None, self.hook, *args))
            except Exception as exc:
                f.set_exception(exc)
            return f
        return self.executor.submit(run_task, fn, name, None, self.hook, *args)

    def as_completed(self, futures: Sequence[Any]) -> Iterable[Any]:
        return cf.as_completed(futures)

    def wait_any(self, futures: Sequence[Any]) -> tuple[set[Any], set[Any]]:
        """(done, not done) once at least one of ``futures`` is done."""
        done, rest = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        return set(done), set(rest)

    def cancel(self, futures: Sequence[Any]) -> None:
        for f in futures:
            f.cancel()


class DaskTasks(Tasks):
    """Tasks on a Dask cluster (module docstring): retried, cancelled on the scheduler too."""

    remote = True

    def __init__(
        self,
        client: Any,
        workers: int,
        description: str,
        retries: int = RETRIES,
        hook: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(None, workers, description, hook)
        self.client = client
        self.retries = retries
        self.version = code_version()

    def submit(self, fn: Callable[..., Any], *args: Any, key: str = "", priority: int = 0, name: str = "") -> Any:
        return self.client.submit(
            run_task,
            fn,
            name,
            self.version,
            self.hook,
            *args,
            key=key or None,
            pure=False,
            retries=self.retries,
            priority=priority,
        )

    def as_completed(self, futures: Sequence[Any]) -> Iterable[Any]:
        rest = list(futures)
        while rest:
            done, left = self.wait_any(rest)
            yield from (f for f in rest if f in done)
            rest = [f for f in rest if f in left]

    def wait_any(self, futures: Sequence[Any]) -> tuple[set[Any], set[Any]]:
        """(done, not done) once one of ``futures`` is done; a :class:`RunFailed` in one line once
        the cluster has had no worker for :data:`LOST_AFTER` seconds (the tasks would wait for ever)."""
        import distributed

        alone: float | None = None
        while True:
            try:
                done, rest = distributed.wait(futures, timeout=1.0, return_when="FIRST_COMPLETED")
                return set(done), set(rest)
            except TimeoutError:
                pass
            try:
                n = sum(self.client.nthreads().values())
            except OSError:
                n = 0
            now = time.monotonic()
            alone = None if n else (alone or now)
            if alone is not None and now - alone >= LOST_AFTER:
                raise RunFailed(
                    f"every Dask worker of {self.description} is gone (none for {LOST_AFTER:g} s); the "
                    f"evaluations finished are cached: run the same command again to go on from them"
                )

    def cancel(self, futures: Sequence[Any]) -> None:
        self.client.cancel(list(futures), force=True)


def _worker_report() -> dict[str, Any]:
    return {
        "version": code_version(),
        "cache": os.environ.get(CACHE_ENV),
        "threads": os.environ.get(THREADS_ENV),
        "pid": os.getpid(),
    }


def check_workers(client: Any, version: str) -> dict[str, Any]:
    """Every worker's :func:`code_version` must be ``version``: a UserError naming those that differ.
    A worker that dies meanwhile is left out (the scheduler reruns its tasks elsewhere)."""
    got = {w: r for w, r in client.run(_worker_report, on_error="return").items() if isinstance(r, dict)}
    bad = {w: r["version"] for w, r in got.items() if r["version"] != version}
    if bad:
        raise UserError(
            f"Dask workers run other harness code than this client ({version}): "
            + ", ".join(f"{w} has {v}" for w, v in sorted(bad.items()))
            + "; install the same revision on every worker"
        )
    return got


@contextlib.contextmanager
def open_tasks(
    backend: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    *,
    threads: int = 1,
    memory_limit: str = WORKER_MEMORY,
    retries: int = RETRIES,
) -> Iterator[Tasks]:
    """Where a job's evaluations run: ``local`` (1 worker: this process; more: forked processes)
    or ``dask`` (``scheduler`` an address, or a LocalCluster of ``workers`` processes with
    ``threads`` threads and ``memory_limit`` each). Pending tasks are cancelled when the block
    is left by an exception (Ctrl-C included)."""
    hook = TASK_HOOK
    if backend == "local":
        if workers <= 1:
            yield Tasks(hook=hook)
            return
        with open_backend("local", workers, None) as b:
            yield Tasks(b.executor, workers, b.description, hook)
        return
    if backend != "dask":
        raise UserError(f"unknown backend {backend!r} (local or dask)")
    distributed = require_distributed()

    cache = str(default_cache_dir().resolve())
    cluster = None
    if scheduler:
        _, client = dask_client(scheduler)
        what = f"dask scheduler {scheduler}"
    else:
        env = {CACHE_ENV: cache, THREADS_ENV: str(threads), "NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": "1"}
        cluster = local_cluster(
            distributed,
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory_limit,
            dashboard_address=None,
            env=env,
        )
        client = distributed.Client(cluster)
        what = f"dask LocalCluster of {workers} processes ({threads} thread(s), {memory_limit} each)"
    try:
        from harness.jobs.dask_plugin import Setup  # (imports distributed: only here)

        version = code_version()
        _start_up(
            client, Setup({CACHE_ENV: cache, THREADS_ENV: str(threads), "NUMBA_NUM_THREADS": str(threads)}), version
        )
        n = max(1, sum(client.nthreads().values()))
        log.info("exact evaluations on %s: %d task slots, code %s, cache %s", what, n, version, cache)
        yield DaskTasks(client, n, what, retries, hook)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _start_up(client: Any, setup: Any, version: str) -> None:
    """Register the workers' set-up plugin and check their code, again while workers die under it
    (a worker killed in its first seconds broke the connection of either call: issue 49)."""
    from distributed.comm.core import CommClosedError  # (distributed is imported: only here)

    for attempt in range(START_TRIES):
        try:
            client.register_plugin(setup, name="yatzy-harness-setup")
            check_workers(client, version)
            return
        except (CommClosedError, OSError) as exc:
            if attempt == START_TRIES - 1:
                raise RunFailed(
                    f"the Dask workers kept failing while the job started ({type(exc).__name__}: "
                    f"{exc}); nothing was evaluated yet: run the same command again"
                ) from None
            log.info("a worker failed during start-up (%s); again", exc)
            time.sleep(1.0)


__all__ = [
    "DaskTasks",
    "RETRIES",
    "TASK_HOOK",
    "THREADS_ENV",
    "Tasks",
    "WORKER_MEMORY",
    "check_workers",
    "code_version",
    "evaluate_task",
    "needs_table",
    "open_tasks",
    "run_task",
    "solve_task",
]

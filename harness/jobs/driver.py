"""Exact evaluations on demand, for jobs that ask for many (the depth of skill's chains, sweeps,
exact calibration): an :class:`Evaluator` evaluates each (rule set, bot) once, in this process, on
forked workers or on Dask tasks (:mod:`harness.jobs.cluster`); a job is a generator that yields the
bot specs it needs next (a :data:`Task`), and :func:`drive` runs many of them together, each
resuming when its own evaluations are in (:func:`fetch`: a task that only asks).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Generator, Sequence

from harness.jobs.cluster import Tasks, evaluate_task, needs_table, solve_task
from harness.exact.evaluate import Evaluation, evaluate, is_cached, plays_for_target, solitaire_bot
from harness.util.progress import bar
from harness.game.rules import RuleSet


class NotCached(Exception):
    """An :class:`Evaluator` with ``cached_only`` was asked for an evaluation the cache lacks."""


Request = tuple[RuleSet, str]
#: A task: a generator that yields the bot specs it needs next and receives their evaluations.
Task = Generator[list[str], list[Evaluation], Any]


def _evaluate_one(rules: RuleSet, spec: str) -> Evaluation:
    return evaluate(rules, spec)


#: A table solve's priority on Dask: above any job's rounds left (every evaluation of its rule set that
#: reads the table waits for it).
SOLVE_PRIORITY = 1_000_000


class Evaluator:
    """Evaluations of (rule set, bot spec), each (rule-set digest, bot label) once: in this process,
    on ``executor`` (forked workers; the cache directory reaches them through the environment, see
    :mod:`harness.util.cache`), or on ``tasks`` (:mod:`harness.jobs.cluster`: forked workers or a Dask
    cluster, results taken in the order they complete). Before a rule set's evaluations, a value
    table they read and the cache lacks is solved once, as a task of its own, into the shared
    cache. ``on_done(rules, spec, evaluation)`` is called as each one arrives; ``progress`` draws a
    bar over the evaluations with the CPU time left at the measured cost of one (``expected``: how
    many the job will ask for, when known)."""

    def __init__(
        self,
        executor: Any = None,
        on_done: Callable[[RuleSet, str, Evaluation], None] | None = None,
        *,
        cached_only: bool = False,
        tasks: Tasks | None = None,
        progress: bool = False,
        expected: int | None = None,
    ) -> None:
        self.tasks = tasks if tasks is not None else Tasks(executor) if executor is not None else None
        self.executor = executor
        self.on_done = on_done
        #: evaluate nothing: an evaluation not in the cache raises :class:`NotCached`
        self.cached_only = cached_only
        self.memo: dict[tuple[str, str], Evaluation] = {}
        self._labels: dict[tuple[str, str], str] = {}
        self._tables: set[str] = set()
        self.progress = progress
        self.expected = expected
        self._bar: Any = None
        self._submitted = 0
        #: seconds of the evaluations computed (not read from the cache), and how many: on a
        #: single-threaded worker their CPU time
        self.cpu = 0.0
        self.computed = 0
        #: seconds of each table solve a task did
        self.solve_seconds: list[float] = []

    def key(self, rules: RuleSet, spec: str) -> tuple[str, str]:
        """(digest, label): ``solver:temperature=1`` and ``solver:temperature=1.0`` are one bot. A bot
        that cannot be evaluated exactly there is refused here, before any evaluation is started."""
        k = (rules.digest, spec)
        if k not in self._labels:
            self._labels[k] = solitaire_bot(rules, spec).label
        return rules.digest, self._labels[k]

    def get(self, rules: RuleSet, spec: str) -> Evaluation:
        return self.memo[self.key(rules, spec)]

    def many(self, requests: Sequence[Request]) -> list[Evaluation]:
        todo: dict[tuple[str, str], Request] = {}
        for rules, spec in requests:
            key = self.key(rules, spec)
            if key not in self.memo and key not in todo:
                if self.cached_only and not is_cached(rules, spec):
                    raise NotCached(spec)
                todo[key] = (rules, spec)
        if todo:
            self._show(len(todo))
        if self.tasks is None or (len(todo) <= 1 and not self.tasks.remote):
            for key, (rules, spec) in todo.items():
                self._done(key, rules, spec, _evaluate_one(rules, spec))
        else:
            self._on_tasks(todo)
        return [self.get(rules, spec) for rules, spec in requests]

    def _on_tasks(self, todo: dict[tuple[str, str], Request]) -> None:
        tasks = self.tasks
        assert tasks is not None
        tables = {}
        for (digest, _), (rules, spec) in todo.items():
            if digest not in self._tables and digest not in tables and needs_table(rules, spec):
                tables[digest] = rules
        futures: dict[Any, Any] = {}
        try:
            if tables:  # solved once each, in parallel, before any evaluation reads them
                futures = {
                    tasks.submit(solve_task, rules, key=f"solve-{d[:20]}-{time.time_ns()}"): d
                    for d, rules in tables.items()
                }
                for fut in tasks.as_completed(list(futures)):
                    self.solve_seconds.append(fut.result())
            self._tables.update(
                tables
            )  # (a rule set only plain bots asked for is not marked: its table may be needed later)
            # on a cluster target play's pass is split into blocks driven from here, the rest are tasks each
            split = {key: req for key, req in todo.items() if tasks.remote and plays_for_target(*req)}
            futures = {
                tasks.submit(
                    evaluate_task, rules, spec, key=f"evaluate-{key[0][:20]}-{_tag(key[1])}-{time.time_ns()}", name=spec
                ): key
                for key, (rules, spec) in todo.items()
                if key not in split
            }
            for key, (rules, spec) in split.items():
                self._done(key, rules, spec, evaluate(rules, spec, tasks=tasks, progress=self.progress))
            for fut in tasks.as_completed(list(futures)):
                key = futures[fut]
                rules, spec = todo[key]
                self._done(key, rules, spec, fut.result())
        except BaseException:  # Ctrl-C, or a task that failed for good: nothing else is left running
            tasks.cancel([f for f in futures if not f.done()])
            raise

    def drive(self, jobs: Sequence[tuple[RuleSet, Task]], lengths: Sequence[float] | None = None) -> list[Any]:
        """:func:`drive` on this evaluator's tasks without rounds: every evaluation a job asks for is
        submitted at once (after its rule set's table solve, if one is needed), and a job resumes
        when its own evaluations are in, in whatever order they complete. ``lengths``: each job's
        expected rounds of requests; a round is submitted with the priority of the rounds its job
        has left (longest remaining first, where the tasks outnumber the workers: a chain's levels
        before a bot that ends in one round), and jobs start longest first so that an evaluation
        two jobs ask for carries the longer one's priority. Priorities order the work, never the
        results."""
        tasks = self.tasks
        assert tasks is not None
        left = [float(n) for n in lengths] if lengths is not None else [0.0] * len(jobs)
        results: list[Any] = [None] * len(jobs)
        wants: dict[int, list[tuple[str, str]]] = {}  # job -> the keys it waits for
        asked: dict[int, list[str]] = {}
        flying: dict[Any, tuple[str, Any]] = {}  # future -> ("solve", digest) or ("evaluate", key)
        in_flight: set[tuple[str, str]] = set()
        solving: dict[str, list[tuple[tuple[str, str], Request, int]]] = {}  # digest -> evaluations held back
        reqs: dict[tuple[str, str], Request] = {}

        def submit(key: tuple[str, str], req: Request, priority: int) -> None:
            rules, spec = req
            if key in self.memo or key in in_flight:
                return
            in_flight.add(key)
            reqs[key] = req
            digest = key[0]
            if digest in solving:
                solving[digest].append((key, req, priority))
                return
            if digest not in self._tables and needs_table(rules, spec):
                solving[digest] = [(key, req, priority)]
                # a table before any evaluation: every evaluation of its rule set waits for it
                flying[
                    tasks.submit(
                        solve_task, rules, key=f"solve-{digest[:20]}-{time.time_ns()}", priority=SOLVE_PRIORITY
                    )
                ] = ("solve", digest)
                return
            self._show(1)
            flying[
                tasks.submit(
                    evaluate_task,
                    rules,
                    spec,
                    key=f"evaluate-{digest[:20]}-{_tag(key[1])}-{time.time_ns()}",
                    priority=priority,
                    name=spec,
                )
            ] = ("evaluate", key)

        def step(i: int, answer: list[Evaluation] | None) -> None:
            rules, gen = jobs[i]
            try:
                specs = next(gen) if answer is None else gen.send(answer)
            except StopIteration as stop:
                results[i] = stop.value
                wants.pop(i, None)
                return
            asked[i] = specs
            wants[i] = [self.key(rules, sp) for sp in specs]
            priority = max(int(round(left[i])), 0)
            left[i] -= 1.0
            for key, sp in zip(wants[i], specs):
                submit(key, (rules, sp), priority)

        def resume_ready() -> None:
            moved = True
            while moved:
                moved = False
                for i in [i for i, keys in wants.items() if all(k in self.memo for k in keys)]:
                    step(i, [self.memo[k] for k in wants[i]])
                    moved = True

        try:
            for i in sorted(range(len(jobs)), key=lambda i: -left[i]):
                step(i, None)
            resume_ready()
            while flying:
                done, _ = tasks.wait_any(list(flying))
                for fut in done:
                    what, ref = flying.pop(fut)
                    if what == "solve":
                        self.solve_seconds.append(fut.result())
                        self._tables.add(ref)
                        for key, req, priority in solving.pop(ref):
                            in_flight.discard(key)
                            submit(key, req, priority)
                        continue
                    ev = fut.result()
                    in_flight.discard(ref)
                    self._done(ref, *reqs[ref], ev)
                resume_ready()
        except BaseException:  # Ctrl-C, or a task that failed for good: nothing else is left running
            tasks.cancel([f for f in flying if not f.done()])
            raise
        return results

    def _done(self, key: tuple[str, str], rules: RuleSet, spec: str, ev: Evaluation) -> None:
        self.memo[key] = ev
        if not ev.cached:
            self.cpu += ev.seconds
            self.computed += 1
        if self._bar is not None:
            self._bar.update()
            self._bar.set_postfix_str(self.cpu_left(), refresh=False)
        if self.on_done is not None:
            self.on_done(rules, spec, ev)

    def _show(self, n: int) -> None:
        if not self.progress:
            return
        if self._bar is None:
            self._bar = bar(self.expected, "exact evaluations", "eval", quiet=False)
        self._submitted += n
        if self._submitted > (self._bar.total or 0):
            self._bar.total = self._submitted
            self._bar.refresh()

    def cpu_left(self) -> str:
        """The CPU time the evaluations still to come need, at the mean cost of those computed."""
        if not self.computed or self._bar is None:
            return ""
        left = max(0, (self._bar.total or 0) - self._bar.n)
        return f"~{left * self.cpu / self.computed / 60:.1f} CPU-min left"

    def close(self) -> None:
        """Erase the progress bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _tag(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:12]


def drive(
    tasks: Sequence[tuple[RuleSet, Task]], evaluator: Evaluator, lengths: Sequence[float] | None = None
) -> list[Any]:
    """Run tasks together (so several chains and rule sets share the workers) and return their
    results. On an evaluator with tasks (:mod:`harness.jobs.cluster`) each task resumes as its
    own requests are evaluated (:meth:`Evaluator.drive`, ``lengths`` its tasks' expected rounds for
    their priorities): a chain never waits for another's evaluations. Otherwise in rounds: every
    task's pending requests evaluated at once, then each task resumes. Either way a task's result
    depends only on its own evaluations."""
    if evaluator.tasks is not None and not evaluator.cached_only:
        return evaluator.drive(tasks, lengths)
    results: list[Any] = [None] * len(tasks)
    pending: dict[int, list[str]] = {}

    def step(i: int, answer: list[Evaluation] | None) -> None:
        gen = tasks[i][1]
        try:
            pending[i] = next(gen) if answer is None else gen.send(answer)
        except StopIteration as stop:
            results[i] = stop.value

    for i in range(len(tasks)):
        step(i, None)
    while pending:
        asked = dict(pending)
        pending.clear()
        evaluator.many([(tasks[i][0], s) for i, specs in asked.items() for s in specs])
        for i, specs in asked.items():
            step(i, [evaluator.get(tasks[i][0], s) for s in specs])
    return results


def fetch(specs: Sequence[str]) -> Task:
    """A task that asks for ``specs`` at once and returns their evaluations."""
    got = yield list(specs)
    return got

"""The course of a solitaire bot's game, exact: its running total round by round, jointly with what comes next.

A solitaire bot's play is a Markov chain over the solver's states (:mod:`harness.exact.evaluate`), and the
forward pass carries, for every live state, the distribution of its points so far (its score
window). Two joints of the running total X_r (after round r: points written, the upper bonus once
crossed, extra bonuses; :mod:`harness.game.outcome`) follow from it::

    from harness.exact.course import course
    c = course(rules, "greedy")      # -> Course (cached per rules, bot and FORMAT)
    c.pair(r)                        # P(X_r = s, X_{r+1} = v), r = 1 .. R - 1
    c.final_joint()                  # P(X_d = s, X_R = f), d the deficit round

* ``steps[r, s, x] = P(X_r = s, round r + 1 adds x)``: each live state's window times the points of
  its turn's outcomes, in the forward pass itself (one more sweep of the windows per layer).
* ``rest[s, t] = P(X_d = s, the rounds after d add t)``: a bot's future depends on its state, not on
  its points (a policy's choices are functions of the sheet), so this is the sum over the states g
  of round d of P(g, X_d = s) P(rest = t | g); the second factor comes from a backward pass of
  the rest's distribution over the layers after d, each layer's turn outcomes asked of the bot
  again (``fill``), about the share of the states in those layers of a second evaluation.

Those are what :func:`harness.reports.quality_exact.exact_course` needs for two independent players (their
difference's joints follow by summing over the other player's cumulative joints). What they do
not give, and why: the lead changes across a tied round need three rounds' joint totals and
the decisive round the whole path of the difference (see :data:`harness.reports.quality_exact.SAMPLED_METRICS`).

Refused (with the reason, :func:`refusal`): several columns (the course runs over the columns'
sum or best, not followed here), target play (its choices depend on its points so far: the rest
is not a function of the state) and rule sets whose score windows would be lumped.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.exact import evaluate as E
from harness.exact.kernels import policy as EK
from harness.exact import solver as S
from harness.util.errors import UserError
from harness.game.outcome import deficit_round
from harness.game.rules import RuleSet
from harness.game.strategy import Strategy

#: Version of the course cache files; bump when what they hold or how it is computed changes.
FORMAT = 1
#: Parts of a chunk whose joint sums are kept apart and added in order: as many whatever the threads,
#: so the joints are the same on any number of threads, to the last bit.
PARTS = 8


@dataclass(frozen=True)
class Course:
    """Exact joints of one solitaire bot's running totals on one rule set of R rounds (one column).

    steps: (R, cap + 1, X) ``steps[r, s, x]`` = P(total after round r is s, round r + 1 adds x)
    (r = 0 is before play); rest: (cap + 1, W) ``rest[s, t]`` = P(total after round
    ``deficit_round`` is s, the later rounds add t).
    """

    rules: str
    digest: str
    bot: str
    deficit_round: int
    steps: np.ndarray = field(repr=False)
    rest: np.ndarray = field(repr=False)
    seconds: float = 0.0
    cached: bool = False

    @property
    def rounds(self) -> int:
        return len(self.steps)

    @property
    def cells(self) -> int:
        """Score cells 0..cap of every joint."""
        return self.steps.shape[1]

    def pair(self, r: int) -> np.ndarray:
        """(cap + 1, cap + 1): P(X_r = s, X_{r+1} = v), r = 0 .. R - 1."""
        return _shear(self.steps[r], self.cells)

    def final_joint(self) -> np.ndarray:
        """(cap + 1, cap + 1): P(X_d = s, X_R = f), d the deficit round."""
        return _shear(self.rest, self.cells)

    def final(self) -> np.ndarray:
        """P(X_R = f): the final score's distribution."""
        return self.final_joint().sum(axis=0)


def _shear(j: np.ndarray, n: int) -> np.ndarray:
    """out[s, s + x] = j[s, x] (within n columns; the joints never reach past the cap)."""
    out = np.zeros((j.shape[0], n))
    for s in range(j.shape[0]):
        w = min(j.shape[1], n - s)
        out[s, s : s + w] = j[s, :w]
    return out


def refusal(rules: RuleSet, bot: str | Strategy) -> str | None:
    """None when the course of the bot's play on ``rules`` can be followed exactly; else why not."""
    try:
        strat = E.solitaire_bot(rules, bot)
    except UserError as exc:
        return str(exc)
    if rules.n_boxes < 2:
        return f"rule set {rules.name!r} plays one round: there is no course of a game to follow"
    if rules.columns > 1:
        return (
            f"rule set {rules.name!r} plays {rules.columns} columns: the course of a game over several "
            "columns is not followed exactly"
        )
    if strat.target_play() is not None:
        return f"{strat.label} plays for a target from its points so far: its course is not a chain of sheet states"
    if E.column_cap(rules)[1]:
        return (
            f"rule set {rules.name!r}: the scores' top cell is lumped (extra bonuses), the running totals are not exact"
        )
    return None


def cache_path(rules: RuleSet, label: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache file of a bot's course on a rule set."""
    d = Path(cache_dir) if cache_dir is not None else S.default_cache_dir()
    tag = hashlib.sha256(label.encode()).hexdigest()[:16]
    return d / f"course-{rules.digest[:40]}-{tag}-v{FORMAT}.bin"


def is_cached(rules: RuleSet, bot: str | Strategy, cache_dir: str | os.PathLike | None = None) -> bool:
    return cache_path(rules, E.solitaire_bot(rules, bot).label, cache_dir).exists()


def course(
    rules: RuleSet,
    bot: str | Strategy,
    cache_dir: str | os.PathLike | None = None,
    *,
    use_cache: bool = True,
    progress: bool = False,
) -> Course:
    """The :class:`Course` of a solitaire bot (a spec or an instance) on ``rules``: from the cache,
    or by a forward pass of its policy and a backward pass from the deficit round (then cached)."""
    t0 = time.perf_counter()
    why = refusal(rules, bot)
    if why:
        raise UserError(why)
    strat = E.solitaire_bot(rules, bot)
    label = strat.label
    d = deficit_round(rules.n_boxes)
    path = cache_path(rules, label, cache_dir)
    if use_cache and path.exists():
        try:
            head = S.load_table_header(path)
            shapes = [tuple(head["steps"]), tuple(head["rest"])]
        except (OSError, ValueError, KeyError, TypeError):
            shapes = None
        sizes = [int(np.prod(x)) for x in shapes] if shapes else None
        loaded = S.load_table(path, rules, sum(sizes)) if sizes else None
        if loaded is not None and loaded[1].get("course_format") == FORMAT and loaded[1].get("bot") == label:
            arr = loaded[0]
            return Course(
                rules.name,
                rules.digest,
                label,
                d,
                arr[: sizes[0]].reshape(shapes[0]).copy(),
                arr[sizes[0] :].reshape(shapes[1]).copy(),
                time.perf_counter() - t0,
                True,
            )
    steps, rest = _passes(rules, strat, d, progress)
    seconds = time.perf_counter() - t0
    if use_cache:
        try:
            S.save_table(
                path,
                rules,
                np.concatenate([steps.ravel(), rest.ravel()]),
                {
                    "course_format": FORMAT,
                    "bot": label,
                    "rules": rules.name,
                    "steps": list(steps.shape),
                    "rest": list(rest.shape),
                    "seconds": round(seconds, 3),
                },
            )
        except OSError as exc:
            E.log.warning("cannot write course cache %s: %s", path, exc)
    return Course(rules.name, rules.digest, label, d, steps, rest, seconds, False)


def _passes(rules: RuleSet, strat: Strategy, d: int, progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """(steps, rest) of :class:`Course`: the forward pass with :func:`EK.course_steps` on every chunk,
    then the backward pass of the rest from the last layer down to layer d."""
    strat.prepare_policy()
    threads = S.n_threads()
    plan = S.build_plan(rules)
    lay = plan.layout
    oc = S.outcome_codes(rules, lay)
    n_out = len(oc.o_box)
    nbx = rules.n_boxes
    cap, _ = E.column_cap(rules)
    x_max = int((oc.o_pts + oc.o_extra).max()) + int(lay.bonus)
    steps = np.zeros((nbx, cap + 1, x_max + 1))
    fill, _, _, _ = E.policy_fill(rules, strat, plan, threads)
    im, iflag = plan.item_mask, plan.item_flag
    first = lay.base[im * lay.n_flags + iflag]
    kept: dict[int, tuple[np.ndarray, ...]] = {}
    scratch = [np.zeros((cap + 1, x_max + 1)) for _ in range(PARTS)]

    def in_parts(a: int, b: int, kernel) -> list[tuple[int, int]]:
        parts = S.split_range(a, b, PARTS)
        S.run_blocks(lambda j, _: kernel(j, *parts[j]), [(j, j + 1) for j in range(len(parts))], threads)
        return parts

    def observe(c: S.Chunk) -> None:
        def part(j: int, lo: int, hi: int) -> None:
            EK.course_steps(
                lay,
                oc,
                im,
                iflag,
                lo,
                hi,
                c.row_of[lo - c.a :],
                c.live[lo - c.a :],
                c.outp,
                c.start,
                c.P,
                c.wlo,
                c.woff,
                c.D,
                scratch[j],
            )

        for j in range(len(in_parts(c.a, c.b, part))):
            steps[c.k] += scratch[j]
            scratch[j][:] = 0.0
        if c.k >= d:
            # (D's memory is reused two layers on)
            kept[c.k] = (c.P, c.D.copy(), c.wlo, c.woff) if c.k == d else (c.P,)

    S.forward_pass(
        rules, plan, fill, cap, True, threads, S.PassSetup(E.ROWS_PER_CHUNK, progress=progress, observe=observe)
    )
    _check(steps.sum(axis=(1, 2)), "the steps")

    def windows(k: int) -> np.ndarray:
        start, stop = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        wlen = np.zeros(stop - start, dtype=np.int64)
        EK.rest_lengths(
            lay,
            im,
            iflag,
            int(plan.layer_items[k]),
            int(plan.layer_items[k + 1]),
            start,
            int(rules.extra_yatzy_bonus),
            wlen,
        )
        foff = np.zeros(len(wlen) + 1, dtype=np.int64)
        np.cumsum(wlen, out=foff[1:])
        return foff

    foff2 = windows(nbx)
    R2 = np.ones(int(foff2[-1]))  # a full sheet: nothing more to come
    rest = np.zeros((cap + 1, 1))
    for k in range(nbx - 1, d - 1, -1):
        P = kept[k][0]
        start, start2 = int(plan.layer_states[k]), int(plan.layer_states[k + 1])
        foff = windows(k)
        Rk = np.zeros(int(foff[-1])) if k > d else np.zeros(0)
        if k == d:
            _, D, wlo, woff = kept[d]
            rest = np.zeros((cap + 1, int(np.diff(foff).max(initial=1))))
            sums = [np.zeros_like(rest) for _ in range(PARTS)]
        for a, b, row_of, live, outp in S.layer_chunks(plan, k, P, n_out, E.ROWS_PER_CHUNK):
            fill(a, b, row_of, live, outp, P, start)
            if k > d:
                fbase, out = 0, Rk
            else:  # the deficit layer a chunk at a time: its rest meets its windows and is dropped
                s0 = int(first[a]) - start
                s1 = int(first[b]) - start if b < len(first) else len(P)
                fbase, out = int(foff[s0]), np.zeros(int(foff[s1] - foff[s0]))

            def back(j: int, lo: int, hi: int, fbase=fbase, out=out) -> None:
                EK.course_rest(
                    lay,
                    oc,
                    im,
                    iflag,
                    lo,
                    hi,
                    row_of[lo - a :],
                    live[lo - a :],
                    outp,
                    start,
                    P,
                    foff,
                    fbase,
                    out,
                    start2,
                    foff2,
                    R2,
                )

            in_parts(a, b, back)
            if k == d:

                def outer(j: int, lo: int, hi: int, fbase=fbase, out=out) -> None:
                    EK.course_outer(lay, im, iflag, lo, hi, start, P, wlo, woff, D, foff, fbase, out, sums[j])

                for j in range(len(in_parts(a, b, outer))):
                    rest += sums[j]
                    sums[j][:] = 0.0
        R2, foff2 = Rk, foff
    _check(np.array([rest.sum()]), "the rest")
    return steps, rest


def _check(total: np.ndarray, what: str) -> None:
    if np.abs(total - 1.0).max(initial=0.0) > 1e-9:
        raise AssertionError(f"course: {what} lost probability: {total}")

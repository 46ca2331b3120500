"""Counter-based dice: fair, independent of batch, and the numba kernels equal the numpy reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from harness.game import loop_kernels
from harness.game import rng
from harness.game.dice import counts_of_faces, dice


def test_faces_are_fair_and_cover_1_to_6():
    keys = rng.game_keys(123, np.arange(20000))
    faces = rng.draw_faces(keys, 0, 0, 0, 5).ravel()
    counts = np.bincount(faces, minlength=7)[1:]
    assert counts.sum() == 100000 and faces.min() == 1 and faces.max() == 6
    assert chisquare(counts).pvalue > 1e-4


def test_a_game_key_depends_only_on_seed_and_index():
    a = rng.game_keys(5, np.arange(10, 20))
    b = rng.game_keys(5, np.array([15]))
    assert a[5] == b[0]
    assert not np.array_equal(rng.game_keys(6, np.arange(10, 20)), a)
    assert len(set(rng.game_keys(5, np.arange(100000)).tolist())) == 100000


def test_numba_kernels_equal_the_numpy_reference():
    keys = rng.game_keys(77, np.arange(500))
    d = dice(5)
    ref = d.roll_index_of_faces(rng.draw_faces(keys, 1, 3, 0, 5))
    assert np.array_equal(loop_kernels.throw(keys, 1, 3, 5, d.roll_lookup, d.radix), ref)
    assert np.array_equal(loop_kernels.uniforms(keys, 2, 7, 1, 4), rng.uniforms(keys, 2, 7, 1, 4))


def test_strategy_stream_is_separate_from_the_dice():
    keys = rng.game_keys(1, np.arange(100))
    u = rng.uniforms(keys, 0, 0, 0, 5)
    f = rng.draw_faces(keys, 0, 0, 0, 5)
    assert not np.array_equal(np.floor(u * 6).astype(int) + 1, f)


def test_the_kernels_compile_the_layout_of_rng_instead_of_copying_it():
    # the counter layout, mixer and constants live in harness.game.rng alone; a second copy could drift
    own = {
        k
        for k, v in vars(loop_kernels).items()
        if isinstance(v, (int, np.integer)) and not k.startswith("__") and getattr(rng, k, None) is not v
    }
    assert not own, f"loop_kernels defines its own stream constants {sorted(own)}; import them from harness.game.rng"
    for name in ("counter_base", "word", "face0", "unit", "DICE", "STRATEGY"):
        assert getattr(loop_kernels, name) is getattr(rng, name)


def test_counter_layout_is_a_mixed_radix_number():
    assert rng.counter_base(rng.DICE, 0, 0, 0) == rng.DICE * rng.SEATS * rng.TURNS * rng.STEPS * rng.WIDTH
    last = rng.counter_base(rng.DICE, rng.SEATS - 1, rng.TURNS - 1, rng.STEPS - 1) + np.uint64(rng.WIDTH - 1)
    assert last + np.uint64(1) == rng.counter_base(rng.STRATEGY, 0, 0, 0)  # streams tile, never overlap


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, rng.MAX_SEED),
    game=st.integers(0, 2**40),
    seat=st.integers(0, rng.SEATS - 1),
    turn=st.integers(0, rng.TURNS - 1),
    step=st.integers(0, rng.STEPS - 2),
    n=st.integers(1, 6),
    kept=st.integers(0, 6),
)
def test_kernel_and_numpy_paths_draw_the_same_dice_and_uniforms(seed, game, seat, turn, step, n, kept):
    keys = rng.game_keys(seed, np.array([game, game + 1]))
    d = dice(n)
    # first roll
    ref = d.roll_index_of_faces(rng.draw_faces(keys, seat, turn, 0, n))
    roll = loop_kernels.throw(keys, seat, turn, n, d.roll_lookup, d.radix)
    assert np.array_equal(roll, ref)
    # a reroll at ``step`` keeping the first ``kept`` dice of the hand takes the fresh draw of step + 1
    faces = d.roll_faces[roll]
    kept = min(kept, n - 1)
    fresh = rng.draw_faces(keys, seat, turn, step + 1, n)[:, : n - kept]
    want = d.roll_index_of_faces(np.concatenate([faces[:, :kept], fresh], axis=1))
    keep = d.keep_index(counts_of_faces(faces[:, :kept]))
    idx = np.arange(len(keys))
    first, left, active = np.ones(2, bool), np.full(2, 2, np.int16), np.ones(2, bool)
    bad = loop_kernels.reroll(
        keys,
        idx,
        seat,
        turn,
        step,
        n,
        roll,
        keep.astype(np.int32),
        d.keep_counts,
        d.keep_size,
        d.roll_counts,
        d.roll_as_keep,
        d.roll_lookup,
        d.radix,
        first,
        left,
        active,
    )
    assert bad == -1 and np.array_equal(roll, want)
    width = 1 + (seed + step) % rng.WIDTH
    assert np.array_equal(
        loop_kernels.uniforms(keys, seat, turn, step, width), rng.uniforms(keys, seat, turn, step, width)
    )

"""tapeflow's random streams are TensorFlow 2.21's (CPU, Philox) bit for bit: stateless ops for several seeds
and dtypes, tf.random.Generator draws and the state after each, make_seeds, split, reset_from_seed, and a
checkpoint written by TensorFlow. The reference numbers come from real TensorFlow
(tests/fixtures/tf_random/make_fixtures.py)."""
import hashlib
import os

import numpy as np
import pytest

import tapeflow as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tf_random")
with np.load(os.path.join(FIXTURES, "streams.npz")) as _f:
    REF = {key: _f[key] for key in _f.files}

SEEDS = {"s12": tf.constant([1, 2], tf.int64), "neg32": tf.constant([-1, 7], tf.int32),
         "big": tf.constant([2 ** 40 + 3, -5], tf.int64), "zero": tf.constant([0, 0], tf.int32)}


def same(got, key):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = REF[key]
    assert got.dtype == want.dtype and got.shape == want.shape, (key, got.dtype, got.shape)
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"), err_msg=key)


def same_digest(got, key):
    got = got.numpy()
    assert got.dtype.name == str(REF[key + ".dtype"])
    assert hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest() == str(REF[key + ".sha256"]), key


@pytest.mark.parametrize("tag", sorted(SEEDS))
def test_stateless_floats_are_tensorflows(tag):
    seed, sr, p = SEEDS[tag], tf.random, f"stateless.{tag}."
    same(sr.stateless_uniform([2, 3], seed), p + "uniform.float32")
    same(sr.stateless_uniform([5], seed, dtype=tf.float64), p + "uniform.float64")
    same(sr.stateless_uniform([7], seed, dtype=tf.float16), p + "uniform.float16")
    same(sr.stateless_uniform([9], seed, minval=-3.0, maxval=5.5), p + "uniform_range.float32")
    same(sr.stateless_normal([5, 7], seed), p + "normal.float32")
    same(sr.stateless_normal([6], seed, mean=1.5, stddev=0.25), p + "normal_scaled.float32")
    same(sr.stateless_normal([7], seed, dtype=tf.float64), p + "normal.float64")
    same(sr.stateless_normal([7], seed, dtype=tf.float16), p + "normal.float16")
    same(sr.stateless_truncated_normal([37], seed), p + "truncated_normal.float32")
    same(sr.stateless_truncated_normal([21], seed, dtype=tf.float64), p + "truncated_normal.float64")
    same(sr.stateless_truncated_normal([6], seed, mean=-1.0, stddev=3.0), p + "truncated_scaled.float32")


@pytest.mark.parametrize("tag", sorted(SEEDS))
def test_stateless_integers_are_tensorflows(tag):
    seed, sr, p = SEEDS[tag], tf.random, f"stateless.{tag}."
    same(sr.stateless_uniform([11], seed, minval=-5, maxval=17, dtype=tf.int32), p + "int.int32")
    same(sr.stateless_uniform([11], seed, minval=-2 ** 40, maxval=2 ** 41 + 3, dtype=tf.int64), p + "int.int64")
    for dt in (tf.int32, tf.int64, tf.uint32, tf.uint64):
        same(sr.stateless_uniform([6], seed, minval=None, maxval=None, dtype=dt), p + f"full_int.{dt.name}")


def test_large_stateless_draws_are_tensorflows():
    seed = tf.constant([1, 2], tf.int64)
    same_digest(tf.random.stateless_normal([200003], seed), "stateless.large.normal.float32")
    same_digest(tf.random.stateless_normal([100001], seed, dtype=tf.float64), "stateless.large.normal.float64")
    same_digest(tf.random.stateless_uniform([200003], seed), "stateless.large.uniform.float32")
    same_digest(tf.random.stateless_uniform([100001], seed, dtype=tf.float64), "stateless.large.uniform.float64")
    same_digest(tf.random.stateless_truncated_normal([100003], seed), "stateless.large.truncated_normal.float32")
    same_digest(tf.random.stateless_truncated_normal([50001], seed, dtype=tf.float64),
                "stateless.large.truncated_normal.float64")


def test_the_guides_generator_session_is_tensorflows():
    g, p = tf.random.Generator.from_seed(1), "gen.from_seed_1."
    same(g.state, p + "state0")
    same(g.normal(shape=(2, 3)), p + "normal")
    same(g.state, p + "state1")
    same(g.normal([5], mean=2.0, stddev=0.5), p + "normal_scaled")
    same(g.uniform([9]), p + "uniform")
    same(g.uniform([4], minval=-2.0, maxval=6.0), p + "uniform_range")
    same(g.uniform([3], dtype=tf.float64), p + "uniform64")
    same(g.truncated_normal([10]), p + "truncated_normal")
    same(g.uniform([7], minval=3, maxval=10, dtype=tf.int32), p + "int32")
    same(g.uniform([7], minval=-9, maxval=2 ** 35, dtype=tf.int64), p + "int64")
    same(g.normal([3], dtype=tf.float64), p + "normal64")
    same(g.uniform_full_int([4], dtype=tf.int64), p + "full_int")
    same(g.state, p + "state2")
    same(g.make_seeds(3), p + "make_seeds")
    same(g.state, p + "state3")
    children = g.split(2)
    same(g.state, p + "state4")
    for i, child in enumerate(children):
        same(child.state, p + f"split{i}.state")
        same(child.normal([4]), p + f"split{i}.normal")
    g.reset_from_seed(5)
    same(g.state, "gen.reset_5.state")
    same(g.normal([4]), "gen.reset_5.normal")


@pytest.mark.parametrize("tag,seed", [("neg", -3), ("big", 2 ** 40 + 5), ("huge", 2 ** 70 + 9)])
def test_a_python_int_seed_fills_the_state_words_low_first(tag, seed):
    g = tf.random.Generator.from_seed(seed)
    same(g.state, f"gen.seed_{tag}.state")
    same(g.normal([5]), f"gen.seed_{tag}.normal")


def test_from_state_and_seeds_for_stateless_ops_are_tensorflows():
    same(tf.random.Generator.from_state([7, -1, 12345], "philox").normal([5]), "gen.from_state.normal")
    seed = tf.random.Generator.from_seed(1).make_seeds(2)[:, 0]
    same(tf.random.stateless_normal([2, 3], seed=seed), "gen.stateless_from_seed_1")
    same_digest(tf.random.Generator.from_seed(11).normal([200003]), "gen.large.normal.float32")


def test_a_generator_restored_from_a_tensorflow_checkpoint_continues_its_stream():
    g = tf.random.Generator.from_seed(99)
    tf.train.Checkpoint(gen=g).restore(os.path.join(FIXTURES, "generator_ckpt", "ckpt-1")).assert_consumed()
    same(g.state, "ckpt.state")
    same(g.normal([5]), "ckpt.after")


@pytest.mark.parametrize("tag,seed", [("np", np.int64(5)), ("tensor", tf.constant(9, tf.int64)),
                                      ("over192", 2 ** 200 + 7), ("u64max", 2 ** 64 - 1)])
def test_seed_to_state_rules_are_tensorflows(tag, seed):
    """A numpy or tensor integer becomes the key; a Python int its low 192 bits spread over the words."""
    same(tf.random.Generator.from_seed(seed).state, f"gen.seed_{tag}.state")


def test_the_128_bit_counter_carries_within_a_draw_and_when_the_state_moves_on():
    g = tf.random.Generator.from_state([-1, 4, 9], "philox")
    same(g.normal([12]), "gen.carry.normal")
    same(g.state, "gen.carry.state")
    g = tf.random.Generator.from_state([-512, 4, 9], "philox")
    same(g.uniform([2]), "gen.carry_state.uniform")
    same(g.state, "gen.carry_state.state")
    same(g.normal([3]), "gen.carry_state.normal")
    traced = tf.random.Generator.from_state([-512, 4, 9], "philox")
    draw = tf.function(lambda: traced.uniform([2]))
    same(draw(), "gen.carry_state.uniform")
    same(traced.state, "gen.carry_state.state")


def test_a_non_deterministic_generator_has_tensorflows_state_layout():
    a, b = tf.random.Generator.from_non_deterministic_state(), tf.random.Generator.from_non_deterministic_state()
    assert a.state.dtype == tf.int64 and a.state.shape == (3,) and a.algorithm == 1
    assert a.state.numpy().tolist() != b.state.numpy().tolist()


def test_what_tapeflow_does_not_draw_is_an_error_not_another_stream():
    with pytest.raises(ValueError, match="not supported.*Philox"):
        tf.random.stateless_normal([2], seed=[1, 2], alg="threefry")
    with pytest.raises(ValueError, match="not supported.*Philox"):
        tf.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(ValueError, match="3 integers"):
        tf.random.Generator.from_state([1, 2], "philox")
    with pytest.raises(tf.errors.InvalidArgumentError, match="two integers"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="both minval and maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], maxval=4, minval=None, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="int8 are not supported"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=0, maxval=4, dtype=tf.int8)


def stateful_session():
    yield "uniform_a", tf.random.uniform([6])
    yield "uniform_b", tf.random.uniform([6])
    yield "uniform_s5_a", tf.random.uniform([6], seed=5)
    yield "uniform_s5_b", tf.random.uniform([6], seed=5)
    yield "normal_s5_a", tf.random.normal([5], seed=5)
    yield "normal", tf.random.normal([3], mean=1.0, stddev=2.0)
    yield "uniform_s5_c", tf.random.uniform([3], minval=-3.0, maxval=5.5, seed=5)
    yield "normal_s5_b", tf.random.normal([5], seed=5)
    yield "normal64_s5", tf.random.normal([4], seed=5, dtype=tf.float64)
    yield "truncated_s3_a", tf.random.truncated_normal([7], seed=3)
    yield "truncated_s3_b", tf.random.truncated_normal([7], seed=3)
    yield "int_s4_a", tf.random.uniform([5], minval=2, maxval=9, dtype=tf.int32, seed=4)
    yield "int_s4_b", tf.random.uniform([5], minval=2, maxval=9, dtype=tf.int32, seed=4)
    yield "int64", tf.random.uniform([5], minval=-7, maxval=2 ** 40, dtype=tf.int64)


def test_stateful_ops_after_set_seed_draw_tensorflows_eager_streams():
    try:
        tf.random.set_seed(None)
        same(tf.random.uniform([4], seed=7), "stateful.no_global.uniform_s7")
        tf.random.set_seed(1)
        for name, value in stateful_session():
            same(value, "stateful.g1." + name)
        tf.random.set_seed(1)
        same(tf.random.uniform([6], seed=5), "stateful.g1_again.uniform_s5")
        tf.random.set_seed(0)
        same(tf.random.uniform([4], seed=0), "stateful.g0.uniform_s0")
        same(tf.random.uniform([4]), "stateful.g0.uniform")
    finally:
        tf.random.set_seed(None)

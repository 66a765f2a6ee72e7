"""tf.random.Generator: state in a Variable, draws as ops (eager and traced alike)."""
import numpy as np
import pytest

import tapeflow as tf


def test_a_seed_gives_the_same_sequence_and_draws_advance():
    a, b = tf.random.Generator.from_seed(42), tf.random.Generator.from_seed(42)
    first, second = a.normal((3, 2)), a.normal((3, 2))
    np.testing.assert_array_equal(first.numpy(), b.normal((3, 2)).numpy())
    assert not np.array_equal(first.numpy(), second.numpy())
    a.reset_from_seed(42)
    np.testing.assert_array_equal(a.normal((3, 2)).numpy(), first.numpy())
    # TensorFlow's layout: (counter low, counter high, key), the counter moved on by 256 per value drawn
    assert a.state.dtype == tf.int64 and a.state.numpy().tolist() == [42 + 256 * 6, 0, 0]


def test_distributions_and_ranges():
    g = tf.random.Generator.from_seed(0)
    x = g.normal((20000,), mean=2.0, stddev=3.0).numpy()
    assert abs(x.mean() - 2.0) < 0.1 and abs(x.std() - 3.0) < 0.1
    u = g.uniform((20000,), minval=-1.0, maxval=3.0).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05
    k = g.uniform((1000,), minval=5, maxval=9, dtype=tf.int32).numpy()
    assert k.dtype == np.int32 and set(k.tolist()) == {5, 6, 7, 8}
    t = g.truncated_normal((5000,)).numpy()
    assert np.abs(t).max() <= 2.0
    with pytest.raises(ValueError, match="Must specify maxval"):
        g.uniform((2,), dtype=tf.int64)


def test_a_traced_function_draws_new_numbers_at_every_call_as_eager_code_does():
    eager, traced = tf.random.Generator.from_seed(7), tf.random.Generator.from_seed(7)
    draw = tf.function(lambda: traced.uniform((4,)))
    for _ in range(3):
        np.testing.assert_array_equal(draw().numpy(), eager.uniform((4,)).numpy())
    assert traced.state.numpy().tolist() == eager.state.numpy().tolist() == [7 + 3 * 4 * 256, 0, 0]


def test_split_gives_independent_reproducible_generators():
    parts = tf.random.Generator.from_seed(1).split(2)
    again = tf.random.Generator.from_seed(1).split(2)
    x, y = parts[0].normal((8,)).numpy(), parts[1].normal((8,)).numpy()
    assert not np.array_equal(x, y)
    np.testing.assert_array_equal(x, again[0].normal((8,)).numpy())
    assert isinstance(tf.random.get_global_generator(), tf.random.Generator)


def test_a_checkpointed_generator_resumes_its_sequence(tmp_path):
    g = tf.random.Generator.from_seed(3)
    g.normal((2,))
    path = tf.train.Checkpoint(gen=g).save(str(tmp_path / "ckpt"))
    expected = g.normal((5,)).numpy()
    other = tf.random.Generator.from_seed(99)
    tf.train.Checkpoint(gen=other).restore(path).assert_consumed()
    np.testing.assert_array_equal(other.normal((5,)).numpy(), expected)

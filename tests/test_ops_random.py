"""Random ops: distributions, dtypes, seeding, gradients through mean/stddev, and tf.function replays."""
import numpy as np
import pytest

import tapeflow as tf


def test_distributions_and_dtypes():
    tf.random.set_seed(0)
    n = tf.random.normal([20000], mean=2.0, stddev=3.0)
    assert n.dtype == tf.float32 and n.shape == (20000,)
    assert abs(float(np.mean(n.numpy())) - 2.0) < 0.1 and abs(float(np.std(n.numpy())) - 3.0) < 0.1
    u = tf.random.uniform([20000], minval=-1.0, maxval=3.0, dtype=tf.float64)
    assert u.dtype == tf.float64
    assert u.numpy().min() >= -1.0 and u.numpy().max() < 3.0 and abs(u.numpy().mean() - 1.0) < 0.05
    t = tf.random.truncated_normal([20000], stddev=0.5)
    assert np.abs(t.numpy()).max() <= 1.0
    i = tf.random.uniform([1000], minval=3, maxval=7, dtype=tf.int32)
    assert i.dtype == tf.int32 and set(np.unique(i.numpy())) == {3, 4, 5, 6}
    with pytest.raises(ValueError, match="maxval must be specified"):
        tf.random.uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid dtype tf.int32"):
        tf.random.normal([2], dtype=tf.int32)


def test_set_seed_and_op_seeds_are_reproducible():
    tf.random.set_seed(42)
    a1, b1 = tf.random.normal([3]), tf.random.uniform([2], seed=7)
    b2 = tf.random.uniform([2], seed=7)
    tf.random.set_seed(42)
    a2, b3 = tf.random.normal([3]), tf.random.uniform([2], seed=7)
    np.testing.assert_array_equal(a1.numpy(), a2.numpy())
    np.testing.assert_array_equal(b1.numpy(), b3.numpy())
    assert not np.array_equal(b1.numpy(), b2.numpy())   # the op-seed stream advances


def test_shuffle_and_categorical():
    tf.random.set_seed(1)
    s = tf.random.shuffle(tf.range(10))
    assert sorted(s.numpy().tolist()) == list(range(10))
    logits = tf.math.log([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    c = tf.random.categorical(logits, 50)
    assert c.shape == (2, 50) and c.dtype == tf.int64
    assert 0 not in c.numpy()[0] and set(c.numpy()[1]) == {0}


def test_gradients_flow_through_mean_and_stddev_tensors():
    mean, std = tf.constant([1.0, -1.0]), tf.constant(2.0)
    tf.random.set_seed(3)
    with tf.GradientTape() as tape:
        tape.watch([mean, std])
        y = tf.random.normal([2], mean=mean, stddev=std)
    g_mean, g_std = tape.gradient(y, [mean, std])
    np.testing.assert_array_equal(g_mean.numpy(), [1.0, 1.0])
    z = (y.numpy() - mean.numpy()) / 2.0
    np.testing.assert_allclose(g_std.numpy(), z.sum(), rtol=1e-6)
    lo = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(lo)
        u = tf.random.uniform([3], minval=lo, maxval=3.0)
    np.testing.assert_allclose(tape.gradient(u, lo).numpy(), np.sum(1 - (u.numpy() - 1.0) / 2.0), rtol=1e-6)


def test_random_ops_are_redrawn_by_traced_functions():
    @tf.function
    def draw():
        return tf.random.normal([4]), tf.nn.dropout(tf.ones([50]), rate=0.5)

    n1, d1 = draw()
    n2, d2 = draw()
    assert not np.array_equal(n1.numpy(), n2.numpy())
    assert not np.array_equal(d1.numpy(), d2.numpy())
    assert set(np.unique(d1.numpy())) <= {0.0, 2.0}

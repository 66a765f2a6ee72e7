"""Non-strict execution (TensorFlow's 'Introduction to graphs' guide): a tf.function runs only the ops its
outputs need, plus stateful ones; an unused failing op does not raise, as in TensorFlow 2.21."""
import numpy as np
import pytest

import tapeflow as tf


def test_an_unused_out_of_range_gather_is_pruned():
    @tf.function
    def unused_return_graph(x):
        tf.gather(x, [1])
        return x

    with pytest.raises(tf.errors.InvalidArgumentError, match="indices"):
        tf.gather(tf.constant([0.0]), [1])                  # eagerly it raises
    assert unused_return_graph(tf.constant([0.0])).numpy().tolist() == [0.0]
    x = tf.Variable([0.0])
    with tf.GradientTape() as tape:                           # the replay that records prunes it too
        y = unused_return_graph(x.read_value() * 2.0)
    assert tape.gradient(y, x).numpy().tolist() == [2.0]


def test_a_used_out_of_range_gather_still_raises_at_the_call():
    @tf.function
    def used(x, i):
        return tf.gather(x, i)

    assert used(tf.constant([1.0, 2.0]), tf.constant([1])).numpy().tolist() == [2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="indices"):
        used(tf.constant([1.0, 2.0]), tf.constant([2]))


def test_an_unused_gather_of_a_constant_is_neither_folded_nor_run():
    table = tf.constant([1.0, 2.0])

    @tf.function
    def f(x):
        tf.gather(table, [5])
        return x + tf.gather(table, [1])

    np.testing.assert_array_equal(f(tf.constant([1.0])).numpy(), [3.0])   # the used gather: its real value


def test_stateful_ops_whose_results_are_unused_still_run():
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        v.assign_add(1.0)
        return x

    f(tf.constant(1.0))
    f(tf.constant(1.0))
    assert float(v.numpy()) == 2.0

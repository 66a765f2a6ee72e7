"""What Keras steps need from tf.function's tracer: shape values as Python ints where the graph is
specialised to its shapes, random streams untouched by tracing, Variable.numpy refused in a trace."""
import numpy as np
import pytest

import tapeflow as tf


def test_a_shape_value_is_a_python_int_in_a_graph_specialised_to_its_shapes():
    @tf.function
    def ones_per_row(x):
        return tf.ones((tf.shape(x)[0] * 2, 1))      # int() of tf.shape(x)[0] * 2

    assert ones_per_row(tf.zeros((3, 4))).shape == (6, 1)
    assert ones_per_row(tf.zeros((5, 4))).shape == (10, 1)     # a new shape: a new trace, not the old value


def test_a_value_dependent_scalar_is_not_a_python_int():
    @tf.function
    def from_values(x):
        return tf.ones((tf.cast(tf.reduce_sum(x), tf.int32), 1))

    @tf.function
    def from_a_value_dependent_shape(x):
        return tf.ones((tf.shape(tf.boolean_mask(x, x > 0))[0], 1))

    for f in (from_values, from_a_value_dependent_shape):
        with pytest.raises(TypeError, match="Converting it to a Python int"):
            f(tf.constant([1.0, 2.0, -1.0]))


def test_a_shape_value_is_not_an_int_where_the_graph_serves_other_shapes():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return tf.ones((tf.shape(x)[0], 1))

    with pytest.raises(TypeError, match="Converting it to a Python int"):
        f(tf.zeros(3))


def test_tracing_draws_no_random_numbers():
    tf.random.set_seed(5)
    eager = [tf.random.uniform([3]).numpy(), tf.nn.dropout(tf.ones([8]), 0.5).numpy()]
    tf.random.set_seed(5)
    f = tf.function(lambda: [tf.random.uniform([3]), tf.nn.dropout(tf.ones([8]), 0.5)])
    f.get_concrete_function()                         # a trace: runs every op's forward on placeholders
    f.get_concrete_function()
    traced = [t.numpy() for t in f()]
    for a, b in zip(eager, traced):
        np.testing.assert_array_equal(a, b)


def test_variable_numpy_inside_a_trace_raises_as_in_tensorflow():
    v = tf.Variable(3.0)
    f = tf.function(lambda: v.numpy())
    with pytest.raises(NotImplementedError, match="only available when eager execution is enabled"):
        f()
    assert v.numpy() == 3.0


def test_boolean_mask_in_a_trace_takes_each_calls_mask():
    f = tf.function(lambda x: tf.boolean_mask(x, x > 0))
    np.testing.assert_array_equal(f(tf.constant([1.0, -2.0, 3.0])).numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(f(tf.constant([-1.0, 2.0, -3.0])).numpy(), [2.0])
    assert f.experimental_get_tracing_count() == 1


def test_a_variable_printed_while_tracing_shows_no_value(capsys):
    v = tf.Variable(3.0, name="pv")

    @tf.function
    def f():
        print(v)
        return v + 1.0
    f()
    assert capsys.readouterr().out.strip() == "<tf.Variable 'pv:0' shape=() dtype=float32>"

"""tf.function(reduce_retracing=True): after a retrace with a different shape, the dimensions that
differed become unknown and that trace serves later calls (experimental_relax_shapes: the old name)."""
import numpy as np
import pytest

import tapeflow as tf


@pytest.mark.parametrize("option", ["reduce_retracing", "experimental_relax_shapes"])
def test_a_second_shape_traces_once_with_unknown_dimensions(option):
    seen = []

    @tf.function(**{option: True})
    def f(x):
        seen.append(tuple(x.shape))
        return tf.reduce_sum(x * 2.0, axis=0)

    for n in (2, 3, 4, 5, 6):
        np.testing.assert_array_equal(f(tf.ones((n, 3))).numpy(), np.full(3, 2.0 * n))
    assert f.experimental_get_tracing_count() == 2
    assert seen[0] == (2, 3) and set(seen[1:]) == {(None, 3)}
    f(tf.ones((4, 7)))                                 # the other dimension differs too: (None, None)
    assert f.experimental_get_tracing_count() == 3 and seen[-1] == (None, None)
    np.testing.assert_array_equal(f(tf.ones((9, 8))).numpy(), np.full(8, 18.0))
    assert f.experimental_get_tracing_count() == 3
    specs = [c.structured_input_signature[0].shape.as_list() for c in f.traced_concrete_functions()]
    assert [2, 3] in specs and [None, None] in specs


def test_without_the_option_every_shape_traces():
    @tf.function
    def f(x):
        return x + 1.0

    for n in (2, 3, 4):
        f(tf.ones((n,)))
    assert f.experimental_get_tracing_count() == 3


def test_other_ranks_dtypes_and_python_values_still_retrace():
    @tf.function(reduce_retracing=True)
    def f(x, k):
        return x * k

    f(tf.ones((2,)), 2)
    f(tf.ones((3,)), 2)
    assert f.experimental_get_tracing_count() == 2
    f(tf.ones((2, 2)), 2)                           # another rank
    f(tf.ones((3,), tf.float64), 2)                 # another dtype
    f(tf.ones((4,)), 3)                             # another Python value
    assert f.experimental_get_tracing_count() == 5
    np.testing.assert_array_equal(f(tf.ones((7,)), 3).numpy(), np.full(7, 3.0))


def test_a_shape_dependent_graph_stays_exact():
    """Python code that reads a static dimension sees None in the relaxed trace, as in TensorFlow, and a
    graph whose ops depend on the shape is specialised per shape rather than replayed wrongly."""
    @tf.function(reduce_retracing=True)
    def tail(x):
        return tf.reshape(x, [-1])[x.shape[0] - 1:] if x.shape[0] is not None else x[-1:]

    for n in (2, 3, 5, 3):
        np.testing.assert_array_equal(tail(tf.range(n, dtype=tf.float32)).numpy(), [n - 1.0])

    @tf.function(reduce_retracing=True)
    def grad_norm(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x ** 2)
        return tape.gradient(y, x)

    for n in (1, 2, 4, 2, 4):     # the gradient's graph holds shapes in its attributes: one trace per shape
        x = tf.constant(np.arange(n, dtype=np.float32))
        np.testing.assert_array_equal(grad_norm(x).numpy(), 2 * np.arange(n, dtype=np.float32))
    assert grad_norm.experimental_get_tracing_count() <= 3


def test_the_guides_example_prints_each_trace_once(capsys):
    @tf.function(reduce_retracing=True)
    def g(x):
        print("Tracing with", x.shape)
        return x

    for n in (3, 5, 7):
        np.testing.assert_array_equal(g(tf.constant(list(range(1, n + 1)))).numpy(), np.arange(1, n + 1))
    assert capsys.readouterr().out.splitlines() == ["Tracing with (3,)", "Tracing with (None,)"]

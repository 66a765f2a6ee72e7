"""experimental_get_tracing_count with an input_signature, as the tf.function guide describes it: a signature is
traced once, and the count (and the Python side effects of tracing, such as print) follow the traces the user
causes. tapeflow's own extra traces of a signature with unknown dimensions (the probe that checks whether the graph
is shape-polymorphic, and the graphs specialised to a call's shapes when it is not) are not counted."""
import numpy as np

import tapeflow as tf


def test_a_shape_polymorphic_signature_counts_one_trace_and_prints_once(capsys):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def double(x):
        print("tracing double")
        return x * 2.0

    for rows in (1, 3, 5):
        np.testing.assert_array_equal(double(tf.ones([rows, 2])).numpy(), np.full((rows, 2), 2.0, np.float32))
    assert double.experimental_get_tracing_count() == 1
    assert capsys.readouterr().out == "tracing double\n"


def test_a_shape_specialised_signature_counts_one_trace_whatever_shapes_it_is_called_with(capsys):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def plus_ones(x):
        print("tracing plus_ones")
        return x + tf.ones(tf.shape(x))      # tf.ones takes the traced shape's value: specialised per shape

    for n in (2, 3, 3, 4, 5, 6, 7):
        values = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(plus_ones(tf.constant(values)).numpy(), values + 1)
    assert plus_ones.experimental_get_tracing_count() == 1
    captured = capsys.readouterr()
    assert captured.out == "tracing plus_ones\n"
    assert "retracing" not in captured.err      # no retracing warning for traces the user did not cause
    assert len(plus_ones.traced_concrete_functions()) > 1   # the graphs really are specialised


def test_get_concrete_function_and_calls_share_the_signature_trace():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def total(x):
        return tf.reduce_sum(x)

    concrete = total.get_concrete_function()
    assert total.experimental_get_tracing_count() == 1
    assert float(concrete(tf.constant([1.0, 2.0]))) == 3.0
    assert float(total(tf.constant([1.0, 2.0, 4.0]))) == 7.0
    assert total.experimental_get_tracing_count() == 1


def test_without_a_signature_each_new_shape_is_a_counted_trace():
    @tf.function
    def plus_ones(x):
        return x + tf.ones(tf.shape(x))

    for n in (2, 3, 3):
        plus_ones(tf.zeros([n]))
    assert plus_ones.experimental_get_tracing_count() == 2

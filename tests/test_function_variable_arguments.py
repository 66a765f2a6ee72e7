"""tf.function with tf.Variable arguments and concrete functions called by keyword, checked against what
TensorFlow 2.21 does for the same code."""
import numpy as np
import pytest

import tapeflow as tf


def test_variables_of_one_spec_share_a_trace_and_each_call_uses_its_own_variable():
    @tf.function
    def plus_one(v):
        return v + 1

    a, b = tf.Variable(1.0), tf.Variable(2.0)
    assert float(plus_one(a)) == 2.0
    assert float(plus_one(b)) == 3.0
    assert plus_one.experimental_get_tracing_count() == 1
    plus_one(tf.Variable([1.0, 2.0]))                     # another shape
    plus_one(tf.Variable(1, dtype=tf.int32))             # another dtype
    plus_one(tf.constant(1.0))                           # a tensor is not a variable
    plus_one(tf.Variable(1.0, trainable=False))          # nor is a non-trainable variable the same spec
    assert plus_one.experimental_get_tracing_count() == 5


def test_assignments_go_to_the_variable_passed_in():
    @tf.function
    def bump(v):
        v.assign_add(1.0)
        return v.read_value()

    a, b = tf.Variable(1.0), tf.Variable(2.0)
    assert float(bump(a)) == 2.0 and float(bump(b)) == 3.0
    assert (float(a.numpy()), float(b.numpy())) == (2.0, 3.0)
    assert bump.experimental_get_tracing_count() == 1


def test_aliased_variable_arguments_are_a_different_trace():
    @tf.function
    def add(v, w):
        w.assign_add(1.0)
        return v + w

    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    assert float(add(a, b)) == 4.0
    assert float(add(b, c)) == 7.0          # b = 3 now, c becomes 4
    assert add.experimental_get_tracing_count() == 1
    assert float(add(a, a)) == 4.0          # v and w are one variable: a becomes 2, read twice
    assert add.experimental_get_tracing_count() == 2


def test_gradients_flow_to_the_variable_of_each_call():
    @tf.function
    def square(v):
        return v * v

    x, y = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(square(x)) + 2.0 * tf.reduce_sum(square(y))
    gx, gy = tape.gradient(loss, [x, y])
    np.testing.assert_allclose(gx.numpy(), 2.0 * x.numpy())
    np.testing.assert_allclose(gy.numpy(), 4.0 * y.numpy())
    assert square.experimental_get_tracing_count() == 1


def test_a_concrete_function_takes_a_variable_of_the_traced_spec():
    @tf.function
    def double(v):
        return v * 2.0

    concrete = double.get_concrete_function(tf.Variable(1.0))
    assert float(concrete(tf.Variable(4.0))) == 8.0
    assert float(concrete(v=tf.Variable(5.0))) == 10.0


def test_concrete_functions_accept_keyword_arguments():
    @tf.function
    def double(a):
        return a + a

    concrete = double.get_concrete_function(a=tf.TensorSpec([], tf.float32))
    assert float(concrete(a=tf.constant(2.0))) == 4.0
    assert float(concrete(tf.constant(3.0))) == 6.0

    @tf.function
    def affine(x, y=2.0, *, z):
        return x * y + z

    concrete = affine.get_concrete_function(tf.TensorSpec([], tf.float32), z=tf.TensorSpec([], tf.float32))
    assert float(concrete(tf.constant(1.0), z=tf.constant(3.0))) == 5.0
    assert float(concrete(x=tf.constant(1.0), z=tf.constant(4.0))) == 6.0
    with pytest.raises(TypeError, match="z"):
        concrete(tf.constant(1.0))
    with pytest.raises(TypeError, match="unexpected"):
        concrete(tf.constant(1.0), z=tf.constant(1.0), w=tf.constant(1.0))


def test_python_values_traced_into_a_concrete_function_are_bound():
    # The tf.function guide's `square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)`
    @tf.function
    def power(a, b):
        return a ** b

    square = power.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert float(square(tf.constant(10.0))) == 100.0
    assert float(square(a=tf.constant(3.0), b=2)) == 9.0
    with pytest.raises(TypeError):
        square(tf.constant(3.0), b=3)       # TensorFlow: "Can not cast 3 to Literal[2]"
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert float(tape.gradient(y, x)) == 6.0
    assert square.structured_outputs.dtype == tf.float32

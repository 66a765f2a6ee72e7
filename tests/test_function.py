"""tf.function: tracing, retracing, replay under tapes, variables, custom gradients."""
import numpy as np
import pytest

import tapeflow as tf


def test_traced_function_matches_eager_and_differentiates():
    v = tf.Variable(2.0)

    def body(x):
        return tf.reduce_sum(tf.tanh(x) * x * v)

    f = tf.function(body)
    x = tf.constant([0.5, -1.0, 2.0])
    assert float(f(x)) == pytest.approx(float(body(x)), rel=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    gx, gv = tape.gradient(y, [x, v])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y2 = body(x)
    ex, ev = tape.gradient(y2, [x, v])
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=1e-6)
    assert float(gv) == pytest.approx(float(ev))


def test_retracing_rules():
    calls = []

    @tf.function
    def f(x, scale):
        calls.append(1)
        return x * scale

    f(tf.constant([1.0, 2.0]), 2.0)
    f(tf.constant([3.0, 4.0]), 2.0)
    assert f.experimental_get_tracing_count() == 1 and len(calls) == 1
    f(tf.constant([1.0, 2.0, 3.0]), 2.0)  # new shape
    f(tf.constant([1.0, 2.0]), 3.0)       # new Python value
    f(tf.constant([1, 2]), 3)             # new dtype
    assert f.experimental_get_tracing_count() == 4
    assert f(tf.constant([1.0, 2.0]), 3.0).numpy().tolist() == [3.0, 6.0]


def test_input_signature_with_unknown_dimensions_traces_once():
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def row_norms(x):
        return tf.sqrt(tf.reduce_sum(x * x, axis=1))

    assert row_norms(tf.ones([2, 3])).numpy().tolist() == pytest.approx([3 ** 0.5] * 2)
    assert row_norms(tf.ones([5, 3])).shape == (5,)
    assert row_norms.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="does not match TensorSpec"):
        row_norms(tf.ones([2, 4]))
    with pytest.raises(TypeError, match="does not match TensorSpec"):
        row_norms(tf.ones([2, 3], tf.float64))


def test_shape_specialised_graphs_are_retraced_for_new_shapes():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def with_count(x):
        return x + tf.cast(tf.shape(x)[0], tf.float32)

    assert with_count(tf.zeros([2])).numpy().tolist() == [2.0, 2.0]
    assert with_count(tf.zeros([4])).numpy().tolist() == [4.0] * 4


def test_python_control_flow_is_unrolled_and_tensor_bools_are_refused():
    @tf.function
    def power(x, n):
        y = x
        for _ in range(n - 1):
            y = y * x
        return y

    assert float(power(tf.constant(2.0), 5)) == 32.0

    @tf.function(autograph=False)    # AutoGraph would convert the if statement (tests/test_autograph.py)
    def branch(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="Using it as a Python bool is not allowed for a symbolic tf.Tensor"):
        branch(tf.constant(1.0))


def test_variable_assignment_happens_at_call_time_not_trace_time():
    v = tf.Variable(0.0)

    @tf.function
    def increment(x):
        v.assign_add(x)
        return v * 10.0

    assert float(increment(tf.constant(1.0))) == 10.0
    assert float(increment(tf.constant(2.0))) == 30.0
    assert float(v) == 3.0


def test_gradient_tape_inside_a_traced_function():
    w = tf.Variable([1.0, -2.0])

    @tf.function
    def grad_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((w * x) ** 2)
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
        return loss

    x = tf.constant([1.0, 1.0])
    first = float(grad_step(x))
    assert first == 5.0 and w.numpy().tolist() == pytest.approx([0.8, -1.6])
    grad_step(x)
    assert w.numpy().tolist() == pytest.approx([0.64, -1.28])
    assert grad_step.experimental_get_tracing_count() == 1


def test_methods_and_modules():
    class Scaler(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(3.0)

        @tf.function
        def __call__(self, x):
            return x * self.scale

    a, b = Scaler(), Scaler()
    b.scale.assign(5.0)
    assert float(a(tf.constant(2.0))) == 6.0 and float(b(tf.constant(2.0))) == 10.0


def test_custom_gradient_inside_a_traced_function():
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    @tf.function(input_signature=[tf.TensorSpec(None)])
    def call_custom_grad(x):
        return clip_gradients(x)

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = call_custom_grad(v * v)
    assert float(t.gradient(output, v)) == 2.0
    # A vector upstream of norm 2*sqrt(2) is clipped to norm 0.5 before reaching v.
    x = tf.constant([3.0, 4.0])
    with tf.GradientTape() as t:
        t.watch(x)
        out = call_custom_grad(x) * 1.0
    np.testing.assert_allclose(t.gradient(out, x).numpy(), [0.5 / np.sqrt(2)] * 2, rtol=1e-6)


def test_concrete_functions():
    @tf.function
    def f(x):
        return x * 2.0

    concrete = f.get_concrete_function(tf.TensorSpec([3], tf.float32))
    assert concrete(tf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]
    assert concrete.structured_input_signature == (tf.TensorSpec([3], tf.float32),)
    with pytest.raises(ValueError, match="not compatible"):
        concrete(tf.constant([1.0, 2.0]))


def test_nested_functions_are_inlined():
    @tf.function
    def inner(x):
        return x * x

    @tf.function
    def outer(x):
        return inner(x) + 1.0

    assert float(outer(tf.constant(3.0))) == 10.0
    assert inner.experimental_get_tracing_count() == 0


def test_a_concrete_function_called_with_a_tensor_of_another_dtype_raises_type_error():
    @tf.function
    def double(a):
        return a + a
    strings = double.get_concrete_function(tf.constant("a"))
    with pytest.raises(TypeError, match="argument 0 has dtype int32, expected string"):
        strings(tf.constant(1))
    assert strings(tf.constant("b")).numpy() == b"bb"

"""tf.custom_gradient (spec 2.2) and tf.autodiff.ForwardAccumulator (spec 3)."""
import numpy as np
import pytest

import tapeflow as tf


def test_log1pexp_is_stable_with_its_custom_gradient():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    assert log1pexp.__name__ == "log1pexp"
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert np.isinf(y.numpy()) and float(tape.gradient(y, x)) == 1.0


def test_decorator_with_parentheses_and_multiple_inputs_outputs():
    calls = []

    @tf.custom_gradient()
    def two(a, b):
        def grad(da, db):
            calls.append((float(da), float(db)))
            return da * 10.0, db * 100.0
        return (a * 1.0, b * 1.0), grad

    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        ya, yb = two(a, b)
    assert [float(g) if g is not None else None for g in tape.gradient(ya, [a, b])] == [10.0, 0.0]
    assert calls[-1] == (1.0, 0.0)  # the unused output's upstream is zero, not None
    assert [float(g) for g in tape.gradient([ya, yb], [a, b])] == [10.0, 100.0]
    assert calls[-1] == (1.0, 1.0)


def test_none_gradient_and_wrong_count():
    @tf.custom_gradient
    def first_only(a, b):
        return a * b, lambda dy: (dy, None)

    @tf.custom_gradient
    def wrong(a, b):
        return a * b, lambda dy: dy

    a, b = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = first_only(a, b)
        z = wrong(a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 1.0 and gb is None
    with pytest.raises(ValueError, match="custom_gradient function expected to return 2 gradients, but returned 1 instead."):
        tape.gradient(z, [a, b])


def test_variables_contract():
    weights = tf.Variable(tf.ones([2]), name="weights")

    @tf.custom_gradient
    def linear_poly(x):
        poly = weights[1] * x + weights[0]

        def grad_fn(dpoly, variables):
            return dpoly * weights[1], [tf.stack([tf.reduce_sum(dpoly), tf.reduce_sum(dpoly * x)])]
        return poly, grad_fn

    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        poly = linear_poly(x)
    assert poly.numpy().tolist() == [2.0, 3.0, 4.0]
    assert tape.gradient(poly, x).numpy().tolist() == [1.0, 1.0, 1.0]
    assert tape.gradient(poly, weights).numpy().tolist() == [3.0, 6.0]

    @tf.custom_gradient
    def no_kwarg(x):
        return weights[0] * x, lambda dy: dy

    with pytest.raises(TypeError, match="grad_fn must accept keyword argument 'variables', since function uses "
                                        "variables: \\[<tf.Variable 'weights:0' shape=\\(2,\\)"):
        no_kwarg(x)

    @tf.custom_gradient
    def bad_count(x):
        return weights[0] * x, lambda dy, variables=None: (dy, [])

    with tf.GradientTape() as tape:
        y = bad_count(x)
    with pytest.raises(ValueError, match="Must return gradient for each variable from @custom_gradient grad_fn."):
        tape.gradient(y, weights)


def test_grad_fn_without_variables_gets_the_default():
    seen = []

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            seen.append(variables)
            return dy * 3.0
        return x * 2.0, grad

    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(tape.gradient(y, x)) == 3.0 and seen == [None]


def test_keyword_tensors_are_constants():
    @tf.custom_gradient
    def bar(x, y):
        return x * y, lambda dy: dy * 1000.0

    x, y = tf.constant(2.0), tf.constant(5.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = bar(x, y=y)
    gx, gy = tape.gradient(z, [x, y])
    assert float(gx) == 1000.0 and gy is None


def test_higher_order_through_a_custom_gradient():
    @tf.custom_gradient
    def cube(x):
        return x ** 3, lambda dy: dy * 3.0 * x * x

    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        dy = t1.gradient(y, x)
    assert (float(dy), float(t2.gradient(dy, x))) == (12.0, 12.0)


def test_custom_gradient_on_a_variable_input():
    @tf.custom_gradient
    def scale(v):
        return v * 2.0, lambda dy: dy * 7.0

    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = scale(v)
    assert float(tape.gradient(y, v)) == 7.0


# ---------------------------------------------------------- forward mode ---
def test_jvp_of_a_cube():
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        y = x ** 3
    assert acc.jvp(y).numpy().tolist() == [3.0, 0.0]
    assert acc.jvp(x).numpy().tolist() == [1.0, 0.0]


def test_jvp_nests_unconnected_and_errors():
    x, w = tf.constant(2.0), tf.Variable(3.0)
    outside = x * 2.0
    with tf.autodiff.ForwardAccumulator(primals=[x, w], tangents=[tf.constant(1.0), tf.constant(0.5)]) as acc:
        y = x * w
        with pytest.raises(ValueError, match="Accumulator is already recording."):
            acc.__enter__()
    assert float(acc.jvp(y)) == pytest.approx(3.0 + 2.0 * 0.5)
    assert acc.jvp([outside, {'k': y}])[0] is None
    assert float(acc.jvp(outside, unconnected_gradients='zero')) == 0.0
    with pytest.raises(ValueError, match="same nested structure"):
        tf.autodiff.ForwardAccumulator([x, w], [tf.constant(1.0)])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor with dtype float64"):
        tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64))
    with pytest.raises(ValueError, match="was specified as a primal multiple times"):
        tf.autodiff.ForwardAccumulator([x, x], [1.0, 1.0])


def test_piecewise_constant_ops_have_no_jvp():
    x = tf.constant(1.5)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        s, f, r = tf.sign(x), tf.floor(x), tf.round(x)
    assert (acc.jvp(s), acc.jvp(f), acc.jvp(r)) == (None, None, None)


def test_nested_accumulators():
    p = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(p, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(p, tf.constant(1.0)) as inner:
            primal_out = p ** tf.constant(3.5)
    inner_jvp = inner.jvp(primal_out)
    assert float(inner_jvp) == pytest.approx(4.441705703735352, rel=1e-6)
    assert float(outer.jvp(inner_jvp)) == pytest.approx(10.094785690307617, rel=1e-6)
    assert inner.jvp(outer.jvp(primal_out)) is None


def test_tape_around_accumulator_differentiates_the_jvp():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            y = x ** 3
        jvp = acc.jvp(y)
    assert (float(jvp), float(tape.gradient(jvp, x))) == (12.0, 12.0)


def test_jvp_through_custom_gradient_uses_forward_ops():
    @tf.custom_gradient
    def f(x):
        return x * 2.0, lambda dy: dy * 100.0

    x = tf.constant(1.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = f(x)
    assert float(acc.jvp(y)) == 2.0


@pytest.mark.parametrize("method", ["forward_over_backward", "backward_over_backward", "output_gradients"])
def test_hessian_vector_products(method):
    w = tf.Variable([1.0, 2.0])
    v = tf.constant([1.0, 0.0])
    if method == "forward_over_backward":
        with tf.autodiff.ForwardAccumulator(w, v) as acc:
            with tf.GradientTape() as t:
                loss = tf.reduce_sum(w ** 3)
            g = t.gradient(loss, w)
        hvp = acc.jvp(g)
    else:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                loss = tf.reduce_sum(w ** 3)
            g = t1.gradient(loss, w)
            gv = tf.reduce_sum(g * v)
        hvp = t2.gradient(gv, w) if method == "backward_over_backward" else None
        if method == "output_gradients":
            with tf.GradientTape() as t2:
                with tf.GradientTape() as t1:
                    loss = tf.reduce_sum(w ** 3)
                g = t1.gradient(loss, w)
            hvp = t2.gradient(g, w, output_gradients=v)
    assert hvp.numpy().tolist() == [6.0, 0.0]


def test_forward_mode_matches_reverse_mode_on_a_network():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(4, 3)))
    w = tf.constant(rng.normal(size=(3, 5)))
    t = tf.constant(rng.normal(size=(3, 5)))
    with tf.autodiff.ForwardAccumulator(w, t) as acc:
        y = tf.reduce_sum(tf.nn.softmax(tf.tanh(x @ w)) ** 2)
    with tf.GradientTape() as tape:
        tape.watch(w)
        y2 = tf.reduce_sum(tf.nn.softmax(tf.tanh(x @ w)) ** 2)
    assert float(acc.jvp(y)) == pytest.approx(float(tf.reduce_sum(tape.gradient(y2, w) * t)), rel=1e-10)

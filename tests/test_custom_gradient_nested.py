"""A custom gradient's forward is recorded by enclosing tapes (issue 10.1).

TensorFlow runs a ``@tf.custom_gradient`` body with the tapes recording and then
records one op from the inputs to the outputs whose gradient is ``grad_fn``. A
``grad_fn`` built from tensors computed in the body is therefore itself
differentiable by an outer tape.
"""
import numpy as np

import tapeflow as tf
from gradcheck import check_gradients


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _first_and_second(x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = log1pexp(x)
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def test_the_guide_example_prints_tensorflows_numbers():
    g, gg = _first_and_second(tf.constant(2.0))
    # TensorFlow 2.21 prints 0.8807971 0.104993574 (float32; the last digit is Eigen's rounding).
    np.testing.assert_allclose(g.numpy(), 0.8807971, rtol=1e-6)
    np.testing.assert_allclose(gg.numpy(), 0.104993574, rtol=1e-6)
    s = _sigmoid(2.0)
    np.testing.assert_allclose(gg.numpy(), s * (1 - s), rtol=1e-6)


def test_traced_function_differentiated_twice():
    @tf.function
    def both(x):
        return _first_and_second(x)

    x = tf.constant([-1.5, 0.0, 2.0], tf.float64)
    g, gg = both(x)
    s = _sigmoid(x.numpy())
    np.testing.assert_allclose(g.numpy(), s, rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), s * (1 - s), rtol=1e-12)


def test_custom_gradient_inside_a_function_differentiated_by_eager_tapes():
    f = tf.function(lambda x: log1pexp(x))
    x = tf.constant([0.5, 3.0], tf.float64)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    s = _sigmoid(x.numpy())
    np.testing.assert_allclose(t2.gradient(g, x).numpy(), s * (1 - s), rtol=1e-12)


def test_outer_tape_does_not_see_through_the_custom_gradient():
    """The custom gradient replaces the body's derivative for every tape, not only the inner one."""
    @tf.custom_gradient
    def doubled_gradient(x):
        return x * x, lambda dy: dy * 4.0 * x     # the true derivative is 2x

    x = tf.constant(3.0, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = doubled_gradient(x)
        g = inner.gradient(y, x)
    assert float(g) == 12.0
    assert float(outer.gradient(g, x)) == 4.0


def test_variables_read_in_the_body_still_get_their_custom_gradient():
    v = tf.Variable(2.0, dtype=tf.float64)

    @tf.custom_gradient
    def scaled(x):
        y = v * x

        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return y, grad

    x = tf.constant(3.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gv = tape.gradient(y, [x, v])
    assert float(gx) == 2.0 and float(gv) == 30.0


# -- input-gradient regularisation of a model with a custom-gradient activation ------------
def _penalised_loss(activation, w1, b1, w2, x, y, weight=0.3):
    """mse + weight * ||d mse / d x||^2 of a two-layer network."""
    with tf.GradientTape() as inner:
        inner.watch(x)
        hidden = activation(tf.matmul(x, w1) + b1)
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y))
    dx = inner.gradient(loss, x)
    return loss + weight * tf.reduce_sum(tf.square(dx))


def _problem():
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s) for s in [(3, 5), (5,), (5, 2), (4, 3), (4, 2)]]


def test_input_gradient_penalty_through_a_custom_gradient_activation():
    w1, b1, w2, x, y = _problem()
    # The custom gradient is the exact derivative of softplus, so the penalty's gradient equals the
    # plain composition's; both are also checked against finite differences.
    def custom(w1, b1, w2):
        return _penalised_loss(log1pexp, w1, b1, w2, tf.constant(x), tf.constant(y))

    def plain(w1, b1, w2):
        return _penalised_loss(tf.math.softplus, w1, b1, w2, tf.constant(x), tf.constant(y))

    params = [tf.constant(a) for a in (w1, b1, w2)]
    with tf.GradientTape() as tape:
        tape.watch(params)
        loss = custom(*params)
    with tf.GradientTape() as tape2:
        tape2.watch(params)
        reference = plain(*params)
    np.testing.assert_allclose(loss.numpy(), reference.numpy(), rtol=1e-12)
    for g, r in zip(tape.gradient(loss, params), tape2.gradient(reference, params)):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-10, atol=1e-12)
    check_gradients(custom, w1, b1, w2)


def test_input_gradient_regularized_keras_model_with_a_custom_gradient_activation():
    layer_activation = tf.keras.layers.Activation(log1pexp)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4), layer_activation,
                                 tf.keras.layers.Dense(1)])
    x = tf.constant(np.random.default_rng(1).standard_normal((6, 3)).astype("float32"))
    y = tf.constant(np.random.default_rng(2).standard_normal((6, 1)).astype("float32"))

    def penalised():
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_mean(tf.square(model(x) - y))
        return loss + tf.reduce_sum(tf.square(inner.gradient(loss, x)))

    with tf.GradientTape() as tape:
        total = penalised()
    grads = tape.gradient(total, model.trainable_variables)
    assert all(g is not None for g in grads)
    # Central differences on the first kernel (float32: a loose but discriminating tolerance).
    kernel = model.trainable_variables[0]
    base = kernel.numpy()
    eps = 1e-2
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        for sign in (1, -1):
            bumped = base.copy()
            bumped[idx] += sign * eps
            kernel.assign(bumped)
            numeric[idx] += sign * float(penalised()) / (2 * eps)
    kernel.assign(base)
    np.testing.assert_allclose(grads[0].numpy(), numeric, rtol=2e-2, atol=2e-3)

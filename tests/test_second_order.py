"""tapeflow.autodiff second-order helpers: Hessian, hvp, Newton steps, input-gradient norm."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import autodiff


def _mlp(seed=0):
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(7, 5)))
    w1 = tf.Variable(rng.normal(size=(5, 4)) * 0.5)
    b1 = tf.Variable(rng.normal(size=(4,)) * 0.1)
    w2 = tf.Variable(rng.normal(size=(4, 3)) * 0.5)

    def loss():
        return tf.reduce_mean(tf.tanh(x @ w1 + b1) @ w2 ** 2)
    return loss, [w1, b1, w2]


def _grad_vector(f, variables):
    with tf.GradientTape() as tape:
        y = f()
    return autodiff.flatten(tape.gradient(y, variables)).numpy()


def test_hessian_is_symmetric_and_matches_finite_differences_of_the_gradient():
    f, variables = _mlp()
    h = autodiff.hessian(f, variables).numpy()
    n = 5 * 4 + 4 + 4 * 3
    assert h.shape == (n, n)
    np.testing.assert_allclose(h, h.T, atol=1e-10)
    theta = autodiff.flatten(variables).numpy()
    eps = 1e-6
    for k in (0, 13, 21, 22, 30):
        columns = []
        for sign in (1, -1):
            shifted = theta.copy()
            shifted[k] += sign * eps
            for var, value in zip(variables, autodiff.unflatten(tf.constant(shifted), variables)):
                var.assign(value)
            columns.append(_grad_vector(f, variables))
        for var, value in zip(variables, autodiff.unflatten(tf.constant(theta), variables)):
            var.assign(value)
        np.testing.assert_allclose(h[:, k], (columns[0] - columns[1]) / (2 * eps), atol=1e-6)


def test_flatten_and_unflatten_round_trip():
    a, b = tf.Variable(tf.ones([2, 3])), tf.Variable(tf.zeros([4]))
    v = autodiff.flatten([a, b])
    assert v.shape == (10,)
    back = autodiff.unflatten(tf.range(10.0), [a, b])
    assert back[0].numpy().tolist() == [[0, 1, 2], [3, 4, 5]] and back[1].numpy().tolist() == [6, 7, 8, 9]
    with pytest.raises(ValueError, match="the vector has 9 elements but the variables have 10"):
        autodiff.unflatten(tf.range(9.0), [a, b])


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_hvp_equals_hessian_times_vector(method):
    f, variables = _mlp(1)
    h = autodiff.hessian(f, variables).numpy()
    rng = np.random.default_rng(3)
    vectors = [tf.constant(rng.normal(size=v.shape.as_list())) for v in variables]
    hv = autodiff.flatten(autodiff.hvp(f, variables, vectors, method=method)).numpy()
    np.testing.assert_allclose(hv, h @ autodiff.flatten(vectors).numpy(), atol=1e-10)


def test_newton_on_a_quadratic_converges_in_one_step():
    a = tf.constant([[3.0, 1.0], [1.0, 2.0]], tf.float64)
    c = tf.constant([1.0, -2.0], tf.float64)
    w = tf.Variable([5.0, 5.0], dtype=tf.float64)
    u = tf.Variable([[0.5]], dtype=tf.float64)

    def loss():
        d = w - c
        return 0.5 * tf.reduce_sum(d * tf.linalg.matvec(a, d)) + 2.0 * tf.reduce_sum((u - 3.0) ** 2)

    autodiff.newton_step(loss, [w, u], damping=0.0)
    np.testing.assert_allclose(w.numpy(), [1.0, -2.0], atol=1e-12)
    np.testing.assert_allclose(u.numpy(), [[3.0]], atol=1e-12)
    w.assign([5.0, 5.0])
    u.assign([[0.5]])
    autodiff.newton_cg_step(loss, [w, u], damping=0.0)
    np.testing.assert_allclose(w.numpy(), [1.0, -2.0], atol=1e-8)
    np.testing.assert_allclose(u.numpy(), [[3.0]], atol=1e-8)


def test_damped_newton_minimises_a_logistic_regression():
    rng = np.random.default_rng(2)
    x = tf.constant(rng.normal(size=(50, 3)))
    labels = tf.constant((rng.random(50) < 0.5).astype(np.float64))
    w, b = tf.Variable(np.zeros(3)), tf.Variable(0.0, dtype=tf.float64)

    def loss():
        logits = tf.linalg.matvec(x, w) + b
        return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)) + 0.01 * tf.reduce_sum(w * w)

    losses = [float(loss())]
    for _ in range(6):
        autodiff.newton_step(loss, [w, b], damping=1e-6)
        losses.append(float(loss()))
    assert all(later < earlier for earlier, later in zip(losses, losses[1:4]))
    _, grads = autodiff.second_order._gradients(loss, [w, b])
    assert max(float(tf.reduce_max(tf.abs(g))) for g in grads) < 1e-9


def test_input_gradient_norm_is_the_guide_recipe_and_differentiable():
    rng = np.random.default_rng(4)
    x = tf.constant(rng.normal(size=(7, 5)))
    w = tf.Variable(rng.normal(size=(5, 10)))
    b = tf.Variable(np.zeros(10))

    def layer(inputs):
        return tf.nn.relu(inputs @ w + b)

    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(layer(x) ** 2)
        guide = tf.norm(t1.gradient(out, x))
        mine = autodiff.input_gradient_norm(layer, x)
    assert float(mine) == pytest.approx(float(guide), rel=1e-12)
    dw, db = t2.gradient(mine, [w, b])
    assert dw.shape == (5, 10) and db.shape == (10,)
    eps = 1e-6
    w0 = w.numpy()
    w.assign(w0 + np.eye(5, 10) * eps)
    plus = float(autodiff.input_gradient_norm(layer, x))
    w.assign(w0 - np.eye(5, 10) * eps)
    minus = float(autodiff.input_gradient_norm(layer, x))
    w.assign(w0)
    assert float(tf.reduce_sum(dw * np.eye(5, 10))) == pytest.approx((plus - minus) / (2 * eps), rel=1e-5)

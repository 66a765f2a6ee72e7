"""optimizers.Newton: exact and Hessian-free Newton steps; the guide's Newton example."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import optimizers


def _quadratic():
    a = tf.constant([[4.0, 1.0], [1.0, 3.0]], tf.float64)
    target = tf.constant([1.0, -1.0], tf.float64)
    w = tf.Variable([10.0, 10.0], dtype=tf.float64)

    def loss():
        d = w - target
        return 0.5 * tf.reduce_sum(d * tf.linalg.matvec(a, d))
    return w, loss


@pytest.mark.parametrize("method", ["exact", "cg"])
def test_one_step_solves_a_quadratic(method):
    w, loss = _quadratic()
    opt = optimizers.Newton(damping=0.0, method=method)
    before = opt.minimize(loss, [w])
    assert float(before) > 0
    np.testing.assert_allclose(w.numpy(), [1.0, -1.0], atol=1e-8)
    assert int(opt.iterations) == 1


def test_newton_refuses_gradient_only_steps_and_bad_arguments():
    w, loss = _quadratic()
    opt = optimizers.Newton()
    with pytest.raises(ValueError, match="needs the loss as a zero-argument callable"):
        opt.minimize(loss(), [w])
    with pytest.raises(TypeError, match="needs the loss function"):
        opt.apply_gradients([(tf.ones([2], tf.float64), w)])
    with pytest.raises(ValueError, match="`method` must be 'exact' or 'cg'"):
        optimizers.Newton(method="lbfgs")
    assert optimizers.get("newton").method == "exact"
    config = optimizers.Newton(damping=0.5, method="cg").get_config()
    assert optimizers.Newton.from_config(config).damping == 0.5


def test_the_guides_newton_example_with_two_dense_layers():
    """Dense(5->8, relu), Dense(8->6, relu), loss mean(y**2): a damped Newton step on layer1's kernel."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    k1 = tf.Variable(rng.normal(size=(5, 8)).astype(np.float32) * 0.5)
    b1 = tf.Variable(np.full(8, 0.1, np.float32))
    k2 = tf.Variable(rng.normal(size=(8, 6)).astype(np.float32) * 0.5)
    b2 = tf.Variable(np.full(6, 0.1, np.float32))

    def loss():
        h = tf.nn.relu(x @ k1 + b1)
        return tf.reduce_mean(tf.nn.relu(h @ k2 + b2) ** 2)

    # The guide's recipe, by hand:
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            value = loss()
        g = t1.gradient(value, k1)
    h = t2.jacobian(g, k1)
    n_params = tf.reduce_prod(k1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    expected = k1.numpy() - tf.reshape(update, k1.shape).numpy()

    optimizers.Newton(damping=1e-3).minimize(loss, [k1])
    np.testing.assert_allclose(k1.numpy(), expected, rtol=2e-4, atol=2e-5)

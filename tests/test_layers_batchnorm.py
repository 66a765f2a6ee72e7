"""BatchNormalization: Keras 3 numbers, moving statistics, freezing, and the fused op's
gradient on every path (plain, stacked cotangents, under an outer tape, forward mode)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.recording import execute
from tapeflow.ops import batchnorm_ops

K = tf.keras
rng = np.random.default_rng(7)
SPEC_X = np.array([[1, 2], [3, 6], [5, 10], [7, 14]], np.float32)


def numpy_bn_train(x, gamma, beta, eps):
    mean, var = x.mean(0), x.var(0)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta, mean, var


def test_training_output_and_moving_statistics_match_the_spec():
    bn = K.layers.BatchNormalization()
    y = bn(SPEC_X, training=True).numpy()
    assert np.allclose(y[:, 0], [-1.3415, -0.4472, 0.4472, 1.3415], atol=1e-4)
    assert np.allclose(y[:, 1], [-1.3416, -0.4472, 0.4472, 1.3416], atol=1e-4)
    assert np.allclose(y, numpy_bn_train(SPEC_X.astype(np.float64), 1.0, 0.0, 1e-3)[0], atol=1e-6)
    assert np.allclose(bn.moving_mean.numpy(), [0.04, 0.08], atol=1e-6)
    assert np.allclose(bn.moving_variance.numpy(), [1.04, 1.19], atol=1e-6)  # biased variances 5 and 20
    assert [v.name for v in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [v.name for v in bn.trainable_weights] == ["gamma", "beta"]


def test_inference_uses_the_moving_statistics():
    bn = K.layers.BatchNormalization(epsilon=1e-3)
    bn.build((None, 2))
    gamma, beta = np.array([2.0, 0.5], np.float32), np.array([0.1, -1.0], np.float32)
    mm, mv = np.array([3.0, 5.0], np.float32), np.array([4.0, 9.0], np.float32)
    bn.set_weights([gamma, beta, mm, mv])
    expected = (SPEC_X - mm) / np.sqrt(mv + 1e-3) * gamma + beta
    assert np.allclose(bn(SPEC_X).numpy(), expected, atol=1e-5)
    assert np.allclose(bn(SPEC_X, training=False).numpy(), expected, atol=1e-5)
    assert np.array_equal(bn.moving_mean.numpy(), mm)


def test_frozen_layer_runs_in_inference_mode_even_with_training_true():
    bn = K.layers.BatchNormalization()
    bn(SPEC_X, training=True)
    stats = [bn.moving_mean.numpy(), bn.moving_variance.numpy()]
    bn.trainable = False
    y = bn(SPEC_X, training=True).numpy()
    expected = (SPEC_X - stats[0]) / np.sqrt(stats[1] + 1e-3)
    assert np.allclose(y, expected, atol=1e-5)
    assert np.array_equal(bn.moving_mean.numpy(), stats[0])
    assert np.array_equal(bn.moving_variance.numpy(), stats[1])


def test_momentum_and_repeated_updates():
    bn = K.layers.BatchNormalization(momentum=0.9)
    x1, x2 = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    bn(x1, training=True)
    bn(x2, training=True)
    mean = (0 * 0.9 + x1.mean(0) * 0.1) * 0.9 + x2.mean(0) * 0.1
    var = (1 * 0.9 + x1.var(0) * 0.1) * 0.9 + x2.var(0) * 0.1
    assert np.allclose(bn.moving_mean.numpy(), mean, atol=1e-6)
    assert np.allclose(bn.moving_variance.numpy(), var, atol=1e-6)


def test_channels_first_axis_and_no_center_no_scale():
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    bn = K.layers.BatchNormalization(axis=1, center=False, scale=False)
    y = bn(x, training=True).numpy()
    mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
    assert np.allclose(y, (x - mean) / np.sqrt(var + 1e-3), atol=1e-5)
    assert [v.name for v in bn.weights] == ["moving_mean", "moving_variance"]
    assert np.allclose(bn.moving_mean.numpy(), 0.01 * mean.ravel(), atol=1e-6)
    inference = bn(x).numpy()
    mm, mv = bn.moving_mean.numpy()[None, :, None], bn.moving_variance.numpy()[None, :, None]
    assert np.allclose(inference, (x - mm) / np.sqrt(mv + 1e-3), atol=1e-5)


def test_gradients_match_the_numpy_batchnorm_backward():
    x = rng.standard_normal((6, 4)).astype(np.float64)
    dy = rng.standard_normal((6, 4))
    bn = K.layers.BatchNormalization(dtype="float64", epsilon=1e-3)
    bn.build((None, 4))
    gamma, beta = rng.standard_normal(4), rng.standard_normal(4)
    bn.set_weights([gamma, beta, np.zeros(4), np.ones(4)])
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = bn(xt, training=True)
        loss = tf.reduce_sum(y * dy)
    gx, gg, gb = tape.gradient(loss, [xt, bn.gamma, bn.beta])
    n = x.shape[0]
    xhat = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    dxhat = dy * gamma
    dx = (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / (n * np.sqrt(x.var(0) + 1e-3))
    assert np.allclose(y.numpy(), xhat * gamma + beta, atol=1e-12)
    assert np.allclose(gx.numpy(), dx, atol=1e-10)
    assert np.allclose(gg.numpy(), (dy * xhat).sum(0), atol=1e-10)
    assert np.allclose(gb.numpy(), dy.sum(0), atol=1e-10)


def _composite_bn(x, gamma, beta, eps):
    """Training-mode BatchNormalization written with plain ops (the reference for the fused op)."""
    mean = tf.reduce_mean(x, 0)
    var = tf.reduce_mean(tf.square(x - mean), 0)
    return (x - mean) * tf.math.rsqrt(var + eps) * gamma + beta


def test_jacobian_and_batch_jacobian_through_training_batchnorm():
    x = tf.constant(rng.standard_normal((5, 3)))
    gamma = tf.Variable(rng.standard_normal(3))
    beta = tf.Variable(rng.standard_normal(3))
    results = []
    for forward in (lambda v: batchnorm_ops.fused_batch_norm_training(v, gamma, beta, 1e-3)[0],
                    lambda v: _composite_bn(v, gamma, beta, 1e-3)):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = forward(x)
        results.append([tape.jacobian(y, x).numpy(), tape.jacobian(y, gamma).numpy(),
                        tape.batch_jacobian(y, x).numpy()])
    for fused, composite in zip(*results):
        assert np.allclose(fused, composite, atol=1e-10)
    # Each column of x is normalized on its own: no cross-channel terms.
    assert np.all(results[0][0][:, 0, :, 1] == 0)


def test_second_order_through_training_batchnorm():
    x = tf.constant(rng.standard_normal((6, 3)))
    w = rng.standard_normal((6, 3))
    gamma = tf.Variable(rng.standard_normal(3))
    beta = tf.Variable(rng.standard_normal(3))
    results = []
    for forward in (lambda v: batchnorm_ops.fused_batch_norm_training(v, gamma, beta, 1e-3)[0],
                    lambda v: _composite_bn(v, gamma, beta, 1e-3)):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                loss = tf.reduce_sum(tf.square(forward(x)) * w)
            gx = inner.gradient(loss, x)
            penalty = tf.reduce_sum(gx * gx)
        results.append([outer.gradient(penalty, x).numpy(), outer.gradient(penalty, gamma).numpy(),
                        outer.jacobian(gx, x).numpy()])
    for fused, composite in zip(*results):
        assert np.allclose(fused, composite, atol=1e-9)


def test_forward_mode_through_training_batchnorm():
    x = tf.constant(rng.standard_normal((4, 2)))
    tangent = tf.constant(rng.standard_normal((4, 2)))
    gamma, beta = tf.constant(np.ones(2)), tf.constant(np.zeros(2))
    outs = []
    for forward in (lambda v: batchnorm_ops.fused_batch_norm_training(v, gamma, beta, 1e-3)[0],
                    lambda v: _composite_bn(v, gamma, beta, 1e-3)):
        with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
            y = forward(x)
        outs.append(acc.jvp(y).numpy())
    assert np.allclose(outs[0], outs[1], atol=1e-10)


def test_cotangents_of_the_batch_statistics():
    """Differentiating the returned mean and variance: d mean/dx = 1/N, d var/dx = 2(x - mean)/N."""
    x = tf.constant(rng.standard_normal((5, 2)))
    w_mean, w_var = rng.standard_normal(2), rng.standard_normal(2)
    g, b = tf.constant(np.ones(2)), tf.constant(np.zeros(2))
    expected = w_mean / 5 + 2 * (x.numpy() - x.numpy().mean(0)) / 5 * w_var
    for persistent_outer in (False, True):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            _, mean, var = batchnorm_ops.fused_batch_norm_training(x, g, b, 1e-3)
            loss = tf.reduce_sum(mean * w_mean) + tf.reduce_sum(var * w_var)
        if persistent_outer:
            with tf.GradientTape() as recording:  # a recording tape forces the composite path
                recording.watch(x)
                gx = tape.gradient(loss, x)
        else:
            gx = tape.gradient(loss, x)
        assert np.allclose(gx.numpy(), expected, atol=1e-10)


def test_the_fused_gradient_op_has_its_own_gradient():
    x = tf.constant(rng.standard_normal((5, 3)))
    dy = tf.constant(rng.standard_normal((5, 3)))
    gamma = tf.constant(rng.standard_normal(3))
    _, mean, var = batchnorm_ops.fused_batch_norm_training(x, gamma, tf.constant(np.zeros(3)), 1e-3)
    zeros = tf.constant(np.zeros(3))
    w = rng.standard_normal((5, 3))
    grads = []
    for fn in (lambda *a: execute("FusedBatchNormGrad", a, {"epsilon": 1e-3}),
               lambda *a: batchnorm_ops.composite_grad(*a, 1e-3)):
        with tf.GradientTape() as tape:
            tape.watch([dy, x, gamma])
            dx, dgamma, dbeta = fn(dy, x, gamma, mean, var, zeros, zeros)
            out = tf.reduce_sum(dx * w) + tf.reduce_sum(dgamma) + tf.reduce_sum(dbeta * 2.0)
        grads.append([t.numpy() for t in tape.gradient(out, [dy, x, gamma])])
    for fused, composite in zip(*grads):
        assert np.allclose(fused, composite, atol=1e-10)


def test_fused_kernel_agrees_with_numpy_in_float32():
    x = rng.standard_normal((64, 16)).astype(np.float32) * 3 + 1
    gamma, beta = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    y, mean, var = batchnorm_ops.fused_batch_norm_training(tf.constant(x), gamma, beta, 1e-3)
    ref, ref_mean, ref_var = numpy_bn_train(x.astype(np.float64), gamma, beta, 1e-3)
    assert y.dtype == tf.float32
    assert np.allclose(y.numpy(), ref, atol=1e-5)
    assert np.allclose(mean.numpy(), ref_mean, atol=1e-6) and np.allclose(var.numpy(), ref_var, atol=1e-5)


def test_renorm_is_refused_clearly():
    with pytest.raises(ValueError, match="renorm"):
        K.layers.BatchNormalization(renorm=True)

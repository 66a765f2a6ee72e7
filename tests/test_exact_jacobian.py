"""Exact jacobians (issue 10.2): block-diagonal structure is proven by the ops' batching rules,
never sampled, and every other jacobian runs the exact stacked backward.

Each case is checked against a per-element loop of ``tape.gradient`` (``check_jacobian``), which
never uses the block path, so a batching rule that wrongly claims rows independent fails here.
"""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_jacobian
from tapeflow.framework.batching import proven_block_diagonal


def test_the_issue_example_keeps_its_cross_example_term():
    x = tf.constant(np.random.default_rng(0).standard_normal((8, 3)).astype("float32"))
    with tf.GradientTape() as t:
        t.watch(x)
        y = 2 * x + 1e-6 * tf.reduce_sum(x, 0)
    j = t.jacobian(y, x).numpy()
    np.testing.assert_allclose(j[0, 0, 1, 0], 1e-6, rtol=1e-6)
    np.testing.assert_allclose(j[3, 2, 3, 2], 2 + 1e-6, rtol=1e-6)


R = np.random.default_rng(3)
W = R.standard_normal((3, 4))
B = R.standard_normal(4)
W3 = R.standard_normal((2, 4, 3))


def _bn_training(x):
    layer = tf.keras.layers.BatchNormalization(dtype="float64")
    return layer(x, training=True)


@tf.custom_gradient
def _mix_rows_in_gradient(x):
    """Identity forward, but a gradient that mixes rows: the forward alone proves nothing."""
    return tf.identity(x), lambda dy: dy + tf.reduce_sum(dy, 0)


# (name, f, rows independent?)
MIXING = [
    ("sum over batch", lambda x: x * tf.reduce_sum(x, 0), False),
    ("mean over batch, keepdims", lambda x: x - tf.reduce_mean(x, 0, keepdims=True), False),
    ("sum over all", lambda x: x + tf.reduce_sum(x), False),
    ("batchnorm in training", _bn_training, False),
    ("transpose moves the batch", lambda x: tf.transpose(x) * 2.0, False),
    ("reshape moves rows", lambda x: tf.reshape(tf.reshape(x, (3, 5)) ** 2, (5, 3)), False),
    ("reversed rows", lambda x: x[::-1] * x, False),
    ("shifted rows", lambda x: tf.concat([x[1:], x[:1]], 0) * x, False),
    ("gather along the batch", lambda x: tf.gather(x, [1, 0, 2, 4, 3]) * x, False),
    ("gram matrix", lambda x: tf.matmul(x, x, transpose_b=True), False),
    ("batched right operand", lambda x: tf.matmul(tf.constant(R.standard_normal((5, 5))), x), False),
    ("cumsum over batch", lambda x: tf.math.cumsum(x, axis=0), False),
    ("softmax over batch", lambda x: tf.nn.softmax(x, axis=0), False),
    ("einsum mixing", lambda x: tf.einsum("ij,kj->ik", x, x), False),
    ("custom gradient", lambda x: _mix_rows_in_gradient(x) * 1.0, False),
    ("stack on axis 0", lambda x: tf.reshape(tf.stack([x, x * 2], 0), (5, 6)), False),
    ("tile along batch", lambda x: tf.tile(x, (2, 1))[:5] * x, False),
    ("pad along batch", lambda x: tf.pad(x, [[1, 0], [0, 0]])[:5] * x, False),
    # row-independent compositions
    ("mlp", lambda x: tf.nn.softmax(tf.matmul(tf.nn.relu(tf.matmul(x, tf.constant(W)) + B),
                                              tf.constant(W.T))), True),
    ("elementwise chain", lambda x: tf.sin(x) * tf.exp(x) / (1 + x * x), True),
    ("reduction over features", lambda x: x * tf.reduce_sum(x, -1, keepdims=True), True),
    ("reshape keeping rows", lambda x: tf.reshape(tf.reshape(x, (5, 3, 1)) * 2.0, (5, 3)), True),
    ("rows sliced from axis 1", lambda x: x[:, 1:] * x[:, :2], True),
    ("ellipsis slice", lambda x: x[..., 0:2] + 1.0, True),
    ("concat features", lambda x: tf.concat([x, x ** 2], axis=1), True),
    ("stack features", lambda x: tf.reshape(tf.stack([x, tf.tanh(x)], axis=1), (5, 6)), True),
    ("gather features", lambda x: tf.gather(x, [2, 0], axis=1) * 3.0, True),
    ("batched matmul", lambda x: tf.reshape(tf.matmul(tf.reshape(x, (5, 3, 1)), tf.constant(W[:1])), (5, 12)),
     True),
    ("einsum rows", lambda x: tf.einsum("bi,ij->bj", x, tf.constant(W)), True),
    ("log softmax", lambda x: tf.nn.log_softmax(x * 3.0), True),
    ("transpose keeping batch", lambda x: tf.reshape(tf.transpose(tf.reshape(x, (5, 3, 1)), (0, 2, 1)), (5, 3)),
     True),
    ("pad features", lambda x: tf.pad(x, [[0, 0], [1, 2]]) * 2.0, True),
    ("tile features", lambda x: tf.tile(x, (1, 2)) * 2.0, True),
    ("where", lambda x: tf.where(x > 0, x * x, -x), True),
]


def _records_and_ids(f, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape._tape.records, x._id, y._id


@pytest.mark.parametrize("name,f,independent", MIXING, ids=[m[0] for m in MIXING])
def test_jacobian_is_exact(name, f, independent):
    x = tf.constant(R.standard_normal((5, 3)))
    assert proven_block_diagonal(*_records_and_ids(f, x)) is independent
    check_jacobian(f, x.numpy())


def test_stacked_matrix_ops_and_batched_cross_entropy():
    a = R.standard_normal((4, 3, 3)) + 3 * np.eye(3)
    check_jacobian(lambda a: tf.reshape(tf.linalg.inv(a), (4, 9)), a)
    logits = R.standard_normal((4, 5))
    labels = tf.constant(np.eye(5)[[0, 3, 1, 4]])
    check_jacobian(lambda z: tf.nn.softmax_cross_entropy_with_logits(labels, z), logits)
    x = tf.constant(a)
    assert proven_block_diagonal(*_records_and_ids(lambda a: tf.linalg.inv(a), x))
    m = tf.constant(R.standard_normal((3, 3)) + 3 * np.eye(3))   # one matrix: its rows mix
    assert not proven_block_diagonal(*_records_and_ids(lambda a: tf.linalg.inv(a), m))


def test_hessian_of_a_network_through_gradient_ops():
    """Jacobian of a gradient (fused gradient ops, transposed matmuls) against the exact loop."""
    x0 = R.standard_normal((6, 3))

    def input_gradient(x):
        with tf.GradientTape() as inner:
            inner.watch(x)
            h = tf.nn.relu(tf.matmul(x, tf.constant(W)) + B)
            out = tf.reduce_sum(tf.nn.sigmoid(tf.matmul(h, tf.constant(W.T))) ** 2, axis=1)
        return inner.gradient(out, x)
    check_jacobian(input_gradient, x0)


def test_block_path_is_differentiable_and_matches_finite_differences():
    x0 = R.standard_normal((4, 2))
    w = tf.constant(R.standard_normal((2, 2)))

    def jac_sum(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.tanh(tf.matmul(x, w))
        return tf.reduce_sum(t.jacobian(y, x) ** 2)

    x = tf.constant(x0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        value = jac_sum(x)
    g = outer.gradient(value, x).numpy()
    eps = 1e-6
    numeric = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (float(jac_sum(tf.constant(up))) - float(jac_sum(tf.constant(down)))) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


def test_convolution_and_pooling_keep_examples_independent():
    x0 = R.standard_normal((3, 6, 6, 2))
    w = tf.constant(R.standard_normal((3, 3, 2, 2)))

    def convnet(x):
        y = tf.nn.relu(tf.nn.conv2d(x, w, strides=1, padding="SAME"))
        return tf.reshape(tf.nn.max_pool2d(y, 2, 2, "VALID") + tf.nn.avg_pool2d(y, 2, 2, "VALID"), (3, 18))

    x = tf.constant(x0)
    assert proven_block_diagonal(*_records_and_ids(convnet, x))
    check_jacobian(convnet, x0)

    def filter_from_the_source(x):     # the filter depends on every example: rows mix
        return tf.reshape(tf.nn.conv2d(x, tf.reshape(x[0, :3, :3, :], (3, 3, 2, 1)), 1, "VALID"), (3, 16))
    assert not proven_block_diagonal(*_records_and_ids(filter_from_the_source, x))
    check_jacobian(filter_from_the_source, x0)

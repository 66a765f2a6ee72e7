"""NaN in, NaN out: activations, their fused gradient ops, softmax, cross-entropy and batch
normalization treat nan and +-inf as TensorFlow's CPU kernels do.

TensorFlow's semantics, which the references below write as plain numpy:
* relu / relu6 take the maximum (minimum) propagating NaN: relu(nan) = nan.
* ReluGrad / Relu6Grad multiply the cotangent by a 0/1 mask: g * (y > 0), so a nan
  activation gives 0 but an inf or nan cotangent on an inactive unit gives nan.
* LeakyRelu(Grad), Elu(Grad), Selu(Grad) select on a comparison (x > 0, y < 0): the
  branch a nan falls into is the one the comparison's "false" side names.
* Everything else (sigmoid, tanh, softplus, softsign, gelu, softmax, cross-entropy,
  batch norm) is the op's formula composed in numpy.
Each reference is computed in float64 from the same inputs and compared with
``assert_allclose``, which also requires nan at the same places and equal infinities.
"""
import math

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.recording import forward_of
from tapeflow.ops import batchnorm_ops, nn_ops

K = tf.keras
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
ALPHA = 0.3  # leaky_relu's slope in these tests
X_SPECIAL = [np.nan, np.inf, -np.inf, -3.0, -0.5, 0.0, 0.5, 2.0, 7.0]
G_SPECIAL = [np.nan, np.inf, -np.inf, -1.5, 2.0]
DTYPES = [np.float32, np.float64]

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _quiet(fn):
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return fn(*[np.asarray(a, np.float64) for a in args])
    return wrapped


def _gelu_tanh_parts(x):
    c, k = math.sqrt(2 / math.pi), 0.044715
    t = np.tanh(c * (x + k * x ** 3))
    return t, c * (1 + 3 * k * x ** 2)


@_quiet
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (tapeflow function, numpy forward, gradient op, its attrs, numpy gradient op, the input it takes)
# The gradient op's numpy formula takes (g, x) or (g, y) as TensorFlow's op does; "y" means the
# forward output. SigmoidGrad and TanhGrad take (y, g) in TensorFlow's order.
ACTIVATIONS = {
    "relu": (tf.nn.relu, _quiet(lambda x: np.maximum(x, 0)),
             "ReluGrad", {}, _quiet(lambda g, y: g * (y > 0)), "y"),
    "relu6": (tf.nn.relu6, _quiet(lambda x: np.minimum(np.maximum(x, 0), 6)),
              "Relu6Grad", {}, _quiet(lambda g, x: g * ((x > 0) & (x < 6))), "x"),
    "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=ALPHA), _quiet(lambda x: np.where(x > 0, x, ALPHA * x)),
                   "LeakyReluGrad", {"alpha": ALPHA}, _quiet(lambda g, x: np.where(x > 0, g, ALPHA * g)), "x"),
    "elu": (tf.nn.elu, _quiet(lambda x: np.where(x < 0, np.expm1(x), x)),
            "EluGrad", {}, _quiet(lambda g, y: np.where(y < 0, g * (y + 1), g)), "y"),
    "selu": (tf.nn.selu, _quiet(lambda x: np.where(x < 0, SELU_SCALE * SELU_ALPHA * np.expm1(x), SELU_SCALE * x)),
             "SeluGrad", {}, _quiet(lambda g, y: np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)),
             "y"),
    "softplus": (tf.nn.softplus, _quiet(lambda x: np.logaddexp(0, x)),
                 "SoftplusGrad", {}, _quiet(lambda g, x: g / (1 + np.exp(-x))), "x"),
    "softsign": (tf.nn.softsign, _quiet(lambda x: x / (1 + np.abs(x))),
                 "SoftsignGrad", {}, _quiet(lambda g, x: g / (1 + np.abs(x)) ** 2), "x"),
    "sigmoid": (tf.nn.sigmoid, _sigmoid,
                "SigmoidGrad", {}, _quiet(lambda g, y: g * y * (1 - y)), "y"),
    "tanh": (tf.math.tanh, _quiet(np.tanh),
             "TanhGrad", {}, _quiet(lambda g, y: g * (1 - y * y)), "y"),
    "gelu": (tf.nn.gelu, _quiet(lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
             "GeluGrad", {"approximate": False},
             _quiet(lambda g, x: g * (0.5 * (1 + _erf(x / math.sqrt(2)))
                                      + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))), "x"),
    "gelu_tanh": (lambda x: tf.nn.gelu(x, approximate=True),
                  _quiet(lambda x: 0.5 * x * (1 + _gelu_tanh_parts(x)[0])),
                  "GeluGrad", {"approximate": True},
                  _quiet(lambda g, x: g * (0.5 * (1 + _gelu_tanh_parts(x)[0])
                                           + 0.5 * x * (1 - _gelu_tanh_parts(x)[0] ** 2) * _gelu_tanh_parts(x)[1])),
                  "x"),
}
_Y_FIRST = {"SigmoidGrad", "TanhGrad"}


def assert_matches(got, expected, dtype):
    got = np.asarray(got)
    assert got.dtype == dtype
    tight = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, np.asarray(expected).astype(dtype), rtol=tight, atol=tight)


def _grid():
    """Every special cotangent against every special input (45 pairs)."""
    g, x = np.meshgrid(G_SPECIAL, X_SPECIAL)
    return g.ravel(), x.ravel()


def _run_grad_op(op_type, attrs, g, x):
    forward, _ = forward_of(op_type)
    return forward(x, g, **attrs) if op_type in _Y_FIRST else forward(g, x, **attrs)


# ------------------------------------------------------------ forward ---
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_activation_of_nan_and_infinities(name, dtype):
    fn, reference = ACTIVATIONS[name][:2]
    x = np.array(X_SPECIAL, dtype)
    got = fn(tf.constant(x)).numpy()
    assert_matches(got, reference(x), dtype)
    assert np.isnan(got[0]), f"{name}(nan) must be nan"


def test_relu_of_nan_is_nan_as_in_tensorflow():
    np.testing.assert_array_equal(tf.nn.relu(tf.constant([np.nan, np.inf, -np.inf, -1.0])).numpy(),
                                  [np.nan, np.inf, 0.0, 0.0])
    assert np.isnan(K.activations.relu(tf.constant(np.nan)).numpy())
    assert np.isnan(K.layers.Activation("relu")(tf.constant([np.nan])).numpy()[0])


# ---------------------------------------------------- fused gradient ops ---
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_gradient_op_on_special_inputs_and_cotangents(name, dtype):
    _, _, op_type, attrs, reference, _ = ACTIVATIONS[name]
    g, x = (a.astype(dtype) for a in _grid())
    assert_matches(_run_grad_op(op_type, attrs, g, x), reference(g, x), dtype)


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_stacked_cotangents_give_the_same_special_values(name, dtype):
    """A stack of cotangent rows (what jacobian sends) through one gradient op: each row as alone."""
    _, _, op_type, attrs, reference, _ = ACTIVATIONS[name]
    g, x = (a.astype(dtype) for a in _grid())
    stacked = np.stack([g, g[::-1], np.ones_like(g)])
    got = _run_grad_op(op_type, attrs, stacked, x)
    assert got.shape == stacked.shape
    assert_matches(got, reference(stacked, x[None]), dtype)


def test_relu_gradient_masks_by_multiplying_as_tensorflow():
    forward, _ = forward_of("ReluGrad")
    out = forward(np.array([-3.0, np.inf, np.nan, 5.0, 2.0], np.float32),
                  np.array([-1.0, 0.0, -2.0, np.nan, 1.0], np.float32))
    np.testing.assert_array_equal(out, [0.0, np.nan, np.nan, 0.0, 2.0])
    assert np.signbit(out[0])  # -3 * 0 is -0.0


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tape_gradient_with_nan_inputs_and_cotangents(name, dtype):
    fn, forward_ref, _, _, reference, takes = ACTIVATIONS[name]
    g, x = (a.astype(dtype) for a in _grid())
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = fn(xt)
    got = tape.gradient(y, xt, output_gradients=tf.constant(g)).numpy()
    second = forward_ref(x).astype(dtype) if takes == "y" else x
    assert_matches(got, reference(g, second), dtype)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_jacobian_of_special_inputs_equals_its_rows(name):
    """The stacked backward of jacobian: column j is the one-hot rows times the slope at x_j, so a nan
    slope makes the whole column nan (0 * nan), exactly as a loop of single gradients gives it.
    (One example in the batch: this exercises the stacked gradient ops, not the block-diagonal
    assembly of batched jacobians.)"""
    fn, forward_ref, _, _, reference, takes = ACTIVATIONS[name]
    x = np.array([X_SPECIAL], np.float32)
    n = x.size
    xt = tf.constant(x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        y = fn(xt)
    jac = tape.jacobian(y, xt).numpy().reshape(n, n)
    one_hot = np.eye(n, dtype=np.float32).reshape(n, 1, n)
    rows = np.stack([tape.gradient(y, xt, output_gradients=tf.constant(one_hot[i])).numpy()[0] for i in range(n)])
    np.testing.assert_array_equal(jac, rows)
    second = forward_ref(x[0]).astype(np.float32) if takes == "y" else x[0]
    slope = reference(np.ones(n, np.float32), second)
    assert_matches(jac, np.eye(n) * slope[None, :], np.float32)


# --------------------------------------------------------- fused bias+relu ---
@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_relu_forward_and_fused_gradient(dtype):
    """Dense(activation='relu') runs relu(x + bias) and its gradient as one fused op."""
    g_col, x_col = _grid()
    x = np.stack([x_col, x_col[::-1]], axis=1).astype(dtype)          # (45, 2)
    g = np.stack([g_col, np.ones_like(g_col)], axis=1).astype(dtype)
    bias = np.array([0.0, 1.0], dtype)
    xt, bt = tf.constant(x), tf.constant(bias)
    with tf.GradientTape() as tape:
        tape.watch([xt, bt])
        y = nn_ops.bias_relu(xt, bt)
    dx, db = tape.gradient(y, [xt, bt], output_gradients=tf.constant(g))
    with np.errstate(all="ignore"):
        z = x.astype(np.float64) + bias
        expected_dx = g * (z > 0)
    assert_matches(y.numpy(), np.maximum(z, 0), dtype)
    assert_matches(dx.numpy(), expected_dx, dtype)
    assert_matches(db.numpy(), expected_dx.sum(0), dtype)


def test_dense_relu_layer_passes_nan_through():
    layer = K.layers.Dense(2, activation="relu", kernel_initializer="ones", bias_initializer="zeros")
    out = layer(tf.constant([[np.nan, 1.0], [-1.0, -1.0]])).numpy()
    np.testing.assert_array_equal(out, [[np.nan, np.nan], [0.0, 0.0]])


# --------------------------------------------------------------- softmax ---
SOFTMAX_ROWS = [[np.nan, 0.0, 1.0], [0.0, np.nan, 1.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0],
                [-np.inf, -np.inf, -np.inf], [1.0, 2.0, 3.0]]


@_quiet
def _log_softmax(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_and_log_softmax_of_special_rows(dtype):
    x = np.array(SOFTMAX_ROWS, dtype)
    assert_matches(tf.nn.log_softmax(tf.constant(x)).numpy(), _log_softmax(x), dtype)
    with np.errstate(all="ignore"):
        expected = np.exp(_log_softmax(x))
    assert_matches(tf.nn.softmax(tf.constant(x)).numpy(), expected, dtype)
    assert np.isnan(tf.nn.softmax(tf.constant(x)).numpy()[:3]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_gradient_with_a_nan_cotangent(dtype):
    x = np.array([[0.5, -1.0, 2.0], [1.0, 2.0, 3.0], [-np.inf, 0.0, 1.0]], dtype)
    ct = np.array([[np.nan, 1.0, 0.0], [1.0, -2.0, 0.5], [1.0, 1.0, np.inf]], dtype)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.nn.softmax(xt)
    got = tape.gradient(y, xt, output_gradients=tf.constant(ct)).numpy()
    with np.errstate(all="ignore"):
        s = np.exp(_log_softmax(x))
        expected = s * (ct - np.sum(ct * s, axis=-1, keepdims=True))
    assert_matches(got, expected, dtype)
    assert np.isnan(got[0]).all() and np.isfinite(got[1]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_cross_entropy_with_special_logits(dtype):
    """-sum(labels * log_softmax(logits)) over every class: a zero label against a -inf logit is 0 * inf
    (nan), as in TensorFlow; the gradient softmax - labels stays finite there."""
    logits = np.array([[-np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0], [1.0, 2.0, 3.0],
                       [0.0, np.nan, 1.0]], dtype)
    labels = np.array([[0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5],
                       [0.0, 0.0, 0.0]], dtype)
    lt = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(lt)
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=lt)
    grad = tape.gradient(loss, lt).numpy()
    with np.errstate(all="ignore"):
        expected = -np.sum(labels * _log_softmax(logits), axis=-1)
        expected_grad = np.exp(_log_softmax(logits)) - labels
    assert_matches(loss.numpy(), expected, dtype)
    assert np.isnan(loss.numpy()[[0, 1, 2, 4]]).all() and np.isfinite(loss.numpy()[3])
    assert_matches(grad, expected_grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_softmax_cross_entropy_with_special_logits(dtype):
    logits = np.array([[np.nan, 0.0, 1.0], [-np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [np.inf, 0.0, 1.0]], dtype)
    labels = np.array([2, 1, 0, 1])
    lt = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(lt)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=lt)
    grad = tape.gradient(loss, lt).numpy()
    log_p = _log_softmax(logits)
    with np.errstate(all="ignore"):
        expected_grad = np.exp(log_p) - np.eye(3)[labels]
    assert_matches(loss.numpy(), -log_p[np.arange(4), labels], dtype)
    np.testing.assert_array_equal(np.isnan(loss.numpy()), [True, False, False, True])
    assert loss.numpy()[2] == np.inf
    assert_matches(grad, expected_grad, dtype)


# ------------------------------------------------------------ batch norm ---
@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_training_poisons_only_the_channel_with_nan_or_inf(dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4)).astype(dtype)
    x[2, 0] = np.nan
    x[1, 1] = np.inf
    gamma, beta, eps = np.array([1.0, 2.0, 0.5, 1.5], dtype), np.array([0.0, 1.0, -1.0, 0.5], dtype), 1e-3
    ct = rng.normal(size=(5, 4)).astype(dtype)
    ct[3, 2] = np.nan                      # a nan cotangent in the otherwise finite channel 2
    xt, gt, bt = tf.constant(x), tf.constant(gamma), tf.constant(beta)
    with tf.GradientTape() as tape:
        tape.watch([xt, gt, bt])
        y, mean, var = batchnorm_ops.fused_batch_norm_training(xt, gt, bt, eps)
    dx, dgamma, dbeta = tape.gradient(y, [xt, gt, bt], output_gradients=tf.constant(ct))
    with np.errstate(all="ignore"):
        x64, dy = x.astype(np.float64), ct.astype(np.float64)
        mu = x64.mean(0)
        v = ((x64 - mu) ** 2).mean(0)
        inv = 1 / np.sqrt(v + eps)
        xhat = (x64 - mu) * inv
        expected_y = xhat * gamma + beta
        expected_dgamma, expected_dbeta = (dy * xhat).sum(0), dy.sum(0)
        expected_dx = gamma * inv * (dy - dy.mean(0) - xhat * (dy * xhat).mean(0))
    assert_matches(mean.numpy(), mu, dtype)
    assert_matches(var.numpy(), v, dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, expected in ((y, expected_y), (dx, expected_dx), (dgamma, expected_dgamma), (dbeta, expected_dbeta)):
        np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol)
    assert np.isnan(y.numpy()[:, :2]).all() and np.isfinite(y.numpy()[:, 2:]).all()
    assert np.isnan(dx.numpy()[:, :3]).all() and np.isfinite(dx.numpy()[:, 3]).all()


# ------------------------------------------------------------------- fit ---
def _relu_model():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(3, activation="relu"), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(0.01), "mse")
    return model


def _data_with_a_nan_batch():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 2)).astype(np.float32)
    y = rng.normal(size=(12, 1)).astype(np.float32)
    x[5, 0] = np.nan                       # batch 1 of 3 (batch_size=4, no shuffling)
    return x, y


def test_fit_reports_a_nan_loss_for_a_nan_batch():
    K.backend.clear_session()
    x, y = _data_with_a_nan_batch()
    batch_losses = []
    record = K.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batch_losses.append(logs["loss"]))
    history = _relu_model().fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=[record])
    assert np.isfinite(batch_losses[0])
    assert all(np.isnan(loss) for loss in batch_losses[1:])   # the mean so far, then nan weights
    assert all(np.isnan(loss) for loss in history.history["loss"])


def test_terminate_on_nan_stops_at_the_nan_batch(capsys):
    K.backend.clear_session()
    x, y = _data_with_a_nan_batch()
    batches = []
    record = K.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batches.append(b))
    history = _relu_model().fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0,
                                callbacks=[record, K.callbacks.TerminateOnNaN()])
    assert batches == [0, 1]
    assert history.epoch == [0] and np.isnan(history.history["loss"][0])
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out

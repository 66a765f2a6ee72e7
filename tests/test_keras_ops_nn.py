"""keras.ops.nn: activations against their formulas in NumPy, encodings, cross-entropies (including the
values real Keras printed, from the spec), normalizations, derivatives to second order, and errors."""
import math

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn
from tapeflow.keras import ops

rng = np.random.default_rng(7)
X = np.concatenate([rng.uniform(-4, 4, 10), [-3.5, -0.7, 0.4, 2.5, 5.0]]).reshape(3, 5)


def away_from(*kinks, shape=(2, 3)):
    """Random values at least 0.2 from each kink (finite differences need smooth neighbourhoods)."""
    x = rng.uniform(-4, 4, shape)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.2, x + 0.5, x)
    return x


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def erf(x):
    return np.vectorize(math.erf)(x)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

ACTIVATIONS = [
    ("relu", ops.relu, lambda x: np.maximum(x, 0)),
    ("relu6", ops.relu6, lambda x: np.clip(x, 0, 6)),
    ("sigmoid", ops.sigmoid, sigmoid),
    ("softplus", ops.softplus, lambda x: np.log1p(np.exp(x))),
    ("softsign", ops.softsign, lambda x: x / (1 + np.abs(x))),
    ("silu", ops.silu, lambda x: x * sigmoid(x)),
    ("swish", ops.swish, lambda x: x * sigmoid(x)),
    ("log_sigmoid", ops.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
    ("leaky_relu", ops.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("leaky_relu 0.5", lambda x: ops.leaky_relu(x, negative_slope=0.5), lambda x: np.where(x > 0, x, 0.5 * x)),
    ("hard_sigmoid", ops.hard_sigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("hard_silu", ops.hard_silu, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    ("elu", ops.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    ("elu 0.5", lambda x: ops.elu(x, alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("selu", ops.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    ("gelu", ops.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("gelu exact", lambda x: ops.gelu(x, approximate=False), lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
    ("celu", lambda x: ops.celu(x, alpha=2.0), lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2))),
    ("tanh_shrink", ops.tanh_shrink, lambda x: x - np.tanh(x)),
    ("hard_tanh", ops.hard_tanh, lambda x: np.clip(x, -1, 1)),
    ("hard_shrink", ops.hard_shrink, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    ("soft_shrink", ops.soft_shrink, lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0)),
    ("threshold", lambda x: ops.threshold(x, 1.0, -2.0), lambda x: np.where(x > 1, x, -2.0)),
    ("squareplus", ops.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    ("sparse_plus", ops.sparse_plus, lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    ("sparse_sigmoid", ops.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    ("softmax", ops.softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("softmax axis 0", lambda x: ops.softmax(x, 0), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    ("softmax both axes", lambda x: ops.softmax(x, (0, 1)), lambda x: np.exp(x) / np.exp(x).sum()),
    ("log_softmax", ops.log_softmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    ("log_softmax both axes", lambda x: ops.log_softmax(x, (0, 1)), lambda x: x - np.log(np.exp(x).sum())),
    ("glu", ops.glu, lambda x: x[:, :2] * sigmoid(x[:, 2:4])),
]
KINKS = {"relu": [0], "relu6": [0, 6], "leaky_relu": [0], "leaky_relu 0.5": [0], "hard_sigmoid": [-3, 3],
         "hard_silu": [-3, 3], "elu": [0], "elu 0.5": [0], "selu": [0], "celu": [0], "hard_tanh": [-1, 1],
         "hard_shrink": [-0.5, 0.5], "soft_shrink": [-0.5, 0.5], "threshold": [1], "sparse_plus": [-1, 1],
         "sparse_sigmoid": [-1, 1]}


@pytest.mark.parametrize("name, op, formula", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_values(name, op, formula):
    x = X[:, :4] if name == "glu" else X
    np.testing.assert_allclose(op(x).numpy(), formula(x), rtol=1e-12, atol=1e-15)
    assert op(x.astype("float32")).dtype.name == "float32"


@pytest.mark.parametrize("name, op, formula", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_derivatives(name, op, formula):
    x = away_from(*KINKS.get(name, []), shape=(2, 4))
    check_gradients(op, x)
    check_gradients(vjp_fn(op), x, atol=1e-5, rtol=1e-4, allow_none=True)


def test_int_inputs_of_float_activations_compute_in_floatx():
    assert ops.sigmoid(np.array([0, 1])).dtype.name == "float32"
    assert ops.relu(np.array([-1, 2])).numpy().tolist() == [0, 2]


def test_gelu_defaults_differ_between_ops_and_activations():
    x = np.array([1.5])
    assert float(ops.gelu(x)[0]) == float(ops.gelu(x, approximate=True)[0])
    assert float(tf.keras.activations.gelu(x)[0]) == float(ops.gelu(x, approximate=False)[0])


# --------------------------------------------------------------- encodings ---
def test_one_hot_and_multi_hot():
    out = ops.one_hot(np.array([0, 2, -1, 5]), 3)
    assert out.dtype.name == "float32"
    np.testing.assert_array_equal(out.numpy(), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(ops.one_hot(np.array([1, 0]), 3, axis=0, dtype="int32").numpy(),
                                  [[0, 1], [1, 0], [0, 0]])
    np.testing.assert_array_equal(ops.multi_hot(np.array([[0, 2], [1, 1]]), 4).numpy(),
                                  [[1, 0, 1, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(ops.multi_hot(np.array([3, 0]), 4).numpy(), [1, 0, 0, 1])


# ----------------------------------------------------------- cross-entropy ---
def test_crossentropies_reproduce_the_values_keras_printed():
    # spec 4.1 [verified]: the means of Keras's losses over these batches.
    bce = ops.binary_crossentropy(np.array([0.0, 1, 1], "float32"), np.array([0.1, 0.8, 1.0], "float32"))
    assert abs(float(ops.mean(bce)) - 0.10950140) < 1e-7
    logits = np.array([-2, 1.5, 30], "float32")
    bce = ops.binary_crossentropy(np.array([0.0, 1, 1], "float32"), logits, from_logits=True)
    assert abs(float(ops.mean(bce)) - 0.10944710) < 1e-7
    y = np.array([[0, 1, 0], [0, 0, 1]], "float32")
    p = np.array([[0.05, 0.9, 0.05], [0.1, 0.8, 0.1]], "float32")
    z = np.array([[1, 3, 0], [2, 1, 0.5]], "float32")
    assert abs(float(ops.mean(ops.categorical_crossentropy(y, p))) - 1.20397282) < 1e-6
    assert abs(float(ops.mean(ops.categorical_crossentropy(y, z, from_logits=True))) - 1.06710744) < 1e-6
    labels = np.array([1, 2])
    assert abs(float(ops.mean(ops.sparse_categorical_crossentropy(labels, p))) - 1.20397282) < 1e-6
    assert abs(float(ops.mean(ops.sparse_categorical_crossentropy(labels[:, None], z, from_logits=True)))
               - 1.06710744) < 1e-6


def test_crossentropies_against_formulas():
    t = rng.uniform(0, 1, (3, 4))
    p = rng.uniform(0.01, 0.99, (3, 4))
    np.testing.assert_allclose(ops.binary_crossentropy(t, p).numpy(), -(t * np.log(p) + (1 - t) * np.log(1 - p)))
    z = rng.normal(size=(3, 4))
    np.testing.assert_allclose(ops.binary_crossentropy(t, z, from_logits=True).numpy(),
                               -(t * np.log(sigmoid(z)) + (1 - t) * np.log(1 - sigmoid(z))))
    q = p / p.sum(0, keepdims=True)
    np.testing.assert_allclose(ops.categorical_crossentropy(t, p, axis=0).numpy(), -(t * np.log(q)).sum(0))
    log_softmax = z - np.log(np.exp(z).sum(-1, keepdims=True))
    np.testing.assert_allclose(ops.categorical_crossentropy(t, z, from_logits=True).numpy(), -(t * log_softmax).sum(-1))
    labels = np.array([3, 0, 1])
    np.testing.assert_allclose(ops.sparse_categorical_crossentropy(labels, z, from_logits=True).numpy(),
                               -log_softmax[np.arange(3), labels])
    np.testing.assert_allclose(ops.sparse_categorical_crossentropy(labels, p).numpy(),
                               -np.log(p[np.arange(3), labels] / p.sum(-1)))


def test_probabilities_are_clipped_to_epsilon():
    bce = ops.binary_crossentropy(np.array([1.0, 0.0]), np.array([0.0, 1.0])).numpy()
    np.testing.assert_allclose(bce, [-np.log(1e-7), -np.log(1e-7)], rtol=1e-9)
    cce = ops.categorical_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])).numpy()
    np.testing.assert_allclose(cce, [-np.log(1e-7)], rtol=1e-9)


def test_softmax_and_sigmoid_outputs_are_read_as_their_logits():
    # As Keras's TensorFlow backend: no 1e-7 clipping of a softmax/sigmoid output, the logits are used.
    z = np.array([[0.0, 30.0]])
    target = np.array([[1.0, 0.0]])
    assert float(ops.categorical_crossentropy(target, ops.softmax(z))[0]) == pytest.approx(30.0, rel=1e-12)
    sparse = ops.sparse_categorical_crossentropy(np.array([0]), ops.softmax(z))
    assert float(sparse[0]) == pytest.approx(30.0, rel=1e-12)
    assert float(ops.binary_crossentropy(np.array([0.0]), ops.sigmoid(np.array([40.0])))[0]) == pytest.approx(40.0)


CROSSENTROPY_CASES = [
    ("binary", lambda p: ops.binary_crossentropy(np.array([[0.2, 1.0], [0.0, 0.7]]), p), rng.uniform(0.1, 0.9, (2, 2))),
    ("binary logits", lambda z: ops.binary_crossentropy(np.array([[0.2, 1.0], [0.0, 0.7]]), z, from_logits=True),
     rng.normal(size=(2, 2))),
    ("categorical", lambda p: ops.categorical_crossentropy(np.array([[0.2, 0.8, 0], [0, 0, 1.0]]), p),
     rng.uniform(0.1, 0.9, (2, 3))),
    ("categorical logits", lambda z: ops.categorical_crossentropy(np.array([[0.2, 0.8, 0], [0, 0, 1.0]]), z,
                                                                  from_logits=True), rng.normal(size=(2, 3))),
    ("sparse", lambda p: ops.sparse_categorical_crossentropy(np.array([2, 0]), p), rng.uniform(0.1, 0.9, (2, 3))),
    ("sparse logits", lambda z: ops.sparse_categorical_crossentropy(np.array([2, 0]), z, from_logits=True),
     rng.normal(size=(2, 3))),
]


@pytest.mark.parametrize("name, f, x", CROSSENTROPY_CASES, ids=[c[0] for c in CROSSENTROPY_CASES])
def test_crossentropy_derivatives(name, f, x):
    check_gradients(f, x)
    check_gradients(vjp_fn(f), x, atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------- normalization ---
def test_normalizations_against_formulas():
    x = rng.normal(size=(4, 3))
    mean, variance = ops.moments(x, [0])
    np.testing.assert_allclose(mean.numpy(), x.mean(0))
    np.testing.assert_allclose(variance.numpy(), x.var(0))
    mean, variance = ops.moments(x.astype("float16"), 1, keepdims=True)
    assert mean.dtype.name == "float16" and variance.shape == (4, 1)
    m, v, beta, gamma = rng.normal(size=4), rng.uniform(0.5, 2, 4), rng.normal(size=4), rng.normal(size=4)
    y = rng.normal(size=(4, 2))
    np.testing.assert_allclose(ops.batch_normalization(y, m, v, axis=0, offset=beta, scale=gamma).numpy(),
                               (y - m[:, None]) / np.sqrt(v[:, None] + 1e-3) * gamma[:, None] + beta[:, None])
    np.testing.assert_allclose(ops.normalize(x).numpy(), x / np.linalg.norm(x, axis=-1, keepdims=True))
    np.testing.assert_allclose(ops.normalize(x, axis=0, order=1).numpy(), x / np.abs(x).sum(0, keepdims=True))
    np.testing.assert_array_equal(ops.normalize(np.zeros((1, 3))).numpy(), np.zeros((1, 3)))
    np.testing.assert_allclose(ops.rms_normalization(x, scale=2.0).numpy(),
                               2 * x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-7))
    np.testing.assert_allclose(ops.layer_normalization(x, gamma=gamma[:3], beta=beta[:3], epsilon=1e-5).numpy(),
                               (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * gamma[:3]
                               + beta[:3])
    a, b = rng.uniform(0, 1, (3, 3)), rng.uniform(0, 1, (3, 3))
    np.testing.assert_allclose(float(ops.psnr(a, b, 1.0)), 20 * np.log10(1.0) - 10 * np.log10(((a - b) ** 2).mean()))


def test_dot_product_attention_against_numpy():
    q, k, v = rng.normal(size=(2, 3, 2, 4)), rng.normal(size=(2, 5, 2, 4)), rng.normal(size=(2, 5, 2, 4))
    mask = rng.uniform(size=(2, 1, 3, 5)) > 0.3
    mask[..., 0] = True
    logits = np.einsum("btnh,bsnh->bnts", q, k) / 2.0
    logits = np.where(mask, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(ops.dot_product_attention(q, k, v, mask=mask).numpy(),
                               np.einsum("bnts,bsnh->btnh", weights, v), rtol=1e-10)
    causal = ops.dot_product_attention(q, k[:, :3], v[:, :3], is_causal=True).numpy()
    np.testing.assert_allclose(causal[:, 0], v[:, 0], rtol=1e-10)       # the first position sees only itself


NORMALIZATION_CASES = [
    ("moments", lambda x: ops.moments(x, [0, 1]), rng.normal(size=(2, 3))),
    ("batch_normalization", lambda x, m, v, g: ops.batch_normalization(x, m, v, axis=-1, scale=g, offset=0.5),
     [rng.normal(size=(2, 3)), rng.normal(size=3), rng.uniform(0.5, 2, 3), rng.normal(size=3)]),
    ("normalize", ops.normalize, rng.normal(size=(2, 3))),
    ("normalize order 3", lambda x: ops.normalize(x, order=3), rng.uniform(0.3, 2, (2, 3))),
    ("rms_normalization", ops.rms_normalization, rng.normal(size=(2, 3))),
    ("layer_normalization", ops.layer_normalization, rng.normal(size=(2, 3))),
    ("dot_product_attention", lambda q, k: ops.dot_product_attention(q, k, k, is_causal=True),
     [rng.normal(size=(1, 2, 1, 2)), rng.normal(size=(1, 2, 1, 2))]),
]


@pytest.mark.parametrize("name, f, x", NORMALIZATION_CASES, ids=[c[0] for c in NORMALIZATION_CASES])
def test_normalization_derivatives(name, f, x):
    xs = x if isinstance(x, list) else [x]
    check_gradients(f, *xs)
    check_gradients(vjp_fn(f), *xs, atol=1e-5, rtol=1e-4, allow_none=True)


def test_softmax_jacobian_over_two_axes():
    check_jacobian(lambda x: ops.reshape(ops.softmax(x, (0, 1)), (-1,)), rng.normal(size=(2, 3)))


# ------------------------------------------------------------------ errors ---
@pytest.mark.parametrize("call, message", [
    (lambda: ops.binary_crossentropy(np.ones((2, 3)), np.ones((3, 2)) / 2), "must have the same shape"),
    (lambda: ops.categorical_crossentropy(np.ones((2, 3)), np.ones((2, 4)) / 4), "must have the same shape"),
    (lambda: ops.sparse_categorical_crossentropy(np.array([0, 1, 2]), np.ones((2, 4)) / 4),
     "must have the same shape up until the last dimension"),
    (lambda: ops.sparse_categorical_crossentropy(np.array([0, 1]), np.ones((2, 4)) / 4, axis=0),
     "Only axis=-1 is currently supported"),
    (lambda: ops.normalize(np.ones(3), order=0), "Argument `order` must be an int >= 1"),
    (lambda: ops.one_hot(np.array([True]), 3), "class indices must be integers or floats"),
    (lambda: ops.glu(np.ones((2, 3))), "must have an even size"),
    (lambda: ops.batch_normalization(np.ones((2, 3)), np.ones(2), np.ones(2), axis=-1), "do not match axis 1"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def test_a_layer_written_with_ops_trains_on_its_variables():
    import tapeflow.keras as keras

    class SoftmaxRegression(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="glorot_uniform")
            self.b = self.add_weight(shape=(2,), initializer="zeros")

        def call(self, x):
            return ops.softmax(ops.matmul(x, self.w) + self.b)

    layer = SoftmaxRegression()
    x = rng.normal(size=(8, 3)).astype("float32")
    y = np.eye(2, dtype="float32")[np.arange(8) % 2]
    with tf.GradientTape() as tape:
        p = layer(x)
        loss = ops.mean(ops.categorical_crossentropy(y, p))
    grad_w, grad_b = tape.gradient(loss, [layer.w, layer.b])
    p_ref = np.exp(x @ layer.w.numpy())
    p_ref /= p_ref.sum(-1, keepdims=True)
    np.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-5)
    np.testing.assert_allclose(grad_w.numpy(), x.T @ (p_ref - y) / 8, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grad_b.numpy(), (p_ref - y).mean(0), rtol=1e-4, atol=1e-6)

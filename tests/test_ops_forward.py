"""Forward values against numpy formulas, dtype rules, error messages,
non-differentiable ops, numba kernels on large arrays, float16 inputs, and the
op-level gradient conventions TensorFlow has (ties, kinks, zeros)."""
import math

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import array_ops, nn_ops, reduction_ops

rng = np.random.default_rng(5)
_erf = np.vectorize(math.erf)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def r(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def np_selu(x):
    return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))


FORWARD = []


def fwd(name, tf_fn, np_fn, *inputs):
    FORWARD.append(pytest.param(tf_fn, np_fn, inputs, id=name))


_a, _b = r(3, 1), r(1, 4)
fwd("add", tf.add, np.add, _a, _b)
fwd("subtract", tf.subtract, np.subtract, _a, _b)
fwd("multiply", tf.multiply, np.multiply, _a, _b)
fwd("divide", tf.divide, np.divide, _a, pos(1, 4))
fwd("pow", tf.pow, np.power, pos(2, 3), r(2, 3))
fwd("square", tf.square, np.square, r(5))
fwd("sqrt", tf.sqrt, np.sqrt, pos(5))
fwd("rsqrt", tf.math.rsqrt, lambda x: 1 / np.sqrt(x), pos(5))
fwd("exp", tf.exp, np.exp, r(5))
fwd("log", tf.math.log, np.log, pos(5))
fwd("log1p", tf.math.log1p, np.log1p, pos(5))
fwd("sin", tf.sin, np.sin, r(5))
fwd("cos", tf.cos, np.cos, r(5))
fwd("tan", tf.tan, np.tan, r(5, lo=-1, hi=1))
fwd("tanh", tf.tanh, np.tanh, r(5))
fwd("abs", tf.abs, np.abs, r(5))
fwd("sign", tf.sign, np.sign, np.array([-2.0, 0.0, 3.0]))
fwd("negative", tf.negative, np.negative, r(5))
fwd("reciprocal", tf.math.reciprocal, np.reciprocal, pos(5))
fwd("maximum", tf.maximum, np.maximum, _a, _b)
fwd("minimum", tf.minimum, np.minimum, _a, _b)
fwd("round_half_to_even", tf.round, np.round, np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.7]))
fwd("floor", tf.floor, np.floor, r(5))
fwd("ceil", tf.math.ceil, np.ceil, r(5))
fwd("erf", tf.math.erf, _erf, r(5))
fwd("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0), r(6))
fwd("clip_by_norm", lambda x: tf.clip_by_norm(x, 1.0), lambda x: x / max(1.0, np.linalg.norm(x)), r(2, 3) * 3)
fwd("clip_by_norm_small", lambda x: tf.clip_by_norm(x, 10.0), lambda x: x, r(2, 3))
fwd("clip_by_norm_axes", lambda x: tf.clip_by_norm(x, 1.0, axes=[1]),
    lambda x: x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True)), r(3, 2) * 2)
fwd("matmul", tf.matmul, np.matmul, r(2, 3), r(3, 4))
fwd("matmul_transposes", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
    lambda a, b: a.T @ b.T, r(3, 2), r(4, 3))
fwd("matmul_batch_broadcast", tf.matmul, np.matmul, r(2, 1, 2, 3), r(3, 3, 2))
fwd("einsum_bxby", lambda x: tf.einsum("bxby->bxy", x), lambda x: np.einsum("bxby->bxy", x), r(2, 3, 2, 4))
fwd("einsum_trace", lambda x: tf.einsum("ii->", x), np.trace, r(3, 3))
fwd("einsum_ellipsis", lambda a, b: tf.einsum("...ij,...jk->...ik", a, b), np.matmul, r(2, 2, 3), r(3, 2))
fwd("einsum_implicit", lambda a, b: tf.einsum("ij,jk", a, b), np.matmul, r(2, 3), r(3, 2))
fwd("tensordot", lambda a, b: tf.tensordot(a, b, axes=[[1, 2], [0, 1]]),
    lambda a, b: np.tensordot(a, b, axes=[[1, 2], [0, 1]]), r(2, 3, 2), r(3, 2, 4))
fwd("tensordot_outer", lambda a, b: tf.tensordot(a, b, 0), np.multiply.outer, r(2), r(3))
for _name, _tf, _np in [("sum", tf.reduce_sum, np.sum), ("mean", tf.reduce_mean, np.mean),
                        ("max", tf.reduce_max, np.max), ("min", tf.reduce_min, np.min),
                        ("prod", tf.reduce_prod, np.prod)]:
    for _axis in [None, 1, -1, (0, 2)]:
        for _keep in (False, True):
            fwd(f"reduce_{_name}_{_axis}_{_keep}",
                (lambda f, a, k: lambda x: f(x, axis=a, keepdims=k))(_tf, _axis, _keep),
                (lambda f, a, k: lambda x: f(x, axis=a, keepdims=k))(_np, _axis, _keep), r(2, 3, 2))
fwd("reduce_logsumexp", lambda x: tf.reduce_logsumexp(x, axis=1),
    lambda x: np.log(np.exp(x).sum(axis=1)), r(2, 3))
fwd("reduce_logsumexp_keepdims", lambda x: tf.reduce_logsumexp(x, keepdims=True),
    lambda x: np.log(np.exp(x).sum(keepdims=True)), r(2, 3))
fwd("reduce_logsumexp_large", lambda x: tf.reduce_logsumexp(x, axis=0),
    lambda x: x.max(0) + np.log(np.exp(x - x.max(0)).sum(0)), np.array([[1000.0, -1000.0], [999.0, -1001.0]]))
fwd("norm", tf.norm, lambda x: np.linalg.norm(x.ravel()), r(2, 3))
fwd("norm_axis", lambda x: tf.norm(x, axis=0, keepdims=True), lambda x: np.linalg.norm(x, axis=0, keepdims=True), r(2, 3))
fwd("norm_1", lambda x: tf.norm(x, ord=1), lambda x: np.abs(x).sum(), r(4))
fwd("norm_inf", lambda x: tf.norm(x, ord=np.inf), lambda x: np.abs(x).max(), r(4))
fwd("norm_3", lambda x: tf.norm(x, ord=3), lambda x: np.sum(np.abs(x) ** 3) ** (1 / 3), r(4))
fwd("norm_fro", lambda x: tf.norm(x, ord="fro", axis=[0, 1]), lambda x: np.linalg.norm(x, "fro"), r(2, 3))
fwd("norm_matrix_1", lambda x: tf.norm(x, ord=1, axis=[0, 1]), lambda x: np.linalg.norm(x, 1), r(3, 3))
fwd("norm_matrix_inf", lambda x: tf.norm(x, ord=np.inf, axis=[0, 1]), lambda x: np.linalg.norm(x, np.inf), r(3, 3))
fwd("norm_matrix_2", lambda x: tf.norm(x, ord=2, axis=[0, 1]), lambda x: np.linalg.norm(x, 2), r(3, 2))
fwd("norm_matrix_batched_axes", lambda x: tf.norm(x, ord=1, axis=[2, 0], keepdims=True),
    lambda x: np.abs(x).sum(axis=2, keepdims=True).max(axis=0, keepdims=True), r(2, 3, 4))
fwd("reshape", lambda x: tf.reshape(x, [3, -1]), lambda x: x.reshape(3, -1), r(2, 3))
fwd("transpose", lambda x: tf.transpose(x, [2, 0, 1]), lambda x: x.transpose(2, 0, 1), r(2, 3, 4))
fwd("concat", lambda a, b: tf.concat([a, b], axis=-1), lambda a, b: np.concatenate([a, b], -1), r(2, 2), r(2, 3))
fwd("stack", lambda a, b: tf.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1), r(2, 3), r(2, 3))
fwd("pad_constant", lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=7.0),
    lambda x: np.pad(x, [[1, 0], [0, 2]], constant_values=7.0), r(2, 3))
fwd("pad_reflect", lambda x: tf.pad(x, [[2, 1], [1, 2]], mode="REFLECT"),
    lambda x: np.pad(x, [[2, 1], [1, 2]], mode="reflect"), r(3, 4))
fwd("pad_symmetric", lambda x: tf.pad(x, [[2, 1], [1, 3]], mode="SYMMETRIC"),
    lambda x: np.pad(x, [[2, 1], [1, 3]], mode="symmetric"), r(3, 4))
fwd("gather", lambda x: tf.gather(x, [[2, 0], [1, 1]], axis=1), lambda x: x[:, [[2, 0], [1, 1]]], r(2, 3))
fwd("squeeze", tf.squeeze, np.squeeze, r(1, 3, 1))
fwd("expand_dims", lambda x: tf.expand_dims(x, -2), lambda x: x[:, None, :], r(2, 3))
fwd("tile", lambda x: tf.tile(x, [2, 3]), lambda x: np.tile(x, [2, 3]), r(2, 2))
fwd("broadcast_to", lambda x: tf.broadcast_to(x, [2, 3, 4]), lambda x: np.broadcast_to(x, (2, 3, 4)), r(3, 1))
fwd("slices", lambda x: x[1:, None, ::-2, ..., 0], lambda x: x[1:, None, ::-2, ..., 0], r(3, 4, 2))
fwd("slice_negative", lambda x: x[-1, -3:], lambda x: x[-1, -3:], r(3, 4))
fwd("relu", tf.nn.relu, lambda x: np.maximum(x, 0), r(6))
fwd("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), r(6) * 5)
fwd("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), r(6))
fwd("selu", tf.nn.selu, np_selu, r(6))
fwd("gelu", tf.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), r(6))
fwd("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), np_gelu_tanh, r(6))
fwd("leaky_relu", tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), r(6))
fwd("leaky_relu_alpha", lambda x: tf.nn.leaky_relu(x, alpha=0.05), lambda x: np.where(x > 0, x, 0.05 * x), r(6))
fwd("sigmoid", tf.nn.sigmoid, np_sigmoid, r(6))
fwd("sigmoid_extreme", tf.nn.sigmoid, np_sigmoid, np.array([-800.0, -40.0, 0.0, 40.0, 800.0]))
fwd("softplus", tf.nn.softplus, lambda x: np.logaddexp(0, x), np.array([-800.0, -3.0, 0.0, 2.0, 800.0]))
fwd("softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x)), r(6))
fwd("softmax", tf.nn.softmax, np_softmax, r(3, 4))
fwd("softmax_axis0", lambda x: tf.nn.softmax(x, axis=0), lambda x: np_softmax(x, 0), r(3, 4))
fwd("softmax_large", tf.nn.softmax, np_softmax, np.array([[1000.0, 0.0, -1000.0]]))
fwd("log_softmax", tf.nn.log_softmax, np_log_softmax, r(3, 4))
fwd("log_softmax_axis1_of_3", lambda x: tf.nn.log_softmax(x, axis=1), lambda x: np_log_softmax(x, 1), r(2, 3, 2))
fwd("softmax_xent", lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(lab, lg),
    lambda lab, lg: -(lab * np_log_softmax(lg)).sum(-1), rng.dirichlet(np.ones(4), size=3), r(3, 4))
fwd("softmax_xent_axis0", lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(lab, lg, axis=0),
    lambda lab, lg: -(lab * np_log_softmax(lg, 0)).sum(0), rng.dirichlet(np.ones(3), size=2).T, r(3, 2))
fwd("sparse_softmax_xent", lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([3, 0, 1]), lg),
    lambda lg: -np_log_softmax(lg)[np.arange(3), [3, 0, 1]], r(3, 4))
fwd("sigmoid_xent", lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
    lambda z, x: -z * np.log(np_sigmoid(x)) - (1 - z) * np.log(1 - np_sigmoid(x)), rng.uniform(0, 1, 5), r(5))
fwd("l2_loss", tf.nn.l2_loss, lambda x: np.sum(x ** 2) / 2, r(2, 3))
fwd("moments_mean", lambda x: tf.nn.moments(x, axes=[0])[0], lambda x: x.mean(0), r(4, 3))
fwd("moments_variance", lambda x: tf.nn.moments(x, axes=[0, 1], keepdims=True)[1],
    lambda x: x.var(axis=(0, 1), keepdims=True), r(4, 3))
fwd("solve", tf.linalg.solve, np.linalg.solve, r(3, 3) + 3 * np.eye(3), r(3, 2))
fwd("inv", tf.linalg.inv, np.linalg.inv, r(2, 3, 3) + 3 * np.eye(3))
fwd("det", tf.linalg.det, np.linalg.det, r(2, 3, 3))
fwd("slogdet_sign", lambda x: tf.linalg.slogdet(x)[0], lambda x: np.linalg.slogdet(x)[0], r(2, 3, 3))
fwd("slogdet_logabs", lambda x: tf.linalg.slogdet(x)[1], lambda x: np.linalg.slogdet(x)[1], r(2, 3, 3))
fwd("logdet_large", tf.linalg.logdet, lambda x: np.linalg.slogdet(x)[1], np.eye(40) * 1e9 + 0.1)
fwd("matvec", tf.linalg.matvec, lambda a, b: a @ b, r(2, 3), r(3))
fwd("diag_part", tf.linalg.diag_part, lambda x: np.diagonal(x, axis1=-2, axis2=-1), r(2, 3, 3))
fwd("diag_part_nonsquare", tf.linalg.diag_part, lambda x: np.diagonal(x), r(2, 4))
fwd("trace", tf.linalg.trace, lambda x: np.trace(x, axis1=-2, axis2=-1), r(2, 3, 3))


@pytest.mark.parametrize("tf_fn, np_fn, inputs", FORWARD)
def test_forward_matches_numpy(tf_fn, np_fn, inputs):
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        arrays = [np.asarray(a, dtype) for a in inputs]
        y = tf_fn(*[tf.constant(a) for a in arrays])
        expected = np_fn(*[a.astype(np.float64) for a in arrays])
        assert y.dtype == tf.as_dtype(dtype.__name__), f"{y.dtype} for {dtype.__name__} inputs"
        np.testing.assert_allclose(y.numpy(), expected, rtol=rtol, atol=rtol)


# -------------------------------------------------------------- int / bool ops ---
def test_integer_and_bool_forward_values():
    a = tf.constant([[3, -7], [8, 1]])
    assert a.dtype == tf.int32
    np.testing.assert_array_equal(tf.argmax(a).numpy(), [1, 1])
    np.testing.assert_array_equal(tf.argmax(a, axis=1, output_type=tf.int32).numpy(), [0, 0])
    np.testing.assert_array_equal(tf.argmin(a, axis=-1).numpy(), [1, 1])
    assert tf.argmax(a).dtype == tf.int64
    np.testing.assert_array_equal(tf.equal(a, 1).numpy(), [[False, False], [False, True]])
    np.testing.assert_array_equal(tf.less(a, 2).numpy(), [[False, True], [False, True]])
    np.testing.assert_array_equal(tf.greater(a, tf.constant([2, 0])).numpy(), [[True, False], [True, True]])
    # Integer mean truncates toward zero, as TensorFlow (C integer division).
    np.testing.assert_array_equal(tf.reduce_mean(tf.constant([-3, -4]), keepdims=True).numpy(), [-3])
    np.testing.assert_array_equal(tf.reduce_mean(tf.constant([[-1, -2], [3, 4]]), axis=1).numpy(), [-1, 3])
    assert tf.reduce_sum(a).dtype == tf.int32
    assert tf.reduce_prod(a, axis=0).dtype == tf.int32
    assert tf.math.cumsum(a).dtype == tf.int32
    # Integer division by tf.divide gives float64, as tf.math.divide (truediv).
    q = tf.divide(tf.constant([7, -7]), 2)
    assert q.dtype == tf.float64
    np.testing.assert_array_equal(q.numpy(), [3.5, -3.5])
    np.testing.assert_array_equal((tf.constant([7, -7]) // 2).numpy(), [3, -4])
    np.testing.assert_array_equal(tf.math.reciprocal(tf.constant([1, -1, 2])).numpy(), [1, -1, 0])


def test_one_hot_and_where():
    oh = tf.one_hot([0, 2, -1, 5], 3)
    assert oh.dtype == tf.float32
    np.testing.assert_array_equal(oh.numpy(), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    oh = tf.one_hot([1, 0], 2, on_value=5, off_value=-1, axis=0)
    assert oh.dtype == tf.int32
    np.testing.assert_array_equal(oh.numpy(), [[-1, 5], [5, -1]])
    w = tf.where(tf.constant([True, False, True]), tf.constant([1.0, 2.0, 3.0]), 0.5)
    np.testing.assert_array_equal(w.numpy(), [1.0, 0.5, 3.0])
    np.testing.assert_array_equal(tf.where(tf.constant([[True, False], [False, True]])).numpy(), [[0, 0], [1, 1]])


def test_gather_batch_dims_values():
    params = rng.uniform(-1, 1, (2, 3, 4, 5))
    idx = np.array([[[0, 3], [1, 1]], [[2, 2], [3, 0]]])
    for axis in (1, 2, 3):
        got = tf.gather(tf.constant(params), tf.constant(np.minimum(idx, params.shape[axis] - 1)), axis=axis,
                        batch_dims=1)
        ids = np.minimum(idx, params.shape[axis] - 1)
        expected = np.stack([np.take(params[i], ids[i], axis=axis - 1) for i in range(2)])
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected)
    two = tf.gather(tf.constant(params[:, :, :2]), tf.constant(rng.integers(0, 2, (2, 3, 2))), batch_dims=2)
    assert two.shape == (2, 3, 2, 5)
    with pytest.raises(InvalidArgumentError, match=r"gather: indices\[1\]\[0\] = 3 is not in \[0, 3\)"):
        tf.gather(tf.ones([2, 3]), [[0, 1], [3, 0]], batch_dims=1)


def test_empty_tensors():
    assert tf.nn.softmax(tf.zeros([2, 0])).shape == (2, 0)
    assert tf.nn.log_softmax(tf.zeros([0, 3])).shape == (0, 3)
    np.testing.assert_array_equal(
        tf.nn.softmax_cross_entropy_with_logits(labels=tf.zeros([2, 0]), logits=tf.zeros([2, 0])).numpy(), [0.0, 0.0])
    assert tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([0], tf.int32),
                                                          logits=tf.zeros([0, 3])).shape == (0,)
    assert tf.nn.relu(tf.zeros([0, 4])).shape == (0, 4)
    np.testing.assert_array_equal(tf.reduce_sum(tf.zeros([0, 3]), axis=0).numpy(), [0.0, 0.0, 0.0])
    assert tf.matmul(tf.ones([2, 0]), tf.ones([0, 3])).numpy().tolist() == [[0.0] * 3] * 2


def test_unstack_split_values():
    x = np.arange(12.0).reshape(3, 4)
    parts = tf.unstack(tf.constant(x), axis=1)
    assert len(parts) == 4
    np.testing.assert_array_equal(parts[2].numpy(), x[:, 2])
    a, b, c = tf.split(tf.constant(x), [1, -1, 2], axis=1)
    np.testing.assert_array_equal(b.numpy(), x[:, 1:2])
    np.testing.assert_array_equal(c.numpy(), x[:, 2:])
    halves = tf.split(tf.constant(x), 2, axis=1)
    np.testing.assert_array_equal(halves[1].numpy(), x[:, 2:])


def test_dropout_values():
    x = tf.ones([200, 50])
    tf.random.set_seed(1)
    y = tf.nn.dropout(x, rate=0.25, seed=4).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    tf.random.set_seed(1)
    np.testing.assert_array_equal(tf.nn.dropout(x, rate=0.25, seed=4).numpy(), y)
    same_row = tf.nn.dropout(x, rate=0.5, noise_shape=[200, 1]).numpy()
    assert np.all(same_row == same_row[:, :1])
    np.testing.assert_array_equal(tf.nn.dropout(x, rate=0.0).numpy(), x.numpy())


# ------------------------------------------------------------------ dtypes ---
def test_python_scalars_default_dtypes():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(2).dtype == tf.int32
    assert tf.add(1.5, 2).dtype == tf.float32
    assert tf.add(1.5, 2).numpy() == 3.5
    assert tf.multiply(2, 3).dtype == tf.int32


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64, tf.int32, tf.int64])
def test_python_scalars_adopt_the_tensor_dtype(dtype):
    x = tf.constant([1, 2], dtype=dtype)
    for y in (x + 1, 1 + x, x * 2, 2 * x, x - 1, 3 - x, tf.maximum(x, 1), tf.pow(x, 2), x ** 2):
        assert y.dtype == dtype
    if dtype.is_floating:
        assert (x * 0.5).dtype == dtype
        assert (x / 2).dtype == dtype
        np.testing.assert_allclose((x * 0.5).numpy(), [0.5, 1.0])


def test_int_tensor_with_fractional_python_float_is_refused():
    with pytest.raises(TypeError, match="int32"):
        tf.constant([1, 2]) * 0.5


@pytest.mark.parametrize("fn, op", [
    (tf.add, "AddV2"), (tf.subtract, "Sub"), (tf.multiply, "Mul"), (tf.divide, "RealDiv"), (tf.pow, "Pow"),
    (tf.maximum, "Maximum"), (tf.minimum, "Minimum"), (tf.matmul, "MatMul"), (tf.equal, "Equal"),
    (lambda a, b: a + b, "AddV2"), (lambda a, b: a @ b, "MatMul"),
])
def test_mixed_float32_float64_names_the_op(fn, op):
    a = tf.constant([[1.0]], tf.float32)
    b = tf.constant([[1.0]], tf.float64)
    with pytest.raises(InvalidArgumentError, match=rf"expected to be a float tensor but is a double tensor \[Op:{op}\]"):
        fn(a, b)


def test_mixed_dtypes_in_other_ops():
    a32, a64 = tf.constant([1.0]), tf.constant([1.0], tf.float64)
    with pytest.raises(InvalidArgumentError, match="concat: input 1 has dtype float64"):
        tf.concat([a32, a64], 0)
    with pytest.raises(InvalidArgumentError, match="einsum"):
        tf.einsum("i,i->", a32, a64)
    with pytest.raises(InvalidArgumentError, match="stack: values.1. has dtype float64, values.0. has float32"):
        tf.stack([a32, a64])
    # Python values adopt the tensors' dtype.
    assert tf.stack([2.0, a64[0]]).dtype == tf.float64
    assert tf.concat([[2.0], a64], 0).dtype == tf.float64
    with pytest.raises(InvalidArgumentError, match="SelectV2"):
        tf.where(tf.constant([True]), a32, a64)


# ------------------------------------------------------------------ errors ---
def test_matmul_incompatible_shapes_message():
    a = tf.ones([2, 3])
    with pytest.raises(InvalidArgumentError, match=r"^matmul: incompatible shapes \(2, 3\) and \(2, 3\)"):
        tf.matmul(a, a)
    with pytest.raises(InvalidArgumentError, match=r"matmul: batch dimensions of \(2, 2, 3\) and \(3, 3, 2\)"):
        tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 3, 2]))
    with pytest.raises(InvalidArgumentError, match="rank >= 2"):
        tf.matmul(tf.ones([3]), tf.ones([3, 2]))
    tf.matmul(a, a, transpose_b=True)  # fine


def test_elementwise_incompatible_shapes_message():
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\] \[Op:AddV2\]"):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2, 3\] vs. \[2\] \[Op:Mul\]"):
        tf.ones([2, 3]) * tf.ones([2])
    with pytest.raises(InvalidArgumentError, match="where: condition of shape"):
        tf.where(tf.constant([True, False, True]), tf.ones([2]), 0.0)


def test_gather_out_of_range_message():
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with pytest.raises(InvalidArgumentError, match=r"gather: indices\[1\] = 5 is not in \[0, 3\)"):
        tf.gather(params, [0, 5])
    with pytest.raises(InvalidArgumentError, match=r"indices\[0\]\[1\] = -1 is not in \[0, 2\)"):
        tf.gather(params, [[0, -1]], axis=1)
    with pytest.raises(InvalidArgumentError, match="gather: indices must be integers"):
        tf.gather(params, [0.0])
    with pytest.raises(InvalidArgumentError, match="gather: axis 2 is out of bounds for a tensor of rank 2"):
        tf.gather(params, [0], axis=2)


def test_shape_errors_name_the_problem():
    x = tf.ones([2, 3])
    with pytest.raises(InvalidArgumentError, match=r"^Input to reshape is a tensor with 6 values, but the requested shape has 4 \[Op:Reshape\]$"):
        tf.reshape(x, [4])
    with pytest.raises(InvalidArgumentError, match=r"reduce_sum: axis 2 is out of bounds for a tensor of rank 2 \(valid axes are -2 to 1\)"):
        tf.reduce_sum(x, axis=2)
    with pytest.raises(InvalidArgumentError, match="reduce_max: axis -3 is out of bounds"):
        tf.reduce_max(x, axis=[0, -3])
    with pytest.raises(InvalidArgumentError, match="argmax: axis 5 is out of bounds"):
        tf.argmax(x, axis=5)
    with pytest.raises(InvalidArgumentError, match="transpose: perm"):
        tf.transpose(x, [0, 0])
    with pytest.raises(InvalidArgumentError, match=r"concat: input 1 has shape \(3, 3\)"):
        tf.concat([x, tf.ones([3, 3])], axis=1)
    with pytest.raises(InvalidArgumentError, match="stack: shapes of all inputs must match"):
        tf.stack([x, tf.ones([3, 2])])
    with pytest.raises(InvalidArgumentError, match="split: dimension 1 of size 3 is not divisible into 2"):
        tf.split(x, 2, axis=1)
    with pytest.raises(InvalidArgumentError, match="split: sizes"):
        tf.split(x, [1, 1], axis=1)
    with pytest.raises(InvalidArgumentError, match="squeeze: cannot squeeze axis 1 of size 3"):
        tf.squeeze(x, axis=1)
    with pytest.raises(InvalidArgumentError, match="expand_dims: axis 4"):
        tf.expand_dims(x, 4)
    with pytest.raises(InvalidArgumentError, match="tile: multiples has length 1 but the input has rank 2"):
        tf.tile(x, [2])
    with pytest.raises(InvalidArgumentError, match=r"broadcast_to: cannot broadcast shape \(2, 3\) to \(4, 3\)"):
        tf.broadcast_to(x, [4, 3])
    with pytest.raises(InvalidArgumentError, match=r"pad: paddings must have shape \[2, 2\]"):
        tf.pad(x, [[1, 1]])
    with pytest.raises(ValueError, match="pad: unknown mode 'WRAP'"):
        tf.pad(x, [[1, 1], [0, 0]], mode="WRAP")
    with pytest.raises(InvalidArgumentError, match=r"pad: REFLECT paddings of axis 1 must be less than the dimension size 3"):
        tf.pad(x, [[1, 1], [0, 3]], mode="REFLECT")
    with pytest.raises(InvalidArgumentError, match=r"pad: SYMMETRIC paddings of axis 0 must be at most"):
        tf.pad(x, [[3, 0], [0, 0]], mode="SYMMETRIC")
    tf.pad(x, [[2, 2], [3, 3]], mode="SYMMETRIC")  # edge sizes are allowed
    with pytest.raises(InvalidArgumentError, match=r"unsorted_segment_sum: segment id 4 is out of range \[0, 2\)"):
        tf.math.unsorted_segment_sum(x, tf.constant([0, 4]), 2)
    with pytest.raises(InvalidArgumentError, match="unstack: num=3 but axis 0 has size 2"):
        tf.unstack(x, num=3)
    with pytest.raises(InvalidArgumentError, match="slice index out of bounds"):
        x[5]
    with pytest.raises(InvalidArgumentError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(InvalidArgumentError, match="einsum: equation 'ij,jk->ik' names 2 inputs but 1 were given"):
        tf.einsum("ij,jk->ik", x)
    with pytest.raises(InvalidArgumentError, match="einsum: dimension 'j' has size 3 in one input and 2"):
        tf.einsum("ij,jk->ik", x, x)
    with pytest.raises(InvalidArgumentError, match=r"tensordot: axis 1 of \(2, 3\) and axis 0 of \(2, 3\) differ"):
        tf.tensordot(x, x, 1)
    with pytest.raises(InvalidArgumentError, match="tensordot: axis 2 is out of bounds for a tensor of rank 2"):
        tf.tensordot(x, x, [[2], [0]])
    with pytest.raises(InvalidArgumentError, match="tensordot: axes=3 must be between 0 and the smaller rank 2"):
        tf.tensordot(x, x, 3)


def test_nn_and_linalg_errors():
    with pytest.raises(InvalidArgumentError, match=r"Received a label value of 4 which is outside the valid range of \[0, 3\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 4], logits=tf.ones([2, 3]))
    with pytest.raises(InvalidArgumentError, match="labels shape"):
        tf.nn.softmax_cross_entropy_with_logits(labels=tf.ones([2, 2]), logits=tf.ones([2, 3]))
    with pytest.raises(InvalidArgumentError, match="sigmoid_cross_entropy_with_logits: logits and labels must have the same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2]), logits=tf.ones([3]))
    with pytest.raises(ValueError, match=r"dropout: rate must be .* in the range \[0, 1\)"):
        tf.nn.dropout(tf.ones([2]), rate=1.0)
    with pytest.raises(InvalidArgumentError, match="softmax needs a floating-point tensor"):
        tf.nn.softmax(tf.constant([1, 2]))
    with pytest.raises(InvalidArgumentError, match=r"inv: input must be a square matrix .* got shape \(2, 3\)"):
        tf.linalg.inv(tf.ones([2, 3]))
    with pytest.raises(InvalidArgumentError, match="Input is not invertible"):
        tf.linalg.inv(tf.ones([2, 2]))
    with pytest.raises(InvalidArgumentError, match=r"solve: rhs must have shape \[..., 2, K\]"):
        tf.linalg.solve(tf.eye(2), tf.ones([3, 1]))
    with pytest.raises(InvalidArgumentError, match="det: input must be a square matrix"):
        tf.linalg.det(tf.ones([3]))


@pytest.mark.parametrize("fn, name", [(tf.exp, "exp"), (tf.math.log, "log"), (tf.sqrt, "sqrt"), (tf.sin, "sin"),
                                      (tf.tanh, "tanh"), (tf.math.rsqrt, "rsqrt"), (tf.math.log1p, "log1p")])
def test_float_only_math_refuses_integers(fn, name):
    with pytest.raises(InvalidArgumentError, match=rf"^{name}: expected a floating-point or complex tensor, got int32"):
        fn(tf.constant([1, 2]))


# ------------------------------------------------------- non-differentiable ---
@pytest.mark.parametrize("fn", [
    pytest.param(lambda x: tf.argmax(x), id="argmax"),
    pytest.param(lambda x: tf.argmin(x, axis=0), id="argmin"),
    pytest.param(lambda x: tf.equal(x, 1.0), id="equal"),
    pytest.param(lambda x: tf.less(x, 1.0), id="less"),
    pytest.param(lambda x: tf.greater(x, 1.0), id="greater"),
    pytest.param(lambda x: tf.floor(x), id="floor"),
    pytest.param(lambda x: tf.math.ceil(x), id="ceil"),
    pytest.param(lambda x: tf.round(x), id="round"),
    pytest.param(lambda x: tf.one_hot(tf.cast(x, tf.int32), 3), id="one_hot"),
    pytest.param(lambda x: tf.cast(x, tf.int32), id="cast_to_int"),
    pytest.param(lambda x: tf.stop_gradient(x), id="stop_gradient"),
])
def test_non_differentiable_ops_give_none(fn):
    x = tf.constant([0.4, 1.6, 2.2])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = fn(x)
        z = tf.cast(y, tf.float32) * x if y.dtype != tf.float32 else y * 1.0
    assert tape.gradient(y, x) is None
    zero = tape.gradient(y, x, unconnected_gradients="zero")
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0, 0.0])
    # Used as a factor, only the other factor's path contributes.
    if y.dtype != tf.float32:
        np.testing.assert_allclose(tape.gradient(z, x).numpy(), tf.cast(y, tf.float32).numpy())


def test_sign_gradient_is_zeros():
    x = tf.constant([-2.0, 0.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sign(x)
    g = tape.gradient(y, x)
    assert g is not None
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])


# ------------------------------------------------- TensorFlow's conventions ---
def _grad(fn, value, dtype=tf.float32):
    x = tf.constant(value, dtype)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


def test_reduce_max_min_ties_split_evenly():
    np.testing.assert_array_equal(_grad(tf.reduce_max, [0.0, 1.0, 1.0]), [0.0, 0.5, 0.5])
    np.testing.assert_allclose(_grad(tf.reduce_min, [2.0, 2.0, 2.0, 3.0]), [1 / 3, 1 / 3, 1 / 3, 0.0], rtol=1e-7)
    np.testing.assert_array_equal(_grad(lambda x: tf.reduce_max(x, axis=1), [[1.0, 1.0], [0.0, 2.0]]),
                                  [[0.5, 0.5], [0.0, 1.0]])
    np.testing.assert_array_equal(_grad(lambda x: tf.reduce_max(x, axis=0, keepdims=True), [[3.0, 1.0], [3.0, 2.0]]),
                                  [[0.5, 0.0], [0.5, 1.0]])


def test_maximum_minimum_ties_go_to_the_first_argument():
    x, y = tf.constant([1.0, 2.0]), tf.constant([1.0, 1.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        mx, mn = tf.maximum(x, y), tf.minimum(x, y)
    gx, gy = tape.gradient(mx, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0])
    gx, gy = tape.gradient(mn, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 1.0])


def test_gradients_at_kinks():
    zero = [0.0]
    assert _grad(tf.abs, zero) == [0.0]
    assert _grad(tf.nn.relu, zero) == [0.0]
    assert _grad(tf.nn.relu6, [0.0, 6.0]).tolist() == [0.0, 0.0]
    assert _grad(tf.nn.leaky_relu, zero) == [np.float32(0.2)]
    assert _grad(tf.nn.elu, zero) == [1.0]
    np.testing.assert_allclose(_grad(tf.nn.selu, zero), [SELU_SCALE], rtol=1e-6)
    assert _grad(lambda x: tf.clip_by_value(x, 0.0, 1.0), [0.0, 1.0]).tolist() == [1.0, 1.0]
    # sqrt at 0 with a zero upstream gradient is 0, so where() masking works.
    assert _grad(lambda x: tf.where(x > 0, tf.sqrt(x), 0.0), zero) == [0.0]
    assert _grad(lambda x: tf.sqrt(x) * 0.0, zero) == [0.0]
    assert _grad(tf.sqrt, zero) == [np.inf]
    # sigmoid_cross_entropy_with_logits at logits == 0: sigmoid(0) - labels.
    np.testing.assert_allclose(
        _grad(lambda x: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([0.0, 1.0, 0.25]), logits=x),
              [0.0, 0.0, 0.0]), [0.5, -0.5, 0.25])
    # reduce_prod with zeros: the product of the other elements.
    np.testing.assert_array_equal(_grad(tf.reduce_prod, [0.0, 2.0, 3.0]), [6.0, 0.0, 0.0])
    np.testing.assert_array_equal(_grad(tf.reduce_prod, [0.0, 2.0, 0.0]), [0.0, 0.0, 0.0])


def test_gather_gradient_sums_duplicates():
    np.testing.assert_array_equal(_grad(lambda x: tf.gather(x, [2, 0, 2, 2]), [1.0, 1.0, 1.0, 1.0]), [1.0, 0.0, 3.0, 0.0])


# ------------------------------------------------------------ numba kernels ---
LARGE = 12_345
_big = rng.uniform(-8, 8, LARGE)
_big_g = rng.uniform(-1, 1, LARGE)

KERNELS = [
    ("relu", tf.nn.relu, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), lambda x: ((x > 0) & (x < 6)) * 1.0),
    ("leaky_relu", tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), lambda x: np.where(x > 0, 1.0, 0.2)),
    ("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), lambda x: np.where(x > 0, 1.0, np.exp(x))),
    ("selu", tf.nn.selu, np_selu, lambda x: SELU_SCALE * np.where(x > 0, 1.0, SELU_ALPHA * np.exp(x))),
    ("sigmoid", tf.nn.sigmoid, np_sigmoid, lambda x: np_sigmoid(x) * (1 - np_sigmoid(x))),
    ("tanh", tf.tanh, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    ("softplus", tf.nn.softplus, lambda x: np.logaddexp(0, x), np_sigmoid),
    ("softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2),
    ("gelu", tf.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
     lambda x: 0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)),
    ("gelu_tanh", lambda x: tf.nn.gelu(x, approximate=True), np_gelu_tanh, None),
    ("erf", tf.math.erf, _erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
]


@pytest.mark.parametrize("fn, np_fn, np_grad", [pytest.param(*k[1:], id=k[0]) for k in KERNELS])
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_kernels_on_large_arrays(fn, np_fn, np_grad, dtype, rtol):
    x = _big.astype(dtype).reshape(15, 823)
    g = _big_g.astype(dtype).reshape(15, 823)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = fn(xt)
    assert y.dtype == tf.as_dtype(dtype.__name__) and y.shape == (15, 823)
    exact = x.astype(np.float64)
    np.testing.assert_allclose(y.numpy(), np_fn(exact), rtol=rtol, atol=rtol)
    grad = tape.gradient(y, xt, output_gradients=tf.constant(g))
    assert grad.dtype == y.dtype
    if np_grad is not None:
        np.testing.assert_allclose(grad.numpy(), g * np_grad(exact), rtol=rtol * 10, atol=rtol * 10)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_softmax_kernels_on_large_arrays(dtype, rtol):
    logits = rng.uniform(-20, 20, (1234, 17)).astype(dtype)
    labels = rng.dirichlet(np.ones(17), size=1234).astype(dtype)
    sparse = rng.integers(0, 17, 1234)
    exact = logits.astype(np.float64)
    np.testing.assert_allclose(tf.nn.softmax(logits).numpy(), np_softmax(exact), rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(tf.nn.log_softmax(logits).numpy(), np_log_softmax(exact), rtol=rtol, atol=1e-5)
    x = tf.constant(logits)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        dense = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
        sp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sparse, logits=x)
    np.testing.assert_allclose(dense.numpy(), -(labels * np_log_softmax(exact)).sum(-1), rtol=rtol * 10, atol=1e-4)
    np.testing.assert_allclose(sp.numpy(), -np_log_softmax(exact)[np.arange(1234), sparse], rtol=rtol * 10, atol=1e-4)
    np.testing.assert_allclose(tape.gradient(dense, x).numpy(), np_softmax(exact) - labels, atol=rtol * 10)
    onehot = np.eye(17)[sparse]
    np.testing.assert_allclose(tape.gradient(sp, x).numpy(), np_softmax(exact) - onehot, atol=rtol * 10)


def test_large_elementwise_and_reductions_float32():
    x = _big.astype(np.float32)
    t = tf.constant(x)
    np.testing.assert_allclose(tf.reduce_sum(t).numpy(), x.astype(np.float64).sum(), rtol=1e-4)
    np.testing.assert_allclose(tf.reduce_logsumexp(t).numpy(), np.log(np.exp(x.astype(np.float64)).sum()), rtol=1e-5)
    np.testing.assert_allclose(tf.exp(t).numpy(), np.exp(x), rtol=1e-6)


# ---------------------------------------------------------------- float16 ---
@pytest.mark.parametrize("fn, np_fn", [
    pytest.param(tf.nn.relu, lambda x: np.maximum(x, 0), id="relu"),
    pytest.param(tf.nn.sigmoid, np_sigmoid, id="sigmoid"),
    pytest.param(tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), id="elu"),
    pytest.param(tf.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), id="gelu"),
    pytest.param(tf.nn.softplus, lambda x: np.logaddexp(0, x), id="softplus"),
    pytest.param(tf.nn.softsign, lambda x: x / (1 + np.abs(x)), id="softsign"),
    pytest.param(tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), id="leaky_relu"),
    pytest.param(tf.tanh, np.tanh, id="tanh"),
    pytest.param(tf.exp, np.exp, id="exp"),
    pytest.param(tf.math.erf, _erf, id="erf"),
    pytest.param(tf.nn.softmax, np_softmax, id="softmax"),
    pytest.param(tf.nn.log_softmax, np_log_softmax, id="log_softmax"),
    pytest.param(lambda x: tf.reduce_sum(x, axis=0), lambda x: x.sum(0), id="reduce_sum"),
    pytest.param(lambda x: tf.matmul(x, x, transpose_b=True), lambda x: x @ x.T, id="matmul"),
    pytest.param(lambda x: tf.nn.moments(x, axes=[0])[1], lambda x: x.var(0), id="moments"),
    pytest.param(lambda x: x * 2 + 1, lambda x: x * 2 + 1, id="arithmetic"),
])
def test_float16_inputs(fn, np_fn):
    x16 = rng.uniform(-3, 3, (4, 5)).astype(np.float16)
    x = tf.constant(x16)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert y.dtype == tf.float16
    np.testing.assert_allclose(y.numpy().astype(np.float64), np_fn(x16.astype(np.float64)), rtol=2e-2, atol=2e-2)
    g = tape.gradient(y, x)
    assert g.dtype == tf.float16 and g.shape == x.shape
    assert np.all(np.isfinite(g.numpy()))


def test_float16_cross_entropy():
    logits = tf.constant([[1.0, 2.0, 0.5]], tf.float16)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=logits)
    assert loss.dtype == tf.float16
    np.testing.assert_allclose(float(loss.numpy()[0]), -np_log_softmax(np.array([1.0, 2.0, 0.5]))[1], rtol=1e-2)


def test_value_dependent_ops_inside_tf_function():
    """Ops whose work depends on index values stay correct when a traced function is replayed."""
    @tf.function
    def batched(p, i):
        return tf.gather(p, i, batch_dims=1)

    p = tf.constant(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(batched(p, tf.constant([[0], [2]])).numpy(), [[0.0], [5.0]])
    np.testing.assert_array_equal(batched(p, tf.constant([[1], [1]])).numpy(), [[1.0], [4.0]])

    @tf.function
    def segment_grad(x, ids):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.unsorted_segment_sum(x, ids, 2)
        return tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0]))

    x = tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(segment_grad(x, tf.constant([0, 1, -1])).numpy(), [1.0, 10.0, 0.0])
    np.testing.assert_array_equal(segment_grad(x, tf.constant([1, -1, 0])).numpy(), [10.0, 0.0, 1.0])


def test_predicates_masks_and_grids():
    x = tf.constant([1.0, np.nan, -np.inf, 0.0])
    np.testing.assert_array_equal(tf.math.is_nan(x).numpy(), [False, True, False, False])
    np.testing.assert_array_equal(tf.math.is_inf(x).numpy(), [False, False, True, False])
    np.testing.assert_array_equal(tf.math.is_finite(x).numpy(), [True, False, False, True])
    b = tf.constant([[True, False], [True, True]])
    np.testing.assert_array_equal(tf.reduce_any(b, axis=1).numpy(), [True, True])
    np.testing.assert_array_equal(tf.reduce_all(b, axis=1).numpy(), [False, True])
    assert bool(tf.reduce_all(b)) is False
    with pytest.raises(InvalidArgumentError, match="reduce_any: expected a bool tensor, got float32"):
        tf.reduce_any(tf.constant([1.0]))
    c = tf.math.count_nonzero(tf.constant([[0.0, 2.0, 3.0], [0.0, 0.0, 1.0]]), axis=1)
    assert c.dtype == tf.int64
    np.testing.assert_array_equal(c.numpy(), [2, 1])
    np.testing.assert_array_equal(tf.sequence_mask([1, 3], 4).numpy(), [[1, 0, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(tf.sequence_mask(tf.constant([2, 0]), dtype=tf.float32).numpy(), [[1, 1], [0, 0]])
    a, b2, c3 = np.arange(2.0), np.arange(3.0) + 10, np.arange(4.0) + 100
    for indexing in ("xy", "ij"):
        got = tf.meshgrid(tf.constant(a), tf.constant(b2), tf.constant(c3), indexing=indexing)
        for g, e in zip(got, np.meshgrid(a, b2, c3, indexing=indexing)):
            np.testing.assert_array_equal(g.numpy(), e)


def test_logsumexp_of_minus_infinity_inside_tf_function():
    @tf.function
    def lse(x):
        return tf.reduce_logsumexp(x, axis=1)

    np.testing.assert_allclose(lse(tf.constant([[0.0, 0.0], [1.0, 2.0]])).numpy(),
                               [np.log(2.0), np.log(np.e + np.e ** 2)], rtol=1e-6)
    np.testing.assert_array_equal(lse(tf.constant([[-np.inf, -np.inf], [1000.0, 1000.0]])).numpy(),
                                  [-np.inf, np.float32(1000.0 + np.log(2.0))])


def test_linspace():
    np.testing.assert_allclose(tf.linspace(0.0, 1.0, 5).numpy(), np.linspace(0, 1, 5))
    got = tf.linspace(tf.constant([0.0, 10.0], tf.float64), tf.constant([1.0, 20.0], tf.float64), 4, axis=0)
    assert got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), np.linspace([0.0, 10.0], [1.0, 20.0], 4, axis=0), rtol=1e-15)
    np.testing.assert_array_equal(tf.linspace(2.0, 5.0, 1).numpy(), [2.0])
    assert tf.linspace(0.0, 3.0, 7).numpy()[-1] == 3.0


def test_ops_not_yet_exported_by_the_namespaces():
    """gather_nd, sort, argsort, top_k, log_sigmoid, reduce_euclidean_norm (in tapeflow.ops, ready to export)."""
    p = rng.uniform(-1, 1, (2, 3, 4))
    idx = np.array([[0, 2], [1, 1], [1, 0]])
    np.testing.assert_array_equal(array_ops.gather_nd(tf.constant(p), idx).numpy(), p[idx[:, 0], idx[:, 1]])
    np.testing.assert_array_equal(array_ops.gather_nd(tf.constant(p), [[[1, 2, 3]]]).numpy(), [[p[1, 2, 3]]])
    with pytest.raises(InvalidArgumentError, match=r"gather_nd: indices\[1\] = \[2, 0\] does not index"):
        array_ops.gather_nd(tf.constant(p), [[0, 0], [2, 0]])
    x = rng.uniform(-1, 1, (3, 5))
    np.testing.assert_array_equal(array_ops.sort(tf.constant(x)).numpy(), np.sort(x))
    np.testing.assert_array_equal(array_ops.sort(tf.constant(x), axis=0, direction="DESCENDING").numpy(),
                                  -np.sort(-x, axis=0))
    np.testing.assert_array_equal(array_ops.argsort(tf.constant(x)).numpy(), np.argsort(x, kind="stable"))
    values, indices = nn_ops.top_k(tf.constant([[3.0, 1.0, 2.0, 3.0], [0.0, -1.0, 5.0, 4.0]]), k=3)
    np.testing.assert_array_equal(values.numpy(), [[3.0, 3.0, 2.0], [5.0, 4.0, 0.0]])
    np.testing.assert_array_equal(indices.numpy(), [[0, 3, 2], [2, 3, 0]])
    with pytest.raises(InvalidArgumentError, match="top_k: k=5 must be between 0 and the size 4"):
        nn_ops.top_k(tf.ones([4]), 5)
    z = np.array([-800.0, -2.0, 0.0, 3.0, 800.0])
    np.testing.assert_allclose(nn_ops.log_sigmoid(tf.constant(z)).numpy(), -np.logaddexp(0, -z), rtol=1e-12)
    np.testing.assert_allclose(reduction_ops.reduce_euclidean_norm(tf.constant(x), axis=0).numpy(),
                               np.linalg.norm(x, axis=0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_matmul_with_an_inner_dimension_of_one_equals_blas_bit_for_bit(dtype, transpose_a):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(1, 7) if transpose_a else (7, 1)).astype(dtype)
    b = rng.normal(size=(1, 5)).astype(dtype)
    out = tf.matmul(a, b, transpose_a=transpose_a).numpy()
    np.testing.assert_array_equal(out, np.matmul(a.T if transpose_a else a, b))

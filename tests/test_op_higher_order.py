"""Higher derivatives: the gradients of the gradient ops.

A first derivative computed with an inner tape inside an outer tape is itself
recorded, so the outer tape differentiates the gradient ops (ReluGrad,
SigmoidGrad, TanhGrad, EluGrad, SeluGrad, SoftplusGrad, SoftsignGrad, GeluGrad,
SqrtGrad, RsqrtGrad, ReciprocalGrad, StridedSliceGrad, UnsortedSegmentSum, ...).
Each second derivative is checked against finite differences of the first
derivative, the Hessian from ``tape.jacobian`` against a loop of gradients, and
derivatives of a jacobian (gradient ops recorded with stacked cotangents)
against finite differences of that jacobian.
"""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, jacobian_fn, vjp_fn

rng = np.random.default_rng(77)


def r(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def pos(*shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def away(*shape, lo=0.3, hi=2.0):
    return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], size=shape)


def well_conditioned(*shape):
    return rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])


SECOND = []


def case(name, f, *inputs):
    SECOND.append(pytest.param(f, inputs, id=name))


# elementwise math
case("square", tf.square, r(2, 3))
case("sqrt", tf.sqrt, pos(2, 3))
case("rsqrt", tf.math.rsqrt, pos(2, 3))
case("reciprocal", tf.math.reciprocal, away(2, 3))
case("exp", tf.exp, r(2, 3))
case("log", tf.math.log, pos(2, 3))
case("log1p", tf.math.log1p, pos(2, 3))
case("sin", tf.sin, r(2, 3))
case("cos", tf.cos, r(2, 3))
case("tan", tf.tan, r(2, 3, lo=-1.0, hi=1.0))
case("tanh", tf.tanh, r(2, 3))
case("abs", lambda x: tf.abs(x) * x, away(2, 3))
case("negative", lambda x: tf.negative(x) * x, r(3))
case("expm1", tf.math.expm1, r(3))
case("erf", tf.math.erf, r(3))
case("atan", tf.math.atan, r(3))
case("multiply_broadcast", lambda x, y: x * y * x, r(3, 1), r(1, 4))
case("divide", tf.divide, r(2, 3), away(3))
case("pow", tf.pow, pos(2, 3), r(2, 3))
case("maximum", lambda x, y: tf.maximum(x, y) * x, r(3, 1), r(1, 4))
case("minimum", lambda x, y: tf.minimum(x * x, y) * y, r(4), r(4))
case("squared_difference", tf.math.squared_difference, r(2, 3), r(3))
case("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.5) * x, away(6, lo=0.05) * 1.5)
case("clip_by_norm", lambda x: tf.clip_by_norm(x, 1.0), r(2, 3) + 1.0)
case("sign", lambda x: tf.sign(x) * x * x, away(4))
case("cast", lambda x: tf.cast(x, tf.float64) * x, r(3))
# activations
case("relu", lambda x: tf.nn.relu(x) * x, away(3, 4))
case("relu6", lambda x: tf.nn.relu6(x) * x, np.array([-1.0, 0.5, 3.0, 5.5, 6.5]))
case("elu", tf.nn.elu, away(3, 4))
case("selu", tf.nn.selu, away(3, 4))
case("gelu", tf.nn.gelu, r(3, 4))
case("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), r(3, 4))
case("leaky_relu", lambda x: tf.nn.leaky_relu(x) * x, away(3, 4))
case("sigmoid", tf.nn.sigmoid, r(3, 4))
case("softplus", tf.nn.softplus, r(3, 4))
case("softsign", tf.nn.softsign, away(3, 4))
case("softmax", tf.nn.softmax, r(2, 3))
case("log_softmax", lambda x: tf.nn.log_softmax(x, axis=0), r(3, 2))
case("softmax_xent", lambda x: tf.nn.softmax_cross_entropy_with_logits(
    labels=tf.constant([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]], tf.float64), logits=x), r(2, 3))
case("softmax_xent_labels", lambda lab, x: tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=x),
     rng.dirichlet(np.ones(3), size=2), r(2, 3))
case("sparse_softmax_xent", lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=tf.constant([1, 2]), logits=x), r(2, 3))
case("sigmoid_xent", lambda x: tf.nn.sigmoid_cross_entropy_with_logits(
    labels=tf.constant([0.0, 1.0, 0.5], tf.float64), logits=x), away(3))
case("l2_loss", lambda x: tf.nn.l2_loss(x * x), r(3))
case("moments", lambda x: list(tf.nn.moments(x * x, axes=[0])), r(3, 2))
# array ops (their gradients are array ops too)
case("strided_slice", lambda x: x[1:, ::2] ** 3, r(3, 4))
case("strided_slice_newaxis", lambda x: x[None, ..., 1] * x[:, 0], r(3, 2))
case("gather", lambda x: tf.gather(x, [0, 0, 2]) ** 3, r(3, 2))
case("unsorted_segment_sum", lambda x: tf.math.unsorted_segment_sum(x * x, tf.constant([1, 1, 0]), 2) ** 2, r(3, 2))
case("pad_reflect", lambda x: tf.pad(x, [[1, 1], [1, 0]], mode="REFLECT") ** 3, r(3, 2))
case("pad_constant", lambda x: tf.pad(x * x, [[1, 1]], constant_values=2.0) ** 2, r(3))
case("concat_split", lambda x: tf.split(tf.concat([x, x * x], 0), [1, 3], 0)[1] ** 2, r(2, 2))
case("stack_unstack", lambda x: tf.unstack(tf.stack([x, x * x], axis=1), axis=0)[1] ** 2, r(2, 2))
case("tile_transpose", lambda x: tf.transpose(tf.tile(x, [2, 1])) ** 3, r(2, 2))
case("broadcast_reshape", lambda x: tf.reshape(tf.broadcast_to(x, [2, 3]), [6]) ** 3, r(3))
case("where", lambda x: tf.where(x > 0, x ** 3, tf.sin(x)), away(5))
# reductions
case("reduce_sum", lambda x: tf.reduce_sum(x ** 3, axis=1), r(2, 3))
case("reduce_mean", lambda x: tf.reduce_mean(x ** 3, axis=0, keepdims=True), r(2, 3))
case("reduce_max", lambda x: tf.reduce_max(x ** 3, axis=1), r(2, 3))
case("reduce_min", lambda x: tf.reduce_min(x * x, axis=0), away(2, 3))
case("reduce_prod", lambda x: tf.reduce_prod(x, axis=1), away(2, 3))
case("reduce_prod_with_zero", lambda x: tf.reduce_prod(x, axis=1), np.array([[0.0, 2.0, 3.0], [1.5, -1.0, 0.5]]))
case("reduce_logsumexp", lambda x: tf.reduce_logsumexp(x, axis=-1), r(2, 3))
case("norm", lambda x: tf.norm(x, axis=1), r(2, 3))
case("cumsum", lambda x: tf.math.cumsum(x * x, axis=1, reverse=True) ** 2, r(2, 3))
# linear algebra
case("matmul", lambda x: tf.matmul(x, x), r(2, 2))
case("matmul_batch_broadcast", lambda a, b: tf.matmul(a * a, b, transpose_b=True), r(2, 2, 3), r(2, 3))
case("einsum", lambda x, y: tf.einsum("bij,jk->bik", x * x, y), r(2, 2, 3), r(3, 2))
case("einsum_diag", lambda x: tf.einsum("ii->i", x) ** 3, r(3, 3))
case("tensordot", lambda x: tf.tensordot(x, x, 1), r(2, 2))
case("inv", tf.linalg.inv, well_conditioned(2, 2))
case("det", tf.linalg.det, well_conditioned(3, 3))
case("slogdet", lambda x: tf.linalg.slogdet(x)[1], well_conditioned(3, 3))
case("solve", tf.linalg.solve, well_conditioned(2, 2), r(2, 2))
case("trace", lambda x: tf.linalg.trace(tf.matmul(x, x)), r(2, 2))
case("matvec", lambda a, v: tf.linalg.matvec(a, v * v), r(2, 3), r(3))


@pytest.mark.parametrize("f, inputs", SECOND)
def test_second_derivative_matches_finite_differences(f, inputs):
    check_gradients(vjp_fn(f), *inputs, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("f, inputs", SECOND)
def test_hessian_jacobian_matches_gradient_loop(f, inputs):
    first = vjp_fn(f)
    hessian = check_jacobian(lambda *xs: first(*xs)[0], *inputs)
    assert any(h is not None for h in hessian)


JACOBIAN_OF = [
    pytest.param(f, x, id=name) for name, f, x in [
        ("sqrt", tf.sqrt, pos(3)),
        ("rsqrt", tf.math.rsqrt, pos(3)),
        ("reciprocal", tf.math.reciprocal, away(3)),
        ("tanh", tf.tanh, r(3)),
        ("sigmoid", tf.math.sigmoid, r(3)),
        ("relu", lambda x: tf.nn.relu(x) * x, away(3)),
        ("relu6", lambda x: tf.nn.relu6(x) * x, np.array([-1.0, 2.0, 7.0])),
        ("leaky_relu", lambda x: tf.nn.leaky_relu(x) * x, away(3)),
        ("elu", tf.nn.elu, away(3)),
        ("selu", tf.nn.selu, away(3)),
        ("softplus", tf.nn.softplus, r(3)),
        ("softsign", tf.nn.softsign, away(3)),
        ("gelu", tf.nn.gelu, r(3)),
        ("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), r(3)),
        ("strided_slice", lambda x: x[1:] ** 2, r(3, 2)),
        ("gather", lambda x: tf.gather(x, [1, 1, 0]) ** 2, r(2, 2)),
        ("pad", lambda x: tf.pad(x, [[1, 2]], mode="SYMMETRIC") ** 2, r(3)),
        ("reduce_max", lambda x: tf.reduce_max(x * x, axis=0), r(3, 2)),
        ("softmax", tf.nn.softmax, r(3)),
        ("inv", tf.linalg.inv, well_conditioned(2, 2)),
    ]
]


@pytest.mark.parametrize("f, x", JACOBIAN_OF)
def test_derivative_of_a_jacobian(f, x):
    """Gradient ops run with stacked cotangents under an outer tape, then differentiated."""
    check_gradients(jacobian_fn(f), x, atol=1e-5, rtol=1e-5)


THIRD = [
    pytest.param(f, x, id=name) for name, f, x in [
        ("tanh", tf.tanh, r(3)),
        ("sigmoid", tf.math.sigmoid, r(3)),
        ("exp", tf.exp, r(3)),
        ("sqrt", tf.sqrt, pos(3)),
        ("rsqrt", tf.math.rsqrt, pos(3)),
        ("reciprocal", tf.math.reciprocal, away(3)),
        ("log", tf.math.log, pos(3)),
        ("sin", tf.sin, r(3)),
        ("softplus", tf.nn.softplus, r(3)),
        ("elu", tf.nn.elu, -pos(3)),
        ("selu", tf.nn.selu, -pos(3)),
        ("gelu", tf.nn.gelu, r(3)),
        ("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), r(3)),
        ("softsign", tf.nn.softsign, away(3)),
        ("pow", lambda x: tf.pow(x, 3.5), pos(3)),
        ("softmax", tf.nn.softmax, r(3)),
    ]
]


@pytest.mark.parametrize("f, x", THIRD)
def test_third_derivative_matches_finite_differences(f, x):
    check_gradients(vjp_fn(vjp_fn(f, seed=2), seed=3), x, atol=1e-5, rtol=1e-5)


def test_third_derivative_closed_form():
    """d^3/dx^3 tanh(x) = -2 sech^2(x) (1 - 3 tanh^2(x)) through three nested tapes."""
    x = tf.constant([-1.3, 0.2, 0.9], tf.float64)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.tanh(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(d1.numpy(), 1 - t ** 2, rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), -2 * t * (1 - t ** 2), rtol=1e-12)
    np.testing.assert_allclose(d3.numpy(), -2 * (1 - t ** 2) * (1 - 3 * t ** 2), rtol=1e-12)


def test_second_derivative_of_relu_is_zero_not_none():
    x = tf.constant([-1.0, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.relu(x)
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x)
    np.testing.assert_array_equal(dy.numpy(), [0.0, 1.0])
    assert d2 is not None
    np.testing.assert_array_equal(d2.numpy(), [0.0, 0.0])


def test_second_derivative_through_matrix_2_norm_is_refused():
    """The spectral-norm gradient is not itself differentiable here: a clear LookupError, never a wrong value."""
    x = tf.constant([[1.0, 2.0], [0.5, -1.0]], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.norm(x, ord=2, axis=[0, 1])
        g = inner.gradient(y, x)
    u, s, vh = np.linalg.svd(x.numpy())
    np.testing.assert_allclose(g.numpy(), np.outer(u[:, 0], vh[0]), rtol=1e-12)
    with pytest.raises(LookupError, match="SpectralNormGrad"):
        outer.gradient(g, x)


def test_hessian_of_cubic_via_jacobian_of_gradient():
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_sum(w ** 3)
        g = t1.gradient(loss, w)
    h = t2.jacobian(g, w)
    np.testing.assert_allclose(h.numpy(), [[6.0, 0.0], [0.0, 12.0]])


def test_batch_jacobian_of_elementwise_chain_equals_jacobian_diagonal_blocks():
    x = tf.constant(rng.uniform(-1, 1, (3, 2)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.matmul(x, tf.constant([[1.0, -2.0, 0.5], [0.3, 0.7, -1.0]], tf.float64)))
        y = tf.nn.softmax(y) * tf.math.sigmoid(y)
    bj = tape.batch_jacobian(y, x)
    j = tape.jacobian(y, x)
    assert bj.shape == (3, 3, 2)
    for b in range(3):
        np.testing.assert_allclose(bj.numpy()[b], j.numpy()[b, :, b, :], rtol=1e-12, atol=1e-14)

"""keras.ops, the NumPy-like part: reachable as Keras code writes it, values against NumPy, Keras 3's
dtype promotion, first and second derivatives against finite differences, and errors for bad arguments."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn
from tapeflow.keras import ops

rng = np.random.default_rng(2024)


def r(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def pos(*shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def away(*shape, lo=0.3, hi=2.0):
    return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], size=shape)


def unit(*shape):
    return rng.uniform(-0.8, 0.8, shape)


def value(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


# ---------------------------------------------------------------- namespaces ---
def test_the_ways_keras_code_reaches_ops():
    import tapeflow.keras as keras
    from tapeflow.keras import ops as imported
    assert tf.keras.ops is imported is keras.ops
    assert tf.keras.ops.numpy.add is ops.add and ops.linalg.norm is ops.norm and ops.nn.softmax is ops.softmax
    out = keras.ops.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    assert isinstance(out, tf.Tensor) and out.numpy().tolist() == [[11.0]]


# --------------------------------------------------------------- forward values ---
A, B, P = r(3, 4), r(3, 4), unit(3, 4)
X3, Y3 = r(2, 3, 4), r(5, 4, 2)
SQ = r(3, 3) + 3 * np.eye(3)

UNARY = ["exp", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arctan", "arcsinh", "square", "abs",
         "negative", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "exp2"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_against_numpy(name):
    np.testing.assert_allclose(value(getattr(ops, name)(A)), getattr(np, name)(A), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, x", [("log", pos(3, 4)), ("log1p", pos(3, 4)), ("log2", pos(3, 4)),
                                     ("log10", pos(3, 4)), ("sqrt", pos(3, 4)), ("arcsin", P), ("arccos", P),
                                     ("arctanh", P), ("arccosh", 1 + pos(3, 4))])
def test_unary_on_their_domain_against_numpy(name, x):
    np.testing.assert_allclose(value(getattr(ops, name)(x)), getattr(np, name)(x), rtol=1e-12)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum",
                                  "arctan2", "logaddexp", "hypot", "mod", "floor_divide", "equal", "not_equal",
                                  "greater", "greater_equal", "less", "less_equal"])
def test_binary_against_numpy_with_broadcasting(name):
    np.testing.assert_allclose(value(getattr(ops, name)(A, B[:1])), getattr(np, name)(A, B[:1]), rtol=1e-12)


def test_power_logic_and_tests_against_numpy():
    x = pos(3, 4)
    np.testing.assert_allclose(value(ops.power(x, A)), x ** A, rtol=1e-12)
    a, b = A > 0, B > 0
    for name in ("logical_and", "logical_or", "logical_xor"):
        assert (value(getattr(ops, name)(a, b)) == getattr(np, name)(a, b)).all()
    assert (value(ops.logical_not(A)) == np.logical_not(A)).all()
    special = np.array([np.nan, np.inf, -np.inf, 1.0])
    for name in ("isnan", "isinf", "isfinite"):
        assert (value(getattr(ops, name)(special)) == getattr(np, name)(special)).all()
        assert value(getattr(ops, name)(np.array([1, 2]))).tolist() == getattr(np, name)(np.array([1, 2])).tolist()
    other = np.array([1 + 1e-9, np.inf, np.nan, np.inf])
    ref = np.array([1.0, np.inf, np.nan, 1.0])
    assert value(ops.isclose(ref, other)).tolist() == np.isclose(ref, other).tolist()
    assert value(ops.isclose(ref, other, equal_nan=True)).tolist() == np.isclose(ref, other, equal_nan=True).tolist()
    assert bool(ops.allclose(A, A + 1e-12)) and not bool(ops.allclose(A, A + 1e-3))
    np.testing.assert_array_equal(value(ops.nan_to_num(special)), np.nan_to_num(special))
    np.testing.assert_array_equal(value(ops.round(np.array([0.125, 2.5, -1.55]), 2)), np.round([0.125, 2.5, -1.55], 2))
    np.testing.assert_array_equal(value(ops.round(np.array([149, 151, -250]), -2)), np.round([149, 151, -250], -2))
    np.testing.assert_allclose(value(ops.deg2rad(A)), np.deg2rad(A))
    np.testing.assert_allclose(value(ops.rad2deg(A)), np.rad2deg(A))


REDUCTIONS = ["sum", "mean", "max", "min", "prod", "std", "var", "median", "ptp", "amax", "amin"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_against_numpy(name, axis, keepdims):
    np.testing.assert_allclose(value(getattr(ops, name)(A, axis=axis, keepdims=keepdims)),
                               getattr(np, name)(A, axis=axis, keepdims=keepdims), rtol=1e-12, atol=1e-14)


def test_other_reductions_against_numpy():
    np.testing.assert_allclose(value(ops.quantile(A, [0.1, 0.5, 0.9], axis=1)), np.quantile(A, [0.1, 0.5, 0.9], axis=1))
    for method in ("lower", "higher", "midpoint", "nearest"):
        np.testing.assert_allclose(value(ops.quantile(A, 0.3, axis=0, method=method)),
                                   np.quantile(A, 0.3, axis=0, method=method))
    np.testing.assert_allclose(value(ops.quantile(A, 0.25, keepdims=True)), np.quantile(A, 0.25, keepdims=True))
    assert value(ops.argmax(A)) == np.argmax(A) and (value(ops.argmin(A, 1)) == np.argmin(A, 1)).all()
    assert value(ops.argmax(A, 0, keepdims=True)).shape == (1, 4)
    np.testing.assert_allclose(value(ops.cumsum(A, 1)), np.cumsum(A, 1))
    np.testing.assert_allclose(value(ops.cumsum(A)), np.cumsum(A))
    np.testing.assert_allclose(value(ops.cumprod(A, 0)), np.cumprod(A, 0))
    np.testing.assert_allclose(value(ops.average(A, axis=1, weights=[1.0, 2, 3, 4])),
                               np.average(A, axis=1, weights=[1.0, 2, 3, 4]))
    np.testing.assert_allclose(value(ops.average(A, weights=P + 1)), np.average(A, weights=P + 1))
    ints = np.array([[0, 1, 5], [2, 0, 0]])
    assert value(ops.count_nonzero(ints, 0)).tolist() == np.count_nonzero(ints, 0).tolist()
    assert value(ops.all(ints, 1)).tolist() == [False, False] and value(ops.any(ints)) == np.True_
    assert float(ops.max(np.zeros((0,)), initial=-3.0)) == -3.0
    np.testing.assert_allclose(value(ops.max(A, 1, initial=0.5)), np.max(A, 1, initial=0.5))


def test_shape_ops_against_numpy():
    cases = [
        (ops.reshape(A, (2, -1)), A.reshape(2, -1)), (ops.transpose(X3, (2, 0, 1)), np.transpose(X3, (2, 0, 1))),
        (ops.expand_dims(A, (0, 3)), np.expand_dims(A, (0, 3))), (ops.squeeze(A[None, :, None]), A),
        (ops.concatenate([A, B], 1), np.concatenate([A, B], 1)),
        (ops.concatenate([A, B], None), np.concatenate([A, B], None)),
        (ops.append(A, B, 0), np.append(A, B, 0)), (ops.stack([A, B], 2), np.stack([A, B], 2)),
        (ops.vstack([A[0], B[0]]), np.vstack([A[0], B[0]])), (ops.hstack([A, B]), np.hstack([A, B])),
        (ops.dstack([A, B]), np.dstack([A, B])), (ops.tile(A, (2,)), np.tile(A, (2,))),
        (ops.tile(A, (2, 1, 2)), np.tile(A, (2, 1, 2))), (ops.repeat(A, 2, 1), np.repeat(A, 2, 1)),
        (ops.repeat(A, 2), np.repeat(A, 2)), (ops.repeat(A, [1, 0, 2], 0), np.repeat(A, [1, 0, 2], 0)),
        (ops.flip(A), np.flip(A)), (ops.flip(X3, (0, 2)), np.flip(X3, (0, 2))),
        (ops.rot90(A), np.rot90(A)),
        (ops.rot90(A, 2), np.rot90(A, 2)),
        (ops.rot90(X3, 3, (1, 2)), np.rot90(X3, 3, (1, 2))),
        (ops.broadcast_to(A[0], (2, 4)), np.broadcast_to(A[0], (2, 4))), (ops.ravel(X3), X3.ravel()),
        (ops.moveaxis(X3, 0, -1), np.moveaxis(X3, 0, -1)),
        (ops.moveaxis(X3, [0, 1], [2, 0]), np.moveaxis(X3, [0, 1], [2, 0])),
        (ops.swapaxes(X3, 0, 2), np.swapaxes(X3, 0, 2)), (ops.pad(A, ((1, 0), (2, 1))), np.pad(A, ((1, 0), (2, 1)))),
        (ops.pad(A, 1), np.pad(A, 1)), (ops.pad(A, 2, constant_values=3.0), np.pad(A, 2, constant_values=3.0)),
        (ops.pad(A, ((1, 1), (2, 2)), "reflect"), np.pad(A, ((1, 1), (2, 2)), "reflect")),
        (ops.pad(A, ((2, 1), (1, 3)), "symmetric"), np.pad(A, ((2, 1), (1, 3)), "symmetric")),
        (ops.roll(A, 1, 1), np.roll(A, 1, 1)), (ops.roll(A, -5), np.roll(A, -5)),
        (ops.roll(X3, (1, -1), (0, 2)), np.roll(X3, (1, -1), (0, 2))), (ops.diff(A, 2), np.diff(A, 2)),
        (ops.diff(A, 1, 0), np.diff(A, 1, 0)),
    ]
    for got, want in cases:
        np.testing.assert_array_equal(value(got), want)
    for pieces, want in ((ops.split(A, [1, 3], 1), np.split(A, [1, 3], 1)), (ops.split(A, 2, 1), np.split(A, 2, 1)),
                         (ops.array_split(A, 3, 1), np.array_split(A, 3, 1)), (ops.hsplit(A, 2), np.hsplit(A, 2)),
                         (ops.vsplit(A, [2]), np.vsplit(A, [2]))):
        assert len(pieces) == len(want)
        for got, w in zip(pieces, want):
            np.testing.assert_array_equal(value(got), w)
    assert ops.ndim(X3) == 3 and int(ops.size(X3)) == 24


def test_indexing_ops_against_numpy():
    order = np.argsort(A, 1)
    m = np.array([[0, 1, 0], [2, 0, 3]])
    cases = [
        (ops.take(A, [0, -1], 1), np.take(A, [0, -1], 1)),
        (ops.take(A, [[0, 5], [11, -2]]), np.take(A, [[0, 5], [11, -2]])),
        (ops.take_along_axis(A, order, 1), np.take_along_axis(A, order, 1)),
        (ops.take_along_axis(A, order[:1], 1), np.take_along_axis(A, np.broadcast_to(order[:1], (3, 4)), 1)),
        (ops.take_along_axis(A, np.array([3, -1]), None), np.take_along_axis(A.ravel(), np.array([3, 11]), None)),
        (ops.sort(A), np.sort(A)), (ops.sort(A, 0), np.sort(A, 0)), (ops.argsort(A, 0), np.argsort(A, 0)),
        (ops.unique(np.array([3, 1, 3, 2])), np.unique([3, 1, 3, 2])),
        (ops.diagonal(A), np.diagonal(A)),
        (ops.diagonal(A, 1), np.diagonal(A, 1)),
        (ops.diagonal(A, -1), np.diagonal(A, -1)),
        (ops.diagonal(X3, 0, 1, 2), np.diagonal(X3, 0, 1, 2)), (ops.diagonal(X3, 1, 2, 0), np.diagonal(X3, 1, 2, 0)),
        (ops.trace(A), np.trace(A)), (ops.trace(X3, -1, 1, 2), np.trace(X3, -1, 1, 2)),
        (ops.triu(A, 1), np.triu(A, 1)), (ops.tril(X3, -1), np.tril(X3, -1)),
        (ops.searchsorted([1.0, 2, 3], [0.5, 2, 3.5]), np.searchsorted([1.0, 2, 3], [0.5, 2, 3.5])),
        (ops.searchsorted([1.0, 2, 2, 3], [2.0], side="right"), np.searchsorted([1.0, 2, 2, 3], [2.0], side="right")),
        (ops.digitize([0.5, 1.0, 2.5], [1.0, 2.0]), np.digitize([0.5, 1.0, 2.5], [1.0, 2.0])),
        (ops.bincount(np.array([1, 1, 3])), np.bincount([1, 1, 3])),
        (ops.bincount(np.array([1, 1, 3]), weights=[0.5, 1.0, 2.0], minlength=6),
         np.bincount([1, 1, 3], weights=[0.5, 1.0, 2.0], minlength=6)),
        (ops.select([A > 0, A < -1], [A, -A], 7.0), np.select([A > 0, A < -1], [A, -A], 7.0)),
        (ops.where(A > 0, A, 0), np.where(A > 0, A, 0)), (ops.clip(A, -0.5, 0.5), np.clip(A, -0.5, 0.5)),
    ]
    for got, want in cases:
        np.testing.assert_array_equal(value(got), want)
    for got, want in zip(ops.nonzero(m), np.nonzero(m)):
        np.testing.assert_array_equal(value(got), want)
    for got, want in zip(ops.where(m), np.nonzero(m)):
        np.testing.assert_array_equal(value(got), want)
    values, inverse, counts = ops.unique(np.array([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert value(inverse).tolist() == [2, 0, 2, 1] and value(counts).tolist() == [1, 1, 2]


def test_products_against_numpy():
    cases = [
        (ops.matmul(A, B.T), A @ B.T), (ops.matmul(A, B[0]), A @ B[0]), (ops.matmul(A[0], B.T), A[0] @ B.T),
        (ops.matmul(A[0], B[0]), A[0] @ B[0]), (ops.matmul(X3, A.T), X3 @ A.T),
        (ops.matmul(X3[:1], X3.transpose(0, 2, 1)), X3[:1] @ X3.transpose(0, 2, 1)),
        (ops.dot(A, B.T), np.dot(A, B.T)), (ops.dot(X3, Y3), np.dot(X3, Y3)), (ops.dot(X3, A[0]), np.dot(X3, A[0])),
        (ops.dot(2.0, A), 2.0 * A), (ops.tensordot(X3, Y3[0], 1), np.tensordot(X3, Y3[0], 1)),
        (ops.tensordot(X3, X3, ((1, 2), (1, 2))), np.tensordot(X3, X3, ((1, 2), (1, 2)))),
        (ops.outer(A, B[0]), np.outer(A, B[0])), (ops.inner(A, B), np.inner(A, B)), (ops.vdot(A, B), np.vdot(A, B)),
        (ops.einsum("ij,kj->ik", A, B), np.einsum("ij,kj->ik", A, B)),
        (ops.einsum("bij->b", X3), np.einsum("bij->b", X3)),
        (ops.cross(A[:, :3], B[:, :3]), np.cross(A[:, :3], B[:, :3])),
        (ops.cross(A, B, axis=0), np.cross(A, B, axis=0)),
        (ops.cross(A[:, :2], B[:, :3]), np.cross(np.pad(A[:, :2], ((0, 0), (0, 1))), B[:, :3])),
        (ops.kron(A[:2, :2], B[:2, :3]), np.kron(A[:2, :2], B[:2, :3])),
    ]
    for got, want in cases:
        np.testing.assert_allclose(value(got), want, rtol=1e-12, atol=1e-14)
    # 2-vectors: the z component of the 3-D cross product (NumPy deprecates this form).
    np.testing.assert_allclose(value(ops.cross(A[:, :2], B[:, :2])), A[:, 0] * B[:, 1] - A[:, 1] * B[:, 0])


def test_creation_against_numpy():
    cases = [
        (ops.zeros((2, 3)), np.zeros((2, 3))), (ops.ones(3), np.ones(3)), (ops.full((2, 2), 3), np.full((2, 2), 3.0)),
        (ops.zeros_like(A), np.zeros_like(A)),
        (ops.ones_like(A), np.ones_like(A)),
        (ops.full_like(A, 2), np.full_like(A, 2)),
        (ops.arange(5), np.arange(5)),
        (ops.arange(2, 9, 3), np.arange(2, 9, 3)),
        (ops.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25)),
        (ops.linspace(0, 1, 5), np.linspace(0, 1, 5)),
        (ops.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False)),
        (ops.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1), np.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1)),
        (ops.logspace(0, 2, 3), np.logspace(0, 2, 3)),
        (ops.eye(3, 4, 1), np.eye(3, 4, 1)),
        (ops.identity(2), np.identity(2)),
        (ops.tri(3, 4, 1), np.tri(3, 4, 1)),
        (ops.diag([1.0, 2]), np.diag([1.0, 2])),
        (ops.diag([1.0, 2], 1), np.diag([1.0, 2], 1)),
        (ops.diag([1, 2], -2), np.diag([1, 2], -2)), (ops.diag(A, 1), np.diag(A, 1)),
    ]
    for got, want in cases:
        np.testing.assert_allclose(value(got), want, rtol=1e-6)
    for got, want in zip(ops.meshgrid([1, 2], [3, 4, 5]), np.meshgrid([1, 2], [3, 4, 5])):
        np.testing.assert_array_equal(value(got), want)
    for got, want in zip(ops.meshgrid([1, 2], [3, 4, 5], indexing="ij"), np.meshgrid([1, 2], [3, 4, 5], indexing="ij")):
        np.testing.assert_array_equal(value(got), want)
    values, step = ops.linspace(0.0, 2.0, 5, retstep=True)
    assert float(step) == 0.5


def test_linalg_against_numpy():
    for order in (None, 1, 2, np.inf, -np.inf, 0, 3, -1, 0.5):
        np.testing.assert_allclose(value(ops.norm(A, order, 1)), np.linalg.norm(A, order, 1), rtol=1e-12)
    for order in (None, "fro", 1, -1, 2, np.inf, -np.inf):
        np.testing.assert_allclose(value(ops.norm(A, order, (0, 1))), np.linalg.norm(A, order, (0, 1)), rtol=1e-12)
        np.testing.assert_allclose(value(ops.norm(X3, order, (2, 1), keepdims=True)),
                                   np.linalg.norm(X3, order, (2, 1), keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(value(ops.norm(X3)), np.linalg.norm(X3.ravel()))
    np.testing.assert_allclose(value(ops.det(SQ)), np.linalg.det(SQ))
    np.testing.assert_allclose(value(ops.inv(SQ)), np.linalg.inv(SQ))
    np.testing.assert_allclose(value(ops.solve(SQ, A[:, :2])), np.linalg.solve(SQ, A[:, :2]))
    np.testing.assert_allclose(value(ops.solve(SQ, A[:, 0])), np.linalg.solve(SQ, A[:, 0]))
    np.testing.assert_allclose(value(ops.solve_triangular(SQ, A[:, :2], lower=True)),
                               np.linalg.solve(np.tril(SQ), A[:, :2]))
    np.testing.assert_allclose(value(ops.solve_triangular(SQ, A[:, :2])), np.linalg.solve(np.triu(SQ), A[:, :2]))
    spd = SQ @ SQ.T
    np.testing.assert_allclose(value(ops.cholesky(spd)), np.linalg.cholesky(spd), rtol=1e-12)
    np.testing.assert_allclose(value(ops.cholesky(np.stack([spd, 2 * spd]), upper=True)),
                               np.linalg.cholesky(np.stack([spd, 2 * spd])).transpose(0, 2, 1), rtol=1e-12)


def test_bitwise_against_numpy():
    a, b = np.array([5, 3, 12, -7], np.int32), np.array([3, 5, 1, 2], np.int32)
    for name, reference in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                            ("bitwise_xor", np.bitwise_xor), ("left_shift", np.left_shift),
                            ("bitwise_left_shift", np.left_shift), ("right_shift", np.right_shift),
                            ("bitwise_right_shift", np.right_shift)):
        np.testing.assert_array_equal(value(getattr(ops, name)(a, b)), reference(a, b))
    np.testing.assert_array_equal(value(ops.bitwise_not(a)), np.invert(a))
    np.testing.assert_array_equal(value(ops.bitwise_invert(np.array([True, False]))), [False, True])
    assert ops.bitwise_and(np.array([6], np.uint8), 3).dtype.name == "uint8"


# -------------------------------------------------------- Keras dtype rules ---
I8, U8, I32, I64 = (np.array([1, 2], d) for d in ("int8", "uint8", "int32", "int64"))
F16, F32, F64, BOOL = np.array([1, 2], "float16"), np.array([1, 2], "float32"), np.array([1, 2], "float64"), \
    np.array([True, False])


@pytest.mark.parametrize("x1, x2, expected", [
    (I32, 1.5, "float32"),      # a Python float is weak: an int tensor becomes floatx
    (I8, 1, "int8"),            # a Python int adopts the tensor's width
    (U8, 1, "uint8"), (BOOL, 1, "int32"), (BOOL, True, "bool"), (F16, 1.5, "float16"),
    (U8, I8, "int16"),          # the least type holding both (JAX's lattice)
    (I32, I64, "int64"), (I32, F32, "float32"), (I64, F16, "float16"), (I32, F64, "float64"),
    (F16, F32, "float32"), (1, 2, "int32"), (1, 2.0, "float32"),
])
def test_binary_promotion_follows_keras(x1, x2, expected):
    assert ops.add(x1, x2).dtype.name == expected
    assert ops.maximum(x2, x1).dtype.name == expected


def test_dtype_results_of_keras():
    assert ops.mean(I32).dtype.name == "float32" and ops.mean(F16).dtype.name == "float16"
    assert ops.mean(BOOL).dtype.name == "float32" and float(ops.mean(np.array([1, 2]))) == 1.5
    assert ops.sum(BOOL).dtype.name == "int32" and int(ops.sum(BOOL)) == 1
    assert ops.sum(I8).dtype.name == "int32" and ops.sum(U8).dtype.name == "uint32"
    assert ops.sum(I64).dtype.name == "int64"
    assert ops.prod(I8).dtype.name == "int32" and ops.cumsum(BOOL).dtype.name == "int32"
    assert ops.divide(I32, I32).dtype.name == "float32" and float(ops.divide(I32, I32)[0]) == 1.0
    assert ops.divide(I32, 2).dtype.name == "float32" and ops.floor_divide(I32, 2).dtype.name == "int32"
    for name in ("exp", "log", "sqrt", "sin", "tanh", "floor", "ceil"):
        assert getattr(ops, name)(I32).dtype.name == "float32", name
        assert getattr(ops, name)(F16).dtype.name == "float16", name
    assert ops.var(I32).dtype.name == "float32" and ops.std(F16).dtype.name == "float16"
    assert ops.argmax(F32).dtype.name == "int32" and ops.argsort(F32).dtype.name == "int32"
    assert ops.equal(I32, 1.0).dtype.name == "bool" and ops.square(BOOL).dtype.name == "int32"
    assert ops.abs(I8).dtype.name == "int8" and ops.round(I32).dtype.name == "int32"
    assert ops.arange(3).dtype.name == "int32" and ops.arange(3.0).dtype.name == "float32"
    assert ops.zeros(2).dtype.name == "float32" and ops.full((2,), 3).dtype.name == "float32"
    assert ops.zeros_like(I8).dtype.name == "int8" and ops.full_like(I8, 3).dtype.name == "int8"
    assert ops.linspace(0, 1, 3).dtype.name == "float32" and ops.eye(2, dtype="int32").dtype.name == "int32"
    assert ops.concatenate([I32, F16]).dtype.name == "float16" and ops.matmul(I32, I8).dtype.name == "int32"
    assert ops.where(BOOL, I8, 2.0).dtype.name == "float32" and ops.clip(I8, 0, 1).dtype.name == "int8"
    assert ops.clip(I32, 0.5, 1.5).numpy().tolist() == [1.0, 1.5] and ops.clip(BOOL, 0, 1).dtype.name == "int32"


def test_floatx_widens_weak_results():
    tf.keras.config.set_floatx("float64")
    try:
        assert ops.add(I32, 0.5).dtype.name == "float64" and ops.zeros(2).dtype.name == "float64"
        assert ops.divide(I32, I32).dtype.name == "float64" and ops.exp(I32).dtype.name == "float64"
        assert ops.add(F32, 0.5).dtype.name == "float32"      # a tensor's own width is kept
    finally:
        tf.keras.config.set_floatx("float32")


# --------------------------------------------------------------- gradients ---
GRADIENT_CASES = [
    ("exp", ops.exp, [r(2, 3)]), ("expm1", ops.expm1, [r(2, 3)]), ("log", ops.log, [pos(2, 3)]),
    ("log1p", ops.log1p, [pos(2, 3)]), ("log2", ops.log2, [pos(2, 3)]), ("log10", ops.log10, [pos(2, 3)]),
    ("exp2", ops.exp2, [r(2, 3)]), ("sqrt", ops.sqrt, [pos(2, 3)]), ("square", ops.square, [r(2, 3)]),
    ("reciprocal", ops.reciprocal, [away(2, 3)]), ("sin", ops.sin, [r(2, 3)]), ("cos", ops.cos, [r(2, 3)]),
    ("tan", ops.tan, [unit(2, 3)]), ("arcsin", ops.arcsin, [unit(2, 3)]), ("arccos", ops.arccos, [unit(2, 3)]),
    ("arctan", ops.arctan, [r(2, 3)]), ("sinh", ops.sinh, [r(2, 3)]), ("cosh", ops.cosh, [r(2, 3)]),
    ("tanh", ops.tanh, [r(2, 3)]), ("arcsinh", ops.arcsinh, [r(2, 3)]), ("arccosh", ops.arccosh, [1.5 + pos(2, 3)]),
    ("arctanh", ops.arctanh, [unit(2, 3)]), ("abs", ops.abs, [away(2, 3)]), ("negative", ops.negative, [r(2, 3)]),
    ("add", ops.add, [r(2, 3), r(3)]), ("subtract", ops.subtract, [r(2, 3), r(2, 1)]),
    ("multiply", ops.multiply, [r(2, 3), r(3)]), ("divide", ops.divide, [r(2, 3), away(2, 3)]),
    ("power", ops.power, [pos(2, 3), r(2, 3)]), ("maximum", ops.maximum, [r(2, 3), r(2, 3)]),
    ("minimum", ops.minimum, [r(2, 3), r(3)]), ("arctan2", ops.arctan2, [r(2, 3), away(2, 3)]),
    ("logaddexp", ops.logaddexp, [r(2, 3), r(3)]), ("hypot", ops.hypot, [away(2, 3), r(2, 3)]),
    ("mod", ops.mod, [r(2, 3), 3 + pos(2, 3)]), ("clip", lambda x: ops.clip(x, -1.0, 1.0), [r(2, 3)]),
    ("where", lambda x, y: ops.where(x > 0, x, y), [away(2, 3), r(2, 3)]),
    ("sum", lambda x: ops.sum(x, 1), [r(2, 3)]), ("mean", lambda x: ops.mean(x, 0, keepdims=True), [r(2, 3)]),
    ("max", lambda x: ops.max(x, 1), [r(2, 3)]),
    ("min", ops.min, [r(2, 3)]),
    ("prod", lambda x: ops.prod(x, 0), [r(2, 3)]),
    ("std", lambda x: ops.std(x, 1), [r(2, 3)]), ("var", ops.var, [r(2, 3)]),
    ("cumsum", lambda x: ops.cumsum(x, 1), [r(2, 3)]), ("cumprod", lambda x: ops.cumprod(x, 1), [r(2, 3)]),
    ("cumprod with zeros", lambda x: ops.cumprod(ops.multiply(x, np.array([[1.0, 0, 1], [0, 1, 0]])), 1), [r(2, 3)]),
    ("average", lambda x, w: ops.average(x, 1, w), [r(2, 3), pos(3)]),
    ("median", lambda x: ops.median(x, 1), [r(2, 3)]),
    ("quantile", lambda x: ops.quantile(x, [0.2, 0.7]), [r(2, 3)]), ("ptp", lambda x: ops.ptp(x, 0), [r(2, 3)]),
    ("reshape", lambda x: ops.reshape(x, (3, 2)), [r(2, 3)]), ("transpose", ops.transpose, [r(2, 3)]),
    ("expand_dims", lambda x: ops.expand_dims(x, (0, 2)), [r(2, 3)]), ("squeeze", ops.squeeze, [r(1, 3)]),
    ("concatenate", lambda x, y: ops.concatenate([x, y], 1), [r(2, 3), r(2, 2)]),
    ("stack", lambda x, y: ops.stack([x, y], 1), [r(2, 3), r(2, 3)]),
    ("split", lambda x: ops.split(x, [1], 1), [r(2, 3)]), ("tile", lambda x: ops.tile(x, (2, 1, 2)), [r(2, 3)]),
    ("repeat", lambda x: ops.repeat(x, [2, 0, 1], 1), [r(2, 3)]), ("flip", ops.flip, [r(2, 3)]),
    ("rot90", ops.rot90, [r(2, 3)]), ("broadcast_to", lambda x: ops.broadcast_to(x, (2, 2, 3)), [r(2, 3)]),
    ("moveaxis", lambda x: ops.moveaxis(x, 0, 2), [r(2, 3, 2)]),
    ("swapaxes", lambda x: ops.swapaxes(x, 0, 1), [r(2, 3)]),
    ("pad", lambda x: ops.pad(x, ((1, 0), (0, 2))), [r(2, 3)]),
    ("pad reflect", lambda x: ops.pad(x, 1, "reflect"), [r(2, 3)]),
    ("roll", lambda x: ops.roll(x, 1, 1), [r(2, 3)]), ("diff", lambda x: ops.diff(x, 2), [r(2, 4)]),
    ("take", lambda x: ops.take(x, [2, -1, 0], 1), [r(2, 3)]),
    ("take_along_axis", lambda x: ops.take_along_axis(x, np.array([[2, 0], [1, 1]]), 1), [r(2, 3)]),
    ("sort", lambda x: ops.sort(x, 0), [r(3, 2)]), ("diagonal", lambda x: ops.diagonal(x, 1), [r(3, 3)]),
    ("trace", ops.trace, [r(3, 3)]), ("triu", ops.triu, [r(3, 3)]), ("tril", lambda x: ops.tril(x, -1), [r(3, 3)]),
    ("matmul", ops.matmul, [r(2, 3), r(3, 2)]), ("matmul vector", ops.matmul, [r(2, 3), r(3)]),
    ("dot", ops.dot, [r(2, 2, 3), r(3, 2)]), ("tensordot", lambda x, y: ops.tensordot(x, y, 1), [r(2, 3), r(3, 2)]),
    ("outer", ops.outer, [r(2), r(3)]),
    ("inner", ops.inner, [r(2, 3), r(2, 3)]),
    ("vdot", ops.vdot, [r(2, 3), r(2, 3)]),
    ("einsum", lambda x, y: ops.einsum("ij,jk->ik", x, y), [r(2, 3), r(3, 2)]),
    ("cross", ops.cross, [r(2, 3), r(2, 3)]),
    ("kron", ops.kron, [r(2, 2), r(2, 1)]), ("det", ops.det, [r(3, 3) + 3 * np.eye(3)]),
    ("inv", ops.inv, [r(3, 3) + 3 * np.eye(3)]), ("solve", ops.solve, [r(3, 3) + 3 * np.eye(3), r(3, 2)]),
    ("solve_triangular", lambda a, b: ops.solve_triangular(a, b, lower=True), [r(3, 3) + 3 * np.eye(3), r(3)]),
    ("cholesky", lambda m: ops.cholesky(ops.matmul(m, ops.transpose(m)) + np.eye(3)), [r(3, 3)]),
    ("cholesky upper", lambda m: ops.cholesky(ops.matmul(m, ops.transpose(m)) + np.eye(3), upper=True), [r(3, 3)]),
    ("norm", lambda x: ops.norm(x, axis=1), [r(2, 3)]), ("norm 3", lambda x: ops.norm(x, 3, 0), [away(2, 3)]),
    ("norm fro", lambda x: ops.norm(x, "fro", (0, 1)), [r(2, 3)]),
    ("norm 1", lambda x: ops.norm(x, 1, (0, 1)), [away(2, 3)]),
]


@pytest.mark.parametrize("name, f, inputs", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_first_and_second_derivatives(name, f, inputs):
    check_gradients(f, *inputs, atol=1e-6, rtol=1e-5)
    # Linear ops have a zero second derivative: the tape gives None, checked against zero differences.
    check_gradients(vjp_fn(f), *inputs, atol=1e-5, rtol=1e-4, allow_none=True)


@pytest.mark.parametrize("name", ["cumprod with zeros", "take", "diagonal", "pad reflect", "arctan2", "logaddexp",
                                  "cross", "quantile", "cholesky"])
def test_jacobians_with_stacked_cotangents(name):
    _, f, inputs = next(c for c in GRADIENT_CASES if c[0] == name)
    check_jacobian(lambda *xs: ops.reshape(_first(f(*xs)), (-1,)), *inputs)


def _first(y):
    return y[0] if isinstance(y, (list, tuple)) else y


def test_ops_on_int_tensors_have_no_gradient_path_but_float_ones_do():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = ops.sum(ops.multiply(x, 2))          # a Python int is weak: stays float32
    assert y.dtype.name == "float32" and tape.gradient(y, x).numpy().tolist() == [2.0, 2.0, 2.0]


# ------------------------------------------------------------------ errors ---
@pytest.mark.parametrize("call, message", [
    (lambda: ops.matmul(np.ones((2, 3)), np.ones((2, 3))), "matmul: incompatible shapes"),
    (lambda: ops.sum(np.ones((2, 3)), axis=2), "sum: axis 2 is out of bounds"),
    (lambda: ops.squeeze(np.ones((2, 3)), 0), "Cannot squeeze axis 0 of size 2"),
    (lambda: ops.split(np.ones((2, 3)), 2, 1), "cannot be split into 2 equal sections"),
    (lambda: ops.where(np.ones(2) > 0, np.ones(2)), "`x1` and `x2` either both should be `None`"),
    (lambda: ops.reshape(np.ones((2, 3)), (4, 2)), "Input to reshape is a tensor with 6 values, but the requested shape has 8"),
    (lambda: ops.add(np.ones(2), np.ones(3)), "Incompatible shapes: [2] vs. [3]"),
    (lambda: ops.pad(np.ones(2), 1, mode="wrap"), "pad: `mode` must be one of"),
    (lambda: ops.take(np.ones(3), [0.5]), "indices must be integers"),
    (lambda: ops.take(np.ones(3), [3]), "is not in [0, 3)"),
    (lambda: ops.quantile(np.ones(3), 1.5), "q must be a scalar or 1-D with values in [0, 1]"),
    (lambda: ops.norm(np.ones((2, 2)), "nuc"), "Invalid `ord` argument for matrix norm"),
    (lambda: ops.add(np.ones(2), np.array(["a", "b"])), "Invalid dtype"),
    (lambda: ops.moveaxis(np.ones((2, 3)), [0, 1], [0]), "must have the same number of axes"),
    (lambda: ops.diagonal(np.ones(3)), "diagonal: `x` must have rank >= 2"),
    (lambda: ops.broadcast_to(np.ones(3), (2, 2)), "cannot broadcast a tensor of shape (3,) to (2, 2)"),
    (lambda: ops.cholesky(-np.eye(2)), "Cholesky decomposition was not successful"),
    (lambda: ops.bitwise_and(np.ones(2), np.ones(2)), "expected integer or bool tensors"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert message in str(info.value)

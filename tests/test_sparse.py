"""tf.sparse: gradients through SparseTensor values and dense operands (first and second order against
finite differences), closed-form checks against dense equivalents, and errors."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn
from tapeflow.framework.errors import InvalidArgumentError

INDICES = [[0, 1], [1, 3], [2, 1], [2, 2]]
SHAPE = [3, 4]
R = np.random.default_rng(11)


def _sp(values):
    return tf.sparse.SparseTensor(INDICES, values, SHAPE)


FUNCTIONS = [
    ("sparse_dense_matmul", lambda v, b: tf.sparse.sparse_dense_matmul(_sp(v), b) ** 2, [(4,), (4, 2)]),
    ("sparse_dense_matmul_adjoint", lambda v, b: tf.sparse.sparse_dense_matmul(
        _sp(v), b, adjoint_a=True, adjoint_b=True) ** 2, [(4,), (2, 3)]),
    ("dense_sparse_matmul", lambda v, a: tf.sparse.sparse_dense_matmul(a, _sp(v)) ** 2, [(4,), (2, 3)]),
    ("to_dense", lambda v: tf.sparse.to_dense(_sp(v)) ** 2, [(4,)]),
    ("from_dense", lambda d: tf.sparse.from_dense(d).values ** 2, [(3, 4)]),
    ("reduce_sum_axis", lambda v: tf.sparse.reduce_sum(_sp(v), axis=1) ** 2, [(4,)]),
    ("reduce_max_axis", lambda v: tf.sparse.reduce_max(_sp(v), axis=0) ** 2, [(4,)]),
    ("add_sparse", lambda v, w: tf.sparse.add(_sp(v), tf.sparse.SparseTensor([[0, 1], [0, 0]], w, SHAPE)).values ** 2,
     [(4,), (2,)]),
    ("add_dense", lambda v, d: tf.sparse.add(_sp(v), d) ** 2, [(4,), (3, 4)]),
    ("times_dense", lambda v, d: (_sp(v) * d).values ** 2, [(4,), (1, 4)]),
]


@pytest.mark.parametrize("name,f,shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_gradients_match_finite_differences(name, f, shapes):
    inputs = [R.uniform(0.5, 2.0, s) * (1 + i) for i, s in enumerate(shapes)]   # non-zero, no ties
    check_gradients(f, *inputs)
    check_gradients(vjp_fn(f), *inputs, atol=1e-5)


def test_matmul_equals_the_dense_product():
    values = R.standard_normal(4)
    b = R.standard_normal((4, 5))
    dense = tf.sparse.to_dense(_sp(values)).numpy()
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(_sp(values), b).numpy(), dense @ b, rtol=1e-12)
    c = R.standard_normal((3, 2))
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(_sp(values), c, adjoint_a=True).numpy(),
                               dense.T @ c, rtol=1e-12)


def test_reduce_and_slice_agree_with_dense():
    sp = _sp(R.standard_normal(4))
    dense = tf.sparse.to_dense(sp).numpy()
    np.testing.assert_allclose(tf.sparse.reduce_sum(sp, axis=[0, 1]).numpy(), dense.sum(), rtol=1e-12)
    np.testing.assert_allclose(tf.sparse.reduce_sum(sp, axis=0, keepdims=True).numpy(), dense.sum(0, keepdims=True))
    sliced = tf.sparse.slice(sp, [1, 1], [5, 2])
    assert sliced.shape == tf.TensorShape([2, 2])
    np.testing.assert_array_equal(tf.sparse.to_dense(sliced).numpy(), dense[1:, 1:3])
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.transpose(sp)).numpy(), dense.T)
    back = tf.sparse.from_dense(dense)
    np.testing.assert_array_equal(back.indices.numpy(), INDICES)


def test_reorder_then_to_dense_and_unordered_refusal():
    sp = tf.sparse.SparseTensor([[1, 0], [0, 1]], [1.5, 2.5], [2, 2])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[0,1\] is out of order"):
        tf.sparse.to_dense(sp)
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.reorder(sp)).numpy(), [[0, 2.5], [1.5, 0]])
    np.testing.assert_array_equal(tf.sparse.to_dense(sp, validate_indices=False).numpy(), [[0, 2.5], [1.5, 0]])


@pytest.mark.parametrize("call,error,message", [
    (lambda: tf.sparse.SparseTensor([0, 0], [1.], [2, 2]), ValueError, "indices must have rank 2"),
    (lambda: tf.sparse.SparseTensor([[0, 0]], [1., 2.], [2, 2]), ValueError, "values must be a vector of the 1"),
    (lambda: tf.sparse.SparseTensor([[0, 0]], [1.], [2, 2, 2]), ValueError, "dense_shape must be a vector of 2"),
    (lambda: tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 5]], [1.], [2, 2])), InvalidArgumentError,
     r"indices\[0\] = \[0,5\] is out of bounds"),
    (lambda: tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 1], [0, 1]], [1., 2.], [2, 2])), InvalidArgumentError,
     "is repeated"),
    (lambda: tf.sparse.add(_sp([1., 2., 3., 4.]), tf.sparse.SparseTensor([[0, 0]], [1.], [3, 2])),
     InvalidArgumentError, "shapes do not match: got 4 and 2 for dimension 1"),
    (lambda: tf.sparse.sparse_dense_matmul(_sp([1., 2., 3., 4.]), tf.ones([3, 2])), InvalidArgumentError,
     "inner dimension does not match: 4 vs. 3"),
    (lambda: tf.reduce_sum(_sp([1., 2., 3., 4.])), ValueError, "use tf.sparse.to_dense"),
])
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_structure_ops_refuse_symbolic_indices_in_a_trace():
    @tf.function
    def f(indices):
        return tf.sparse.reorder(tf.sparse.SparseTensor(indices, [1., 2.], [2, 2])).values

    with pytest.raises(NotImplementedError, match="tf.sparse.reorder"):
        f(tf.constant([[1, 0], [0, 1]], tf.int64))


def test_traced_to_dense_and_matmul_follow_the_indices():
    @tf.function
    def f(indices, b):
        sp = tf.sparse.SparseTensor(indices, [1., 2.], [2, 2])
        return tf.sparse.to_dense(sp, validate_indices=False), tf.sparse.sparse_dense_matmul(sp, b)

    b = tf.constant([[1., 2.], [3., 4.]])
    for indices in ([[0, 0], [1, 1]], [[0, 1], [1, 0]]):
        dense, product = f(tf.constant(indices, tf.int64), b)
        expected = np.zeros((2, 2))
        expected[tuple(np.array(indices).T)] = [1., 2.]
        np.testing.assert_array_equal(dense.numpy(), expected)
        np.testing.assert_array_equal(product.numpy(), expected @ b.numpy())

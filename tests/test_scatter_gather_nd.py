"""scatter_nd, tensor_scatter_nd_*, gather_nd with batch_dims: gradients (first and second order against
finite differences, jacobians with stacked cotangents, derivatives of jacobians), batching proofs, traced
functions and errors."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, jacobian_fn, vjp_fn
from tapeflow.framework.batching import proven_block_diagonal
from tapeflow.framework.errors import InvalidArgumentError

R = np.random.default_rng(7)
IDX = [[1, 0], [2, 1], [1, 0], [0, 2]]           # a repeated index: updates add up / compete
IDX_DISTINCT = [[1, 0], [2, 1], [0, 2]]


def _distinct(shape):
    """Values far apart from each other, so min/max have no ties within finite-difference steps."""
    return R.permutation(np.prod(shape)).reshape(shape).astype(np.float64) * 0.37 - 2.0


FUNCTIONS = [
    ("scatter_nd", lambda u: tf.scatter_nd(IDX, u, [3, 3, 2]) ** 2, [(4, 2)]),
    ("tensor_scatter_add", lambda x, u: tf.tensor_scatter_nd_add(x, IDX, u) ** 2, [(3, 3, 2), (4, 2)]),
    ("tensor_scatter_sub", lambda x, u: tf.tensor_scatter_nd_sub(x, IDX, u) ** 2, [(3, 3, 2), (4, 2)]),
    ("tensor_scatter_min", lambda x, u: tf.tensor_scatter_nd_min(x, IDX, u) ** 2, [(3, 3, 2), (4, 2)]),
    ("tensor_scatter_max", lambda x, u: tf.tensor_scatter_nd_max(x, IDX, u) ** 2, [(3, 3, 2), (4, 2)]),
    ("tensor_scatter_update", lambda x, u: tf.tensor_scatter_nd_update(x, IDX_DISTINCT, u) ** 2,
     [(3, 3, 2), (3, 2)]),
    ("gather_nd", lambda p: tf.gather_nd(p, IDX) ** 2, [(3, 3, 2)]),
    ("gather_nd_batch_dims", lambda p: tf.gather_nd(p, [[[1], [0], [1]], [[2], [2], [0]]], batch_dims=1) ** 2,
     [(2, 3, 2)]),
    ("gather_nd_batch_dims_2", lambda p: tf.gather_nd(p, [[[1], [0]], [[0], [0]]], batch_dims=2) ** 2, [(2, 2, 2)]),
    ("gather_nd_depth_0", lambda p: tf.gather_nd(p, tf.zeros([3, 0], tf.int32)) ** 2, [(2, 2)]),
    ("embedding_lookup_max_norm", lambda t: tf.nn.embedding_lookup(t, [[2, 0], [2, 1]], max_norm=1.5), [(3, 2)]),
]
IDS = [f[0] for f in FUNCTIONS]


@pytest.mark.parametrize("name,f,shapes", FUNCTIONS, ids=IDS)
def test_first_and_second_derivatives_match_finite_differences(name, f, shapes):
    inputs = [_distinct(s) + 0.1 * i for i, s in enumerate(shapes)]   # no value shared: no ties
    check_gradients(f, *inputs)
    check_gradients(vjp_fn(f), *inputs, atol=1e-5)


@pytest.mark.parametrize("name,f,shapes", FUNCTIONS, ids=IDS)
def test_jacobians_with_stacked_cotangents(name, f, shapes):
    inputs = [_distinct(s) + 0.1 * i for i, s in enumerate(shapes)]   # no value shared: no ties
    check_jacobian(f, *inputs)
    first = lambda *xs: jacobian_fn(f)(*xs)[0]  # noqa: E731
    check_gradients(first, *inputs, atol=1e-5)


def test_ties_share_the_gradient_evenly():
    x, u = tf.constant([1., 2., 3.]), tf.constant([2., 2., 0.5])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = tf.tensor_scatter_nd_max(x, [[1], [1], [0]], u)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1., 1 / 3, 1.])
    np.testing.assert_allclose(tape.gradient(y, u).numpy(), [1 / 3, 1 / 3, 0.])


def test_repeated_indices_combine_in_order():
    np.testing.assert_array_equal(tf.tensor_scatter_nd_sub([10, 10], [[0], [0], [1]], [1, 2, 3]).numpy(), [7, 7])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_max([0, 0], [[0], [0]], [5, 3]).numpy(), [5, 0])
    np.testing.assert_array_equal(tf.scatter_nd([[0], [0]], [[1, 2], [3, 4]], [2, 2]).numpy(), [[4, 6], [0, 0]])


def _proven(f, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return proven_block_diagonal(tape._tape.records, x._id, y._id)


BATCHING = [
    ("constant updates into rows", lambda x: tf.tensor_scatter_nd_add(x, [[0, 1], [3, 2]], [1., 2.]) * x, True),
    ("min with constants", lambda x: tf.tensor_scatter_nd_min(x, [[4, 0]], [0.]) * 2.0, True),
    ("update rows with constants", lambda x: tf.tensor_scatter_nd_update(x, [[4, 0]], [0.]) * 2.0, True),
    ("batched updates move rows", lambda x: tf.tensor_scatter_nd_add(tf.zeros([5, 3], tf.float64), [[1], [0]],
                                                                     x[:2]) * 2.0, False),
    ("scatter_nd moves rows", lambda x: tf.scatter_nd([[4], [3], [2], [1], [0]], x, [5, 3]) * 2.0, False),
    ("gather_nd across rows", lambda x: tf.gather_nd(x, [[1, 0], [0, 0], [2, 1], [3, 1], [4, 2]]) * 2.0, False),
    ("gather_nd within rows", lambda x: tf.gather_nd(x, [[2], [0], [1], [1], [2]], batch_dims=1) * 2.0, True),
]


@pytest.mark.parametrize("name,f,independent", BATCHING, ids=[b[0] for b in BATCHING])
def test_batching_rules_are_exact(name, f, independent):
    x = tf.constant(_distinct((5, 3)))
    assert _proven(f, x) is independent
    check_jacobian(f, x.numpy())


def test_traced_function_checks_indices_at_every_call():
    @tf.function
    def gather(params, indices):
        return tf.gather_nd(params, indices)

    p = tf.constant(np.arange(12.).reshape(3, 4))
    np.testing.assert_array_equal(gather(p, tf.constant([[1, 2]])).numpy(), [6.])
    # [0, 5] would be the valid linear position 5 = [1, 1] if the op flattened params: it must raise.
    with pytest.raises(InvalidArgumentError, match=r"gather_nd: indices\[0\] = \[0, 5\] does not index"):
        gather(p, tf.constant([[0, 5]]))

    @tf.function
    def scatter(updates, indices):
        return tf.tensor_scatter_nd_add(tf.zeros([4]), indices, updates)

    np.testing.assert_array_equal(scatter(tf.constant([1., 2.]), tf.constant([[1], [1]])).numpy(), [0, 3, 0, 0])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[4\] does not index into shape \[4\]"):
        scatter(tf.constant([1., 2.]), tf.constant([[1], [4]]))


@pytest.mark.parametrize("call,message", [
    (lambda: tf.scatter_nd([[5]], [2], [3]), r"scatter_nd: indices\[0\] = \[5\] does not index into shape \[3\]"),
    (lambda: tf.scatter_nd([[1.]], [2], [3]), "scatter_nd: indices must be integers"),
    (lambda: tf.scatter_nd([[1]], [2, 3], [3]), r"scatter_nd: updates must have shape \(1,\)"),
    (lambda: tf.scatter_nd([[1, 1, 1]], [2], [3, 3]), "index depth 3 must be between 1 and the rank 2"),
    (lambda: tf.tensor_scatter_nd_add(tf.constant([1., 2.]), [[1]], tf.constant([1])),
     "expected to be a float tensor but is a int32 tensor"),
    (lambda: tf.tensor_scatter_nd_max(["a"], [[0]], ["b"]), "string tensors are not supported"),
    (lambda: tf.gather_nd(np.zeros((2, 3)), [[1], [2], [0]], batch_dims=1), "first batch_dims=1 dimensions"),
    (lambda: tf.gather_nd(np.zeros((2, 3)), [[1, 1, 1]]), "index depth 3 is larger than the rank 2"),
    (lambda: tf.gather_nd(np.zeros((2, 3)), 1), "indices must be at least a vector"),
    (lambda: tf.nn.embedding_lookup([tf.zeros([1, 2]), tf.zeros([3, 2])], [0]), "'div' strategy"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((InvalidArgumentError, ValueError), match=message):
        call()


def test_gather_nd_negative_or_too_large_batch_dims():
    with pytest.raises(ValueError, match="negative batch_dims"):
        tf.gather_nd(np.zeros((2, 3)), [[1], [2]], batch_dims=-1)
    with pytest.raises(ValueError, match="batch_dims=2 must be less than rank"):
        tf.gather_nd(np.zeros((2, 3, 4)), [[1], [2]], batch_dims=2)


def test_embedding_lookup_of_ragged_ids_is_ragged():
    table = tf.constant([[0., 1.], [2., 3.], [4., 5.]])
    out = tf.nn.embedding_lookup(table, tf.ragged.constant([[2, 0], [1]]))
    assert out.to_list() == [[[4., 5.], [0., 1.]], [[2., 3.]]]


def test_set_shape_merges_in_a_trace_and_checks_eagerly():
    t = tf.constant([[1., 2.], [3., 4.]])
    t.set_shape([None, 2])
    t.set_shape(None)
    with pytest.raises(ValueError, match=r"Tensor's shape \(2, 2\) is not compatible with supplied shape \(3, 2\)"):
        t.set_shape([3, 2])
    with pytest.raises(ValueError, match="not compatible"):
        t.set_shape([2])
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, None])])
    def f(x):
        x.set_shape([None, 3])
        seen.append(x.shape)
        with pytest.raises(ValueError, match="not compatible"):
            x.set_shape([None, 4])
        return x * 2

    np.testing.assert_array_equal(f(tf.ones([2, 3])).numpy(), np.full((2, 3), 2.))
    assert seen[0] == tf.TensorShape([None, 3])


def test_initializers_namespace():
    assert tf.initializers is tf.keras.initializers
    assert isinstance(tf.initializers.zeros(), tf.keras.initializers.Zeros)
    assert tf.keras.initializers.glorot_uniform is tf.keras.initializers.GlorotUniform
    layer = tf.keras.layers.Dense(3, kernel_initializer=tf.initializers.zeros())
    np.testing.assert_array_equal(layer(tf.ones([1, 2])).numpy(), np.zeros((1, 3)))


def test_saved_model_round_trip(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([3, 4]), tf.TensorSpec([2, 1], tf.int32)])
        def f(self, x, idx):
            y = tf.tensor_scatter_nd_max(x, idx, tf.ones([2, 4]))
            z = tf.scatter_nd(idx, tf.ones([2, 4]), [3, 4])
            return tf.gather_nd(y + z, idx) + tf.gather_nd(x, [[0], [1], [2]], batch_dims=1)[:2, None]

    x = tf.constant(np.arange(12.).reshape(3, 4).astype("float32") - 5)
    idx = tf.constant([[2], [0]])
    tf.saved_model.save(M(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded.f(x, idx).numpy(), [[-1., 0., 1., 2.], [2., 2., 2., 2.]])

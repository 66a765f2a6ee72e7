"""keras.ops core and math ops and keras.config: conversion, control flow and loops, scatter and slice
updates (values, derivatives of first and second order, jacobians, traced functions), erf/erfinv, top_k,
segment reductions, and the shared floatx/epsilon/image-format settings."""
import math

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn
from tapeflow.keras import ops

rng = np.random.default_rng(11)


# --------------------------------------------------------------- conversion ---
def test_conversion_casts_and_shapes():
    t = ops.convert_to_tensor([1.5, 2.0])
    assert isinstance(t, tf.Tensor) and t.dtype.name == "float32" and ops.is_tensor(t) and not ops.is_tensor([1])
    assert ops.convert_to_tensor([1, 2]).dtype.name == "int32"
    assert ops.convert_to_tensor(np.ones(2)).dtype.name == "float64"
    assert ops.convert_to_tensor([1.7, -2.2], dtype="int32").numpy().tolist() == [1, -2]
    assert ops.convert_to_tensor([0, 3], dtype="bool").numpy().tolist() == [False, True]
    array = ops.convert_to_numpy(t)
    assert isinstance(array, np.ndarray) and array.tolist() == [1.5, 2.0]
    assert ops.cast(t, "int32").numpy().tolist() == [1, 2] and ops.dtype(t) == "float32"
    assert ops.shape(np.ones((2, 3))) == (2, 3) and ops.shape(t) == (2,)
    assert ops.saturate_cast(np.array([300.0, -5.0, 7.0]), "uint8").numpy().tolist() == [255, 0, 7]
    assert [u.numpy().tolist() for u in ops.unstack(np.arange(6).reshape(2, 3), axis=1)] == [[0, 3], [1, 4], [2, 5]]


def test_stop_gradient_blocks_the_tape():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = ops.sum(ops.multiply(ops.stop_gradient(x), x))
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 2.0]


# ------------------------------------------------------------ control flow ---
def test_cond_switch_and_loops():
    assert float(ops.cond(ops.convert_to_tensor(True), lambda: 1.0, lambda: 2.0)) == 1.0
    assert ops.switch(5, [lambda x: x + 1, lambda x: x * 10], 3) == 30         # the index is clamped
    i, total = ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
    assert (int(i), int(total)) == (4, 6)
    assert int(ops.while_loop(lambda v: v < 100, lambda v: v * 2, 1)) == 128
    assert int(ops.while_loop(lambda v: v < 100, lambda v: v * 2, 1, maximum_iterations=3)) == 8
    assert ops.fori_loop(0, 5, lambda i, acc: acc + i, ops.convert_to_tensor(0)).numpy() == 10
    out = ops.map(lambda row: {"sum": ops.sum(row), "twice": row * 2}, np.arange(6.0).reshape(3, 2))
    assert out["sum"].numpy().tolist() == [1.0, 5.0, 9.0] and out["twice"].shape == (3, 2)
    np.testing.assert_array_equal(ops.vectorized_map(lambda x: x[0] * x[1], (np.arange(3.0), np.arange(3.0))).numpy(),
                                  [0.0, 1.0, 4.0])


def test_scan_carries_state_and_stacks_outputs():
    xs = np.arange(1.0, 5.0)
    carry, ys = ops.scan(lambda c, x: (c + x, c * x), 0.0, xs)
    assert float(carry) == 10.0 and ys.numpy().tolist() == [0.0, 2.0, 9.0, 24.0]
    carry, ys = ops.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True)
    assert float(carry) == 10.0 and ys.numpy().tolist() == [9.0, 7.0, 4.0, 0.0]
    carry, ys = ops.scan(lambda c, _: (c * 2, None), 1.0, length=3)
    assert float(carry) == 8.0 and ys is None
    (a, b), ys = ops.scan(lambda c, x: ((c[0] + x["u"], c[1] * x["v"]), c[0]), (0.0, 1.0),
                          {"u": np.ones(3), "v": np.full(3, 2.0)})
    assert (float(a), float(b)) == (3.0, 8.0) and ys.numpy().tolist() == [0.0, 1.0, 2.0]


def test_associative_scan_is_a_running_reduction():
    x = rng.normal(size=(5, 2))
    np.testing.assert_allclose(ops.associative_scan(ops.add, x).numpy(), np.cumsum(x, 0))
    np.testing.assert_allclose(ops.associative_scan(ops.add, x, reverse=True).numpy(), np.cumsum(x[::-1], 0)[::-1])
    np.testing.assert_allclose(ops.associative_scan(ops.maximum, x, axis=1).numpy(), np.maximum.accumulate(x, 1))
    pairs = ops.associative_scan(lambda a, b: (a[0] * b[0], a[1] + b[1]), (x[:, 0], x[:, 1]))
    np.testing.assert_allclose(pairs[0].numpy(), np.cumprod(x[:, 0]))


def test_gradients_flow_through_loops():
    x = tf.Variable(1.5)
    with tf.GradientTape() as tape:
        carry, _ = ops.scan(lambda c, w: (ops.sin(c) * w, c), x, np.array([1.0, 2.0, 0.5], "float32"))
    expected = math.cos(2 * math.sin(math.sin(1.5))) * 0.5 * math.cos(math.sin(1.5)) * 2 * math.cos(1.5)
    assert float(tape.gradient(carry, x)) == pytest.approx(expected, rel=1e-5)


def test_custom_gradient_with_keras_signature():
    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))
        return ops.log(1 + e), grad

    x = tf.Variable([100.0, 0.0])
    with tf.GradientTape() as tape:
        y = ops.sum(log1pexp(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 0.5])


# -------------------------------------------------------- scatter / slices ---
def test_scatter_and_slice_values():
    indices = np.array([[0, 1], [2, 0], [0, 1]])
    values = np.array([1.0, 2.0, 3.0])
    expected = np.zeros((3, 2))
    np.add.at(expected, tuple(indices.T), values)                      # repeated indices accumulate
    np.testing.assert_array_equal(ops.scatter(indices, values, (3, 2)).numpy(), expected)
    rows = ops.scatter(np.array([[2], [0]]), np.array([[1.0, 2], [3, 4]]), (3, 2)).numpy()
    np.testing.assert_array_equal(rows, [[3, 4], [0, 0], [1, 2]])
    base = np.arange(12.0).reshape(3, 4)
    updated = base.copy()
    updated[0, 1], updated[2, 3] = -1, -2
    np.testing.assert_array_equal(ops.scatter_update(base, [[0, 1], [2, 3]], [-1.0, -2.0]).numpy(), updated)
    np.testing.assert_array_equal(ops.scatter_update(base, [[0, 1], [0, 1]], [-1.0, -2.0]).numpy()[0, 1], -2.0)
    np.testing.assert_array_equal(ops.slice(base, [1, 1], [2, 2]).numpy(), base[1:3, 1:3])
    np.testing.assert_array_equal(ops.slice(base, [1, 2], [-1, -1]).numpy(), base[1:, 2:])
    updated = base.copy()
    updated[1:3, 0:2] = [[7, 8], [9, 10]]
    np.testing.assert_array_equal(ops.slice_update(base, [1, 0], np.array([[7.0, 8], [9, 10]])).numpy(), updated)


UPDATE_CASES = [
    ("scatter", lambda v: ops.scatter(np.array([[0, 1], [2, 0], [0, 1]]), v, (3, 2)), [rng.normal(size=3)]),
    ("scatter_update", lambda x, u: ops.scatter_update(x, np.array([[0, 1], [2, 0]]), u),
     [rng.normal(size=(3, 2)), rng.normal(size=2)]),
    ("scatter_update repeated", lambda x, u: ops.scatter_update(x, np.array([[1], [0], [1]]), u),
     [rng.normal(size=(3, 2)), rng.normal(size=(3, 2))]),
    ("slice", lambda x: ops.slice(x, np.array([1, 0]), (2, 2)), [rng.normal(size=(3, 3))]),
    ("slice_update", lambda x, u: ops.slice_update(x, np.array([0, 1]), u),
     [rng.normal(size=(3, 3)), rng.normal(size=(2, 2))]),
]


@pytest.mark.parametrize("name, f, inputs", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_derivatives(name, f, inputs):
    def squared(*xs):                                   # nonlinear, so the second derivative is not zero
        return ops.square(f(*xs))
    check_gradients(f, *inputs)
    check_gradients(vjp_fn(squared), *inputs, atol=1e-5, rtol=1e-4)
    check_jacobian(lambda *xs: ops.reshape(squared(*xs), (-1,)), *inputs)


def test_repeated_scatter_update_indices_give_the_last_update_its_gradient():
    x, u = tf.constant(np.zeros((2, 1))), tf.constant(np.array([[1.0], [2.0]]))
    with tf.GradientTape() as tape:
        tape.watch(u)
        y = ops.sum(ops.scatter_update(x, np.array([[0], [0]]), u))
    assert tape.gradient(y, u).numpy().tolist() == [[0.0], [1.0]]


def test_traced_slices_read_their_start_on_every_call():
    @tf.function
    def window(x, start):
        return ops.slice(x, start, (2,))

    x = tf.constant(np.arange(6.0))
    assert window(x, tf.constant([1])).numpy().tolist() == [1.0, 2.0]
    assert window(x, tf.constant([3])).numpy().tolist() == [3.0, 4.0]


# --------------------------------------------------------------------- math ---
def test_erf_and_erfinv():
    x = np.array([-0.999, -0.5, 0.0, 0.3, 0.9, 0.999999])
    inverse = ops.erfinv(x).numpy()
    np.testing.assert_allclose([math.erf(v) for v in inverse], x, rtol=1e-14, atol=1e-15)
    assert ops.erfinv(np.array([1.0, -1.0, 1.5])).numpy().tolist()[:2] == [np.inf, -np.inf]
    assert np.isnan(ops.erfinv(np.array([1.5])).numpy()[0])
    np.testing.assert_allclose(ops.erf(x).numpy(), [math.erf(v) for v in x], rtol=1e-14)
    assert ops.erfinv(np.array([0.5], "float32")).dtype.name == "float32"


def test_math_ops_against_numpy():
    x = rng.normal(size=(3, 5))
    values, indices = ops.top_k(x, 2)
    order = np.argsort(-x, axis=-1)[:, :2]
    assert indices.dtype.name == "int32" and (indices.numpy() == order).all()
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, order, -1))
    predictions = np.array([[0.1, 0.5, 0.5, 0.2], [0.9, 0.1, 0.0, 0.3]])
    assert ops.in_top_k(np.array([2, 3]), predictions, 1).numpy().tolist() == [True, False]
    assert ops.in_top_k(np.array([3, 3]), predictions, 2).numpy().tolist() == [False, True]
    data, ids = rng.normal(size=(5, 2)), np.array([0, 2, 0, 3, 2])
    sums, maxima = np.zeros((4, 2)), np.full((4, 2), np.finfo("float64").min)
    np.add.at(sums, ids, data)
    np.maximum.at(maxima, ids, data)
    np.testing.assert_allclose(ops.segment_sum(data, ids).numpy(), sums)
    np.testing.assert_allclose(ops.segment_max(data, ids).numpy(), maxima)
    np.testing.assert_allclose(ops.segment_sum(data, ids, num_segments=5).numpy()[:4], sums)
    np.testing.assert_allclose(ops.logsumexp(x, 1).numpy(), np.log(np.exp(x).sum(1)))
    np.testing.assert_allclose(ops.rsqrt(np.abs(x) + 1).numpy(), 1 / np.sqrt(np.abs(x) + 1))
    spd = x[:, :3].T @ x[:, :3] + np.eye(3)
    np.testing.assert_allclose(float(ops.logdet(spd)), np.log(np.linalg.det(spd)))
    frames = ops.extract_sequences(np.arange(10.0), 4, 3).numpy()
    np.testing.assert_array_equal(frames, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    gray = ops.rgb_to_grayscale(np.ones((2, 2, 3)) * [1.0, 2.0, 3.0]).numpy()
    np.testing.assert_allclose(gray, np.full((2, 2, 1), 0.2989 + 2 * 0.5870 + 3 * 0.1140))


MATH_CASES = [
    ("erf", ops.erf, [rng.normal(size=(2, 3))]), ("erfinv", ops.erfinv, [rng.uniform(-0.9, 0.9, (2, 3))]),
    ("logsumexp", lambda x: ops.logsumexp(x, 1), [rng.normal(size=(2, 3))]),
    ("rsqrt", ops.rsqrt, [rng.uniform(0.5, 2, (2, 3))]),
    ("top_k values", lambda x: ops.top_k(x, 2)[0], [rng.normal(size=(2, 4))]),
    ("segment_sum", lambda x: ops.segment_sum(x, np.array([1, 0, 1])), [rng.normal(size=(3, 2))]),
    ("segment_max", lambda x: ops.segment_max(x, np.array([1, 0, 1])), [rng.normal(size=(3, 2))]),
    ("extract_sequences", lambda x: ops.extract_sequences(x, 3, 2), [rng.normal(size=(2, 7))]),
    ("logdet", ops.logdet, [np.eye(3) * 2 + 0.1 * rng.normal(size=(3, 3))]),
]


@pytest.mark.parametrize("name, f, inputs", MATH_CASES, ids=[c[0] for c in MATH_CASES])
def test_math_derivatives(name, f, inputs):
    def nonlinear(*xs):
        return ops.sin(f(*xs))
    check_gradients(f, *inputs)
    check_gradients(vjp_fn(nonlinear), *inputs, atol=1e-5, rtol=1e-4)


def test_third_derivative_of_erfinv():
    f = vjp_fn(vjp_fn(ops.erfinv, seed=3), seed=4)
    check_gradients(f, rng.uniform(-0.5, 0.5, (3,)), atol=1e-4, rtol=1e-3)


# ------------------------------------------------------------------ config ---
def test_config_shares_the_backend_settings():
    config = tf.keras.config
    assert config.floatx() == "float32" and config.epsilon() == 1e-7 and config.image_data_format() == "channels_last"
    try:
        config.set_floatx("float64")
        config.set_epsilon(1e-5)
        config.set_image_data_format("channels_first")
        assert tf.keras.backend.floatx() == "float64" and tf.keras.backend.epsilon() == 1e-5
        assert tf.keras.backend.image_data_format() == "channels_first"
        assert ops.ones(2).dtype.name == "float64"
        assert ops.binary_crossentropy(np.array([1.0]), np.array([0.0])).numpy()[0] == pytest.approx(-np.log(1e-5))
    finally:
        config.set_floatx("float32")
        config.set_epsilon(1e-7)
        config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="data_format"):
        config.set_image_data_format("channels_middle")
    with pytest.raises(ValueError, match="Unknown `floatx` value"):
        config.set_floatx("int32")
    assert config.backend() == "tapeflow" and config.dtype_policy().name == "float32"
    config.disable_interactive_logging()
    assert not config.is_interactive_logging_enabled()
    config.enable_interactive_logging()
    assert config.is_interactive_logging_enabled()
    with pytest.warns(UserWarning, match="never deserializes code"):
        config.enable_unsafe_deserialization()


# ------------------------------------------------------------------ errors ---
@pytest.mark.parametrize("call, message", [
    (lambda: ops.scatter(np.array([[3, 0]]), np.ones(1), (3, 2)), "is outside a tensor of shape (3, 2)"),
    (lambda: ops.scatter(np.array([[0, 0]]), np.ones(2), (3, 2)), "values must have shape (1,)"),
    (lambda: ops.scatter_update(np.ones((3, 2)), [[0, 5]], [1.0]), "does not index into a tensor of shape (3, 2)"),
    (lambda: ops.slice(np.ones((3, 3)), [2, 0], [2, 2]), "does not fit in axis 0 of size 3"),
    (lambda: ops.slice(np.ones((3, 3)), [0], [2, 2]), "start indices must be 2 integers"),
    (lambda: ops.slice_update(np.ones((3, 3)), [0, 2], np.ones((2, 2))), "does not fit in axis 1 of size 3"),
    (lambda: ops.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), (0, 0)), "returned 1 values for 2"),
    (lambda: ops.scan(lambda c, x: (c, x), 0.0), "give `xs` or `length`"),
    (lambda: ops.map(lambda x: x, (np.ones(2), np.ones(3))), "the same leading dimension"),
    (lambda: ops.in_top_k(np.array([0]), np.ones(3), 1), "predictions must be [batch, classes]"),
    (lambda: ops.segment_sum(np.ones((3, 2)), np.array([0.0, 1, 1])), "segment_ids must be 1-D integers"),
    (lambda: ops.convert_to_tensor([1.0], sparse=True), "sparse and ragged tensors are not supported"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("f", [
    lambda x: ops.slice_update(x, np.array([0, 1]), ops.square(ops.slice(x, np.array([0, 0]), (3, 1)))),
    lambda x: ops.cumprod(ops.slice(x, np.array([0, 1]), (3, 2)), axis=1),
    lambda x: ops.arctan2(x, ops.erfinv(ops.multiply(x, 0.3))),
], ids=["slice_update of a slice", "cumprod of a slice", "arctan2 and erfinv"])
def test_batch_jacobian_through_row_preserving_ops(f):
    # These ops declare that they keep batch rows independent, so jacobians may be assembled from
    # per-row blocks: both must equal the loop of one-hot gradients (check_jacobian compares with it).
    x0 = rng.uniform(0.2, 1.0, (3, 3))
    full = check_jacobian(f, x0)[0]
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    blocks = tape.batch_jacobian(y, x).numpy()
    for i in range(3):
        np.testing.assert_allclose(blocks[i], full[i, :, i, :], rtol=1e-12, atol=1e-14)
        full[i, :, i, :] = 0
    assert not full.any()

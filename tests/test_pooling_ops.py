"""tf.nn max and average pooling: values against window loops in numpy, gradients of first,
second and third order against finite differences, jacobians against loops of gradients."""
import itertools

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, jacobian_fn, vjp_fn

rng = np.random.default_rng(4321)


def r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def distinct(*shape):
    """Values at least 0.01 apart, so no finite-difference step changes which cell is a window's maximum."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.01 - n * 0.005).reshape(shape)


def same_pads(size, window, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def ref_pool(x, ksize, strides, pads, kind):
    """Channels-last pooling by loops over windows; padding takes no part (max ignores it, mean skips it)."""
    rank = x.ndim - 2
    out_spatial = [(s + b + a - k) // st + 1 for s, k, st, (b, a) in zip(x.shape[1:-1], ksize, strides, pads)]
    y = np.zeros((x.shape[0],) + tuple(out_spatial) + (x.shape[-1],))
    for pos in itertools.product(*[range(o) for o in out_spatial]):
        index = []
        for p, k, st, (b, _), size in zip(pos, ksize, strides, pads, x.shape[1:-1]):
            index.append(slice(max(p * st - b, 0), min(p * st - b + k, size)))
        window = x[(slice(None),) + tuple(index)]
        axes = tuple(range(1, rank + 1))
        y[(slice(None),) + pos] = window.max(axes) if kind == "max" else window.mean(axes)
    return y


FMT = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
CASES = [  # spatial shape, ksize, strides, padding
    ((7,), (2,), (2,), "VALID"),
    ((7,), (3,), (2,), "SAME"),
    ((8,), (3,), (1,), "SAME"),
    ((6, 7), (2, 2), (2, 2), "VALID"),
    ((7, 5), (3, 2), (2, 1), "SAME"),
    ((5, 6), (3, 3), (3, 2), "SAME"),
    ((4, 4), (4, 4), (1, 1), "VALID"),
    ((3, 5, 4), (2, 3, 2), (1, 2, 2), "SAME"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("first", [False, True], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("spatial,ksize,strides,padding", CASES)
def test_pooling_matches_window_loops(spatial, ksize, strides, padding, first, kind):
    rank = len(spatial)
    x_last = r(3, *spatial, 2)
    pads = ([(0, 0)] * rank if padding == "VALID"
            else [same_pads(s, k, st) for s, k, st in zip(spatial, ksize, strides)])
    expected = ref_pool(x_last, ksize, strides, pads, kind)
    x = np.moveaxis(x_last, -1, 1) if first else x_last
    fmt = FMT[rank][first]
    generic = getattr(tf.nn, f"{kind}_pool")(x, list(ksize), list(strides), padding, fmt)
    named = getattr(tf.nn, f"{kind}_pool{rank}d")(x, list(ksize), list(strides), padding, fmt)
    for got in (generic, named):
        got = np.moveaxis(got.numpy(), 1, -1) if first else got.numpy()
        np.testing.assert_allclose(got, expected, atol=1e-12)


def test_float32_batch_sizes_and_long_forms():
    for batch in (0, 1, 4):
        x = r(batch, 6, 6, 3)
        got = tf.nn.max_pool2d(x.astype(np.float32), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        assert got.dtype == tf.float32 and got.shape == (batch, 3, 3, 3)
        np.testing.assert_allclose(got.numpy(), ref_pool(x, (2, 2), (2, 2), [(0, 0)] * 2, "max"), atol=1e-6)
        got = tf.nn.avg_pool2d(x.astype(np.float32), 3, 2, "SAME")
        np.testing.assert_allclose(got.numpy(), ref_pool(x, (3, 3), (2, 2), [(0, 1)] * 2, "avg"), atol=1e-6)


def test_max_pool_explicit_padding_never_picks_the_padding():
    x = -1 - rng.uniform(size=(2, 4, 5, 2))  # all negative: a zero from padding would win
    got = tf.nn.max_pool2d(x, 2, 2, [[0, 0], [1, 1], [1, 0], [0, 0]])
    np.testing.assert_allclose(got.numpy(), ref_pool(x, (2, 2), (2, 2), [(1, 1), (1, 0)], "max"), atol=1e-12)
    only_padding = tf.nn.max_pool1d(np.ones((1, 3, 1)), 2, 2, [[0, 0], [2, 0], [0, 0]])
    np.testing.assert_array_equal(only_padding.numpy().ravel(), [-np.inf, 1.0])


def test_avg_pool_same_divides_by_the_real_cells():
    x = np.ones((1, 3, 3, 1))
    np.testing.assert_array_equal(tf.nn.avg_pool2d(x, 2, 2, "SAME").numpy(), np.ones((1, 2, 2, 1)))
    x = np.arange(1.0, 6.0).reshape(1, 5, 1)
    np.testing.assert_allclose(tf.nn.avg_pool1d(x, 3, 2, "SAME").numpy().ravel(), [1.5, 3.0, 4.5])


def test_max_pool_ties_and_nan():
    x = tf.constant([[[2.0], [2.0], [1.0], [np.nan], [np.nan], [5.0]]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.max_pool1d(x, 2, 2, "VALID")
    np.testing.assert_array_equal(y.numpy().ravel(), [2.0, np.nan, np.nan])
    # The first maximum of a window takes the gradient; a NaN is the maximum, the first NaN first.
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().ravel(), [1.0, 0.0, 0.0, 1.0, 1.0, 0.0])


def test_max_pool_gradient_routes_to_the_maximum():
    x = tf.constant(np.array([[1.0, 4.0, 3.0], [2.0, 0.0, 5.0], [7.0, 6.0, 8.0]]).reshape(1, 3, 3, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.max_pool2d(x, 2, 1, "VALID")
    np.testing.assert_array_equal(y.numpy().reshape(2, 2), [[4.0, 5.0], [7.0, 8.0]])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().reshape(3, 3), [[0, 1, 0], [0, 0, 1], [1, 0, 1]])


def test_traced_function_matches_eager():
    x = tf.constant(distinct(2, 6, 6, 2))

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.square(tf.nn.max_pool2d(x, 3, 2, "SAME")) + tf.nn.avg_pool2d(x, 2, 2, "VALID"))
        return y, tape.gradient(y, x)
    for a, b in zip(step(x), tf.function(step)(x)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


# -------------------------------------------------------------- gradients ---
GRADIENT_CASES = [
    ("max1d_same", lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"), (2, 7, 2)),
    ("max2d_valid", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), (2, 4, 5, 2)),
    ("max2d_overlapping_nchw", lambda x: tf.nn.max_pool2d(x, 3, [1, 2], "SAME", "NCHW"), (1, 2, 5, 4)),
    ("max2d_explicit", lambda x: tf.nn.max_pool2d(x, 2, 2, [[0, 0], [1, 0], [0, 1], [0, 0]]), (1, 3, 3, 2)),
    ("max3d", lambda x: tf.nn.max_pool3d(x, 2, [1, 2, 2], "SAME"), (1, 3, 3, 4, 1)),
    ("avg1d_same", lambda x: tf.nn.avg_pool1d(x, 3, 2, "SAME"), (2, 7, 2)),
    ("avg2d_overlapping_nchw", lambda x: tf.nn.avg_pool2d(x, 3, [1, 2], "SAME", "NCHW"), (1, 2, 5, 4)),
    ("avg3d", lambda x: tf.nn.avg_pool3d(x, [2, 1, 2], 2, "VALID"), (1, 3, 3, 4, 2)),
]
PARAMS = [pytest.param(f, shape, id=name) for name, f, shape in GRADIENT_CASES]


@pytest.mark.parametrize("f,shape", PARAMS)
def test_first_derivatives_match_finite_differences(f, shape):
    check_gradients(f, distinct(*shape))


@pytest.mark.parametrize("f,shape", PARAMS)
def test_second_derivatives_match_finite_differences(f, shape):
    # With the square the first derivative's cotangent depends on x: MaxPoolGrad's gradient in g is used.
    check_gradients(vjp_fn(lambda x: tf.square(f(x))), distinct(*shape), atol=1e-5)


@pytest.mark.parametrize("f,shape", [PARAMS[1], PARAMS[2], PARAMS[6]])
def test_third_derivatives_match_finite_differences(f, shape):
    first = vjp_fn(lambda x: tf.pow(f(x), 3))
    # Squaring the first derivative makes the cotangents of the second depend on x, so the gradients of
    # the ops inside the second derivative (MaxPoolGradGrad, AvgPool) are part of the third.
    check_gradients(vjp_fn(lambda x: tf.square(first(x)[0]), seed=2), distinct(*shape), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("f,shape", [PARAMS[0], PARAMS[2], PARAMS[6]])
def test_jacobian_with_stacked_cotangents_matches_a_gradient_loop(f, shape):
    check_jacobian(f, distinct(*shape))


@pytest.mark.parametrize("f,shape", [PARAMS[1], PARAMS[6]])
def test_derivative_of_a_jacobian(f, shape):
    check_gradients(jacobian_fn(lambda x: tf.square(f(x))), distinct(*shape), atol=1e-5)


def test_second_derivative_of_max_pool_alone_is_zero():
    x = tf.constant(distinct(1, 4, 4, 1))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.max_pool2d(x, 2, 2, "VALID")
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    assert h is not None
    np.testing.assert_array_equal(h.numpy(), np.zeros((1, 4, 4, 1)))


# ----------------------------------------------------------------- errors ---
@pytest.mark.parametrize("call,message", [
    (lambda: tf.nn.avg_pool2d(np.zeros((1, 4, 4, 1)), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]),
     "avg_pool2d: padding must be 'VALID' or 'SAME'"),
    (lambda: tf.nn.max_pool2d(np.zeros((1, 4, 4, 1)), 2, 2, [[0, 0], [3, 0], [0, 0], [0, 0]]),
     "max_pool2d: explicit padding"),
    (lambda: tf.nn.max_pool2d(np.zeros((1, 4, 4, 1)), 5, 1, "VALID"),
     "max_pool2d: the window (extent 5) is larger than the padded input"),
    (lambda: tf.nn.max_pool2d(np.zeros((4, 4, 1)), 2, 2, "VALID"), "max_pool2d: input must be a tensor of rank 4"),
    (lambda: tf.nn.max_pool(np.zeros((1, 2, 2, 2, 2, 1)), 2, 2, "VALID"), "max_pool: input must have rank 3, 4 or 5"),
    (lambda: tf.nn.max_pool1d(np.zeros((1, 4, 1)), [2, 2], 2, "VALID"), "max_pool1d: ksize must be an int or a list"),
    (lambda: tf.nn.avg_pool1d(np.zeros((1, 4, 1), np.int64), 2, 2, "VALID"),
     "avg_pool1d: input must be a floating-point tensor"),
    (lambda: tf.nn.max_pool2d(np.zeros((1, 4, 4, 1)), 2, 2, "VALID", "NCW"), "max_pool2d: data_format must be"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        call()
    assert message in str(info.value)

"""tf.nn convolutions: values against direct numpy loops, gradients of first and second order
against finite differences, jacobians (stacked cotangents) against loops of gradients.

The references below share no code with tapeflow: each output position is an
einsum over its window of the zero-padded input, and a transposed convolution
scatters every input position's contribution into the output.
"""
import itertools

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, jacobian_fn, vjp_fn

rng = np.random.default_rng(1234)


def r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


# ------------------------------------------------------------ references ---
def same_pads(size, span, stride):
    """TensorFlow's "SAME": ceil(size / stride) outputs, the odd padding cell after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def ref_pads(padding, spatial, kernel, strides, dilations):
    if padding == "VALID":
        return [(0, 0)] * len(spatial)
    if padding == "SAME":
        return [same_pads(s, (k - 1) * d + 1, st) for s, k, st, d in zip(spatial, kernel, strides, dilations)]
    return padding


def ref_conv(x, w, strides, dilations, pads, groups=1):
    """Channels-last convolution by direct loops over output positions."""
    rank = x.ndim - 2
    xp = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)])
    kernel, cg, out_channels = w.shape[:rank], w.shape[-2], w.shape[-1]
    og = out_channels // groups
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    out_spatial = [(xp.shape[1 + i] - spans[i]) // strides[i] + 1 for i in range(rank)]
    y = np.zeros((x.shape[0],) + tuple(out_spatial) + (out_channels,))
    for pos in itertools.product(*[range(o) for o in out_spatial]):
        window = xp[(slice(None),) + tuple(slice(p * s, p * s + sp, d)
                                           for p, s, sp, d in zip(pos, strides, spans, dilations))]
        for g in range(groups):
            y[(slice(None),) + pos + (slice(g * og, (g + 1) * og),)] = np.einsum(
                window[..., g * cg:(g + 1) * cg], list(range(rank + 2)),
                w[..., g * og:(g + 1) * og], list(range(1, rank + 2)) + [rank + 2], [0, rank + 2])
    return y


def ref_conv_transpose(x, w, out_spatial, strides, dilations, pads):
    """Every input position adds its filter-weighted values into the output window it came from."""
    rank = x.ndim - 2
    kernel = w.shape[:rank]
    padded = [o + b + a for o, (b, a) in zip(out_spatial, pads)]
    y = np.zeros((x.shape[0],) + tuple(padded) + (w.shape[-2],))
    for pos in itertools.product(*[range(s) for s in x.shape[1:-1]]):
        for tap in itertools.product(*[range(k) for k in kernel]):
            at = tuple(p * s + t * d for p, s, t, d in zip(pos, strides, tap, dilations))
            y[(slice(None),) + at] += x[(slice(None),) + pos] @ w[tap].T
    return y[(slice(None),) + tuple(slice(b, b + o) for o, (b, _) in zip(out_spatial, pads))]


def last(x, first):
    return np.moveaxis(x, 1, -1) if first else x


def back(y, first):
    return np.moveaxis(y, -1, 1) if first else y


def explicit_list(pads, first):
    """Spatial pairs as TensorFlow's full explicit padding list."""
    pads = [list(p) for p in pads]
    return [[0, 0], [0, 0]] + pads if first else [[0, 0]] + pads + [[0, 0]]


# ---------------------------------------------------------- forward values ---
CONV_CASES = [  # spatial shape, kernel, channels in/out, strides, dilations, padding
    ((7,), (3,), 2, 3, (1,), (1,), "VALID"),
    ((8,), (3,), 3, 2, (2,), (1,), "SAME"),
    ((9,), (2,), 1, 4, (1,), (3,), "SAME"),
    ((6,), (3,), 2, 2, (3,), (2,), ((2, 1),)),
    ((5, 6), (3, 3), 2, 3, (1, 1), (1, 1), "VALID"),
    ((7, 6), (3, 2), 3, 4, (2, 1), (1, 1), "SAME"),
    ((8, 7), (2, 3), 1, 5, (1, 2), (2, 1), "SAME"),
    ((6, 5), (3, 3), 2, 2, (2, 2), (1, 1), ((1, 0), (2, 3))),
    ((9, 8), (3, 2), 4, 2, (3, 2), (2, 2), "VALID"),
    ((1, 1), (1, 1), 3, 2, (1, 1), (1, 1), "VALID"),
    ((4, 5, 3), (2, 3, 2), 2, 3, (1, 2, 1), (1, 1, 2), "SAME"),
]


@pytest.mark.parametrize("first", [False, True], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("spatial,kernel,cin,cout,strides,dilations,padding", CONV_CASES)
def test_convolution_matches_direct_loops(spatial, kernel, cin, cout, strides, dilations, padding, first):
    rank = len(spatial)
    x_last = r(3, *spatial, cin)
    w = r(*kernel, cin, cout)
    pads = ref_pads(padding, spatial, kernel, strides, dilations)
    expected = back(ref_conv(x_last, w, strides, dilations, pads), first)
    x = back(x_last, first)
    fmt = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank][first]
    tf_padding = padding if isinstance(padding, str) else explicit_list(padding, first)
    got = tf.nn.convolution(x, w, strides=list(strides), padding=tf_padding, data_format=fmt,
                            dilations=list(dilations))
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    named = {1: lambda: tf.nn.conv1d(x, w, list(strides), tf_padding, fmt, list(dilations)),
             2: lambda: tf.nn.conv2d(x, w, list(strides), tf_padding, fmt, list(dilations)),
             3: lambda: tf.nn.conv3d(x, w, list(strides), tf_padding, fmt, list(dilations))}[rank]()
    np.testing.assert_allclose(named.numpy(), expected, atol=1e-12)


def test_float32_any_batch_size_and_extra_batch_axes():
    w = r(3, 3, 2, 4)
    for batch in (0, 1, 5):
        x = r(batch, 6, 7, 2)
        got = tf.nn.conv2d(x.astype(np.float32), w.astype(np.float32), 1, "SAME")
        assert got.dtype == tf.float32 and got.shape == (batch, 6, 7, 4)
        np.testing.assert_allclose(got.numpy(), ref_conv(x, w, (1, 1), (1, 1), [(1, 1), (1, 1)]), atol=1e-5)
        depthwise = tf.nn.depthwise_conv2d(x, r(2, 2, 2, 3), 1, "SAME")
        assert depthwise.shape == (batch, 6, 7, 6)
        with tf.GradientTape() as tape:
            tape.watch(depthwise)
            grads = tape.gradient(tf.nn.depthwise_conv2d(depthwise, r(1, 2, 6, 1), 1, "VALID"), depthwise)
        assert grads.shape == depthwise.shape
    x = r(2, 3, 5, 5, 2)  # TensorFlow's conv2d takes batch_shape + [height, width, channels]
    got = tf.nn.conv2d(x, w, 2, "VALID")
    expected = ref_conv(x.reshape(6, 5, 5, 2), w, (2, 2), (1, 1), [(0, 0), (0, 0)]).reshape(2, 3, 2, 2, 4)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)


def test_same_padding_output_sizes_follow_tensorflow():
    x = np.zeros((1, 5, 5, 1))
    assert tf.nn.conv2d(x, np.zeros((3, 3, 1, 1)), 2, "SAME").shape == (1, 3, 3, 1)  # ceil(5 / 2)
    assert tf.nn.conv2d(x, np.zeros((3, 3, 1, 1)), 2, "VALID").shape == (1, 2, 2, 1)
    assert tf.nn.conv2d(x, np.zeros((2, 2, 1, 1)), 1, "SAME", dilations=2).shape == (1, 5, 5, 1)
    # SAME with an even window puts the extra padding cell after: the first output sees x[0:2] only.
    ones = tf.nn.conv1d(np.arange(1.0, 5.0).reshape(1, 4, 1), np.ones((2, 1, 1)), 1, "SAME")
    np.testing.assert_array_equal(ones.numpy().ravel(), [3.0, 5.0, 7.0, 4.0])


@pytest.mark.parametrize("groups", [2, 3])
def test_grouped_convolution_when_filter_depth_divides_input_depth(groups):
    x, w = r(2, 6, 5, 6), r(3, 2, 6 // groups, 6)
    got = tf.nn.conv2d(x, w, [1, 2], "SAME")
    expected = ref_conv(x, w, (1, 2), (1, 1), ref_pads("SAME", (6, 5), (3, 2), (1, 2), (1, 1)), groups)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)


TRANSPOSE_CASES = [  # output spatial shape, kernel, channels out/in, strides, dilations, padding
    ((7,), (3,), 2, 3, (2,), (1,), "SAME"),
    ((8,), (3,), 3, 2, (2,), (1,), "VALID"),
    ((9,), (2,), 2, 2, (1,), (2,), ((1, 2),)),
    ((6, 5), (3, 3), 2, 3, (2, 2), (1, 1), "SAME"),
    ((7, 8), (3, 2), 3, 2, (2, 3), (1, 1), "VALID"),
    ((6, 6), (2, 2), 1, 2, (1, 1), (2, 2), "SAME"),
    ((5, 7), (3, 3), 2, 2, (1, 2), (1, 1), ((1, 1), (0, 2))),
]


@pytest.mark.parametrize("first", [False, True], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("out_spatial,kernel,cout,cin,strides,dilations,padding", TRANSPOSE_CASES)
def test_conv_transpose_matches_scatter_loops(out_spatial, kernel, cout, cin, strides, dilations, padding, first):
    rank = len(out_spatial)
    pads = ref_pads(padding, out_spatial, kernel, strides, dilations)
    in_spatial = [(o + b + a - ((k - 1) * d + 1)) // s + 1
                  for o, (b, a), k, s, d in zip(out_spatial, pads, kernel, strides, dilations)]
    x_last, w = r(2, *in_spatial, cin), r(*kernel, cout, cin)
    expected = back(ref_conv_transpose(x_last, w, out_spatial, strides, dilations, pads), first)
    fmt = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW")}[rank][first]
    output_shape = [2, cout, *out_spatial] if first else [2, *out_spatial, cout]
    tf_padding = padding if isinstance(padding, str) else explicit_list(padding, first)
    fn = tf.nn.conv1d_transpose if rank == 1 else tf.nn.conv2d_transpose
    got = fn(back(x_last, first), w, output_shape, list(strides), tf_padding, fmt, list(dilations))
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    generic = tf.nn.conv_transpose(back(x_last, first), w, output_shape, list(strides), tf_padding, fmt,
                                   list(dilations))
    np.testing.assert_allclose(generic.numpy(), expected, atol=1e-12)


def test_conv_transpose_is_the_adjoint_of_conv():
    x, w, y = r(2, 7, 6, 3), r(3, 3, 3, 4), r(2, 4, 3, 4)
    conv = tf.nn.conv2d(x, w, 2, "SAME").numpy()
    transposed = tf.nn.conv2d_transpose(y, w, [2, 7, 6, 3], 2, "SAME").numpy()
    np.testing.assert_allclose(np.sum(conv * y), np.sum(x * transposed), rtol=1e-12)


@pytest.mark.parametrize("first", [False, True], ids=["NHWC", "NCHW"])
@pytest.mark.parametrize("strides,dilations,padding", [(1, 1, "VALID"), (2, 1, "SAME"), (1, 2, "SAME"),
                                                       ([1, 2, 1, 1], None, [[0, 0], [1, 0], [2, 1], [0, 0]])])
def test_depthwise_conv2d_is_one_convolution_per_channel(strides, dilations, padding, first):
    x_last, w = r(2, 7, 6, 3), r(3, 2, 3, 2)
    s = (strides, strides) if isinstance(strides, int) else tuple(strides[1:3])
    d = (dilations or 1,) * 2
    pads = ref_pads(padding, (7, 6), (3, 2), s, d) if isinstance(padding, str) else padding[1:3]
    expected = np.concatenate([ref_conv(x_last[..., c:c + 1], w[:, :, c:c + 1, :], s, d, pads)
                               for c in range(3)], axis=-1)  # channel c * M + m
    if first and not isinstance(strides, int):
        strides = [1, 1] + list(strides[1:3])
        padding = [[0, 0], [0, 0]] + padding[1:3]
    got = tf.nn.depthwise_conv2d(back(x_last, first), w, strides, padding, "NCHW" if first else "NHWC",
                                 dilations)
    np.testing.assert_allclose(got.numpy(), back(expected, first), atol=1e-12)


def test_separable_conv2d_is_depthwise_then_pointwise():
    x, depthwise, pointwise = r(2, 6, 7, 3), r(3, 3, 3, 2), r(1, 1, 6, 4)
    pads = ref_pads("SAME", (6, 7), (3, 3), (2, 2), (1, 1))
    per_channel = np.concatenate([ref_conv(x[..., c:c + 1], depthwise[:, :, c:c + 1, :], (2, 2), (1, 1), pads)
                                  for c in range(3)], axis=-1)
    expected = np.einsum("nhwc,co->nhwo", per_channel, pointwise[0, 0])
    got = tf.nn.separable_conv2d(x, depthwise, pointwise, [1, 2, 2, 1], "SAME")
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)


def test_traced_function_gives_the_eager_values_and_gradients():
    x, w = tf.constant(r(2, 6, 6, 2)), tf.Variable(r(3, 3, 2, 3))

    def step(x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.square(tf.nn.conv2d(x, w, 2, "SAME")))
        return y, tape.gradient(y, w)
    eager = step(x)
    traced = tf.function(step)(x)
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


# -------------------------------------------------------------- gradients ---
GRADIENT_CASES = [
    ("conv1d_valid", lambda x, w: tf.nn.conv1d(x, w, 1, "VALID"), (2, 6, 2), (3, 2, 3)),
    ("conv1d_same_stride_ncw", lambda x, w: tf.nn.conv1d(x, w, 2, "SAME", "NCW"), (2, 2, 7), (3, 2, 2)),
    ("conv1d_dilated_explicit", lambda x, w: tf.nn.conv1d(x, w, 1, [[0, 0], [3, 1], [0, 0]], dilations=2),
     (1, 5, 2), (2, 2, 2)),
    ("conv2d_same", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), (2, 4, 4, 2), (3, 3, 2, 2)),
    ("conv2d_strided_dilated_nchw", lambda x, w: tf.nn.conv2d(x, w, [2, 1], "SAME", "NCHW", [1, 2]),
     (1, 2, 5, 5), (2, 2, 2, 3)),
    ("conv2d_explicit", lambda x, w: tf.nn.conv2d(x, w, 2, [[0, 0], [1, 2], [0, 1], [0, 0]]),
     (2, 4, 5, 1), (2, 3, 1, 2)),
    ("conv2d_grouped", lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"), (1, 4, 4, 4), (2, 2, 2, 4)),
    ("conv3d", lambda x, w: tf.nn.conv3d(x, w, [1, 2, 1], "SAME"), (1, 3, 4, 3, 2), (2, 2, 2, 2, 2)),
    ("conv1d_transpose", lambda x, w: tf.nn.conv1d_transpose(x, w, [2, 7, 2], 2, "SAME"), (2, 4, 3), (3, 2, 3)),
    ("conv2d_transpose", lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 5, 6, 2], [2, 3], "VALID"),
     (1, 2, 2, 3), (3, 3, 2, 3)),
    ("conv2d_transpose_nchw_dilated", lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 2, 5, 5], 1, "SAME", "NCHW", 2),
     (1, 2, 5, 5), (2, 2, 2, 2)),
    ("depthwise", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"), (2, 5, 4, 2), (3, 2, 2, 2)),
    ("depthwise_nchw_dilated", lambda x, w: tf.nn.depthwise_conv2d(x, w, 1, "VALID", "NCHW", [2, 1]),
     (1, 3, 5, 4), (2, 2, 3, 1)),
]


@pytest.mark.parametrize("f,x_shape,w_shape", [pytest.param(f, xs, ws, id=name) for name, f, xs, ws in GRADIENT_CASES])
def test_first_derivatives_match_finite_differences(f, x_shape, w_shape):
    check_gradients(f, r(*x_shape), r(*w_shape))


@pytest.mark.parametrize("f,x_shape,w_shape", [pytest.param(f, xs, ws, id=name) for name, f, xs, ws in GRADIENT_CASES])
def test_second_derivatives_match_finite_differences(f, x_shape, w_shape):
    # The square makes every second derivative non-zero: the gradient ops' gradients are all exercised.
    check_gradients(vjp_fn(lambda x, w: tf.square(f(x, w))), r(*x_shape), r(*w_shape), atol=1e-5)


def test_separable_conv2d_first_and_second_derivatives():
    def f(x, d, p):
        return tf.square(tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME"))
    inputs = r(1, 4, 4, 2), r(2, 2, 2, 2), r(1, 1, 4, 2)
    check_gradients(f, *inputs, atol=1e-5)
    check_gradients(vjp_fn(f), *inputs, atol=1e-5)


def test_third_derivative_matches_finite_differences():
    first = vjp_fn(lambda x, w: tf.pow(tf.nn.conv2d(x, w, [1, 2], "SAME"), 3))
    # Squaring the first derivative makes the cotangents of the second depend on the inputs.
    check_gradients(vjp_fn(lambda x, w: [tf.square(g) for g in first(x, w)], seed=2), r(1, 3, 4, 1),
                    r(2, 2, 1, 2), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", ["conv1d_same_stride_ncw", "conv2d_strided_dilated_nchw", "conv2d_grouped",
                                  "conv2d_transpose", "depthwise"])
def test_jacobian_with_stacked_cotangents_matches_a_gradient_loop(name):
    f, x_shape, w_shape = next((f, xs, ws) for n, f, xs, ws in GRADIENT_CASES if n == name)
    check_jacobian(f, r(*x_shape), r(*w_shape))


@pytest.mark.parametrize("name", ["conv1d_same_stride_ncw", "conv2d_grouped", "conv2d_transpose"])
def test_derivative_of_a_jacobian(name):
    """The gradient ops run with stacked cotangents under an outer tape, then are differentiated."""
    f, x_shape, w_shape = next((f, xs, ws) for n, f, xs, ws in GRADIENT_CASES if n == name)
    check_gradients(jacobian_fn(lambda x, w: tf.square(f(x, w))), r(*x_shape), r(*w_shape), atol=1e-5)


def test_batch_jacobian_of_a_convolution():
    x, w = tf.constant(r(3, 5, 2)), tf.constant(r(3, 2, 2))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.conv1d(x, w, 1, "SAME")
    batch = tape.batch_jacobian(y, x).numpy()
    full = tape.jacobian(y, x).numpy()
    for i in range(3):
        np.testing.assert_allclose(batch[i], full[i, :, :, i], atol=1e-12)
    assert np.count_nonzero(batch) > 0


# ----------------------------------------------------------------- errors ---
@pytest.mark.parametrize("call,message", [
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 2, 4)), 1, "VALID"),
     "conv2d: the input depth 3 must be a multiple of the filter's input depth 2"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 4)), np.zeros((3, 3, 2, 3)), 1, "VALID"),
     "output channels must split evenly"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), 1, "FULL"),
     "conv2d: padding must be 'VALID', 'SAME' or a list of pairs, got 'FULL'"),
    (lambda: tf.nn.conv2d(np.zeros((1, 2, 5, 1)), np.zeros((3, 3, 1, 1)), 1, "VALID"),
     "conv2d: the window (extent 3) is larger than the padded input (size 2"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), [2, 1, 1, 1], "VALID"),
     "must be 1 in the batch and channel dimensions"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), 0, "VALID"),
     "conv2d: strides must be positive"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), 1, [[0, 0], [1, 1], [1, 1]]),
     "explicit padding must be a list of 4 [before, after] pairs"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), 1, [[0, 0], [1, 1], [1, 1], [1, 0]]),
     "explicit padding of the batch and channel dimensions must be [0, 0]"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 3, 1, 1)), 1, "VALID", "NWC"),
     "conv2d: data_format must be 'NHWC' or 'NCHW'"),
    (lambda: tf.nn.conv2d(np.zeros((5, 5, 1)), np.zeros((3, 3, 1, 1)), 1, "VALID"),
     "conv2d: input must be a tensor of rank at least 4"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1)), np.zeros((3, 1, 1)), 1, "VALID"),
     "conv2d: filters must be a tensor of rank 4"),
    (lambda: tf.nn.conv2d(np.zeros((1, 5, 5, 1), np.int32), np.zeros((3, 3, 1, 1), np.int32), 1, "VALID"),
     "conv2d: input must be a floating-point tensor, got int32"),
    (lambda: tf.nn.conv2d(tf.zeros((1, 5, 5, 1)), tf.zeros((3, 3, 1, 1), tf.float64), 1, "VALID"),
     "conv2d: filters must have the input's dtype: the input is a float tensor but filters is a double"),
    (lambda: tf.nn.conv2d_transpose(np.zeros((1, 3, 3, 2)), np.zeros((3, 3, 4, 2)), [1, 8, 8, 4], 2, "SAME"),
     "conv2d_transpose: output_shape [1, 8, 8, 4] does not match the input"),
    (lambda: tf.nn.conv2d_transpose(np.zeros((1, 3, 3, 2)), np.zeros((3, 3, 4, 5)), [1, 6, 6, 4], 2, "SAME"),
     "conv2d_transpose: the input has 2 channels but the filter"),
    (lambda: tf.nn.conv2d_transpose(np.zeros((1, 3, 3, 2)), np.zeros((3, 3, 4, 2)), [1, 6, 6, 3], 2, "SAME"),
     "output_shape [1, 6, 6, 3] has 3 channels but the filter makes 4"),
    (lambda: tf.nn.depthwise_conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 2, 1)), 1, "VALID"),
     "depthwise_conv2d: the input has 3 channels but the filter"),
    (lambda: tf.nn.separable_conv2d(np.zeros((1, 5, 5, 2)), np.zeros((3, 3, 2, 1)), np.zeros((2, 2, 2, 3)), 1,
                                    "VALID"), "separable_conv2d: pointwise_filter must have a 1x1 window"),
    (lambda: tf.nn.convolution(np.zeros((1, 5, 1)), np.zeros((3,)), 1), "convolution: filters must have rank 3 to 5"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("in_shape, kernel, strides, dilations, pads", [
    ((2, 9, 3), (3,), (1,), (1,), ((0, 0),)),
    ((2, 9, 3), (4,), (2,), (1,), ((2, 1),)),
    ((1, 11, 2), (3,), (3,), (2,), ((1, 3),)),
    ((2, 6, 7, 3), (3, 2), (2, 1), (1, 2), ((1, 1), (0, 2))),
    ((1, 5, 4, 6, 2), (2, 3, 2), (1, 2, 3), (2, 1, 1), ((0, 1), (2, 0), (1, 1))),
])
def test_col2im_sums_each_window_entry_into_the_cell_it_came_from(in_shape, kernel, strides, dilations, pads):
    from tapeflow.kernels import conv as K
    x = r(*in_shape)
    cols = K.im2col(x, kernel, strides, dilations, pads)
    g = r(*cols.shape)
    # the scatter the gather must equal: im2col's own index map, entry by entry
    index = K.im2col(np.arange(x.size, dtype=np.float64).reshape(in_shape) + 1, kernel, strides, dilations, pads)
    expected = np.zeros(x.size + 1)
    np.add.at(expected, index.astype(np.int64).reshape(-1), g.reshape(-1))   # padding cells land on index 0
    np.testing.assert_allclose(K.col2im(g, in_shape, kernel, strides, dilations, pads).reshape(-1), expected[1:],
                               rtol=1e-12, atol=1e-12)
    # and it is im2col's adjoint
    np.testing.assert_allclose(np.sum(cols * g), np.sum(x * K.col2im(g, in_shape, kernel, strides, dilations, pads)),
                               rtol=1e-12)

"""A convolution computed as ConvOfWindows(x, ConvWindows(x), w) (im2col as an op, then its product with the
filter): the same numbers as the one-op kernel, the window ops' own derivatives against finite differences,
the filter gradient reading the forward's windows instead of gathering them again; and the input gradient
made a block of examples at a time."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.kernels import conv as K
from tapeflow.ops import conv_ops
from tapeflow.ops.common import execute

rng = np.random.default_rng(77)


def r(*shape, dtype=np.float64):
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


# (x shape, filter shape, strides, dilations, explicit pads): strided, dilated, padded, one and two and three
# spatial dimensions, a single input channel (the transposed window matrix)
CASES = [
    ((3, 11, 4), (3, 4, 5), (1,), (1,), ((0, 0),)),
    ((2, 12, 3), (4, 3, 2), (2,), (1,), ((2, 1),)),
    ((2, 13, 2), (3, 2, 3), (1,), (3,), ((4, 0),)),    # causal: all the padding before
    ((2, 7, 6, 1), (3, 2, 1, 4), (2, 1), (1, 2), ((1, 1), (0, 2))),
    ((1, 4, 5, 3, 2), (2, 2, 2, 2, 3), (1, 2, 1), (1, 1, 2), ((0, 1), (1, 0), (1, 1))),
]
IDS = ["1d", "1d_strided_padded", "1d_causal_dilated", "2d_one_channel", "3d"]


def window_attrs(kernel, strides, dilations, pads):
    return {"kernel": tuple(kernel), "strides": tuple(strides), "dilations": tuple(dilations),
            "padding": tuple(tuple(p) for p in pads)}


def conv(x, w, strides, dilations, pads):
    rank = len(strides)
    explicit = [[0, 0]] + [list(p) for p in pads] + [[0, 0]]
    return tf.nn.convolution(x, w, list(strides), explicit, dilations=list(dilations)) if rank != 1 else \
        tf.nn.conv1d(x, w, list(strides), explicit, dilations=list(dilations))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape,w_shape,strides,dilations,pads", CASES, ids=IDS)
def test_values_and_gradients_are_the_one_op_kernels_bit_for_bit(x_shape, w_shape, strides, dilations, pads,
                                                                 dtype):
    x, w, = r(*x_shape, dtype=dtype), r(*w_shape, dtype=dtype)
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        y = conv(xt, wt, strides, dilations, pads)
    g = r(*y.shape, dtype=dtype)
    dx, dw = tape.gradient(y, [xt, wt], output_gradients=tf.constant(g))
    rank = len(strides)
    np.testing.assert_array_equal(y.numpy(), K.conv(x, w, strides, dilations, pads))
    np.testing.assert_array_equal(dx.numpy(), K.conv_backprop_input(g, w, x_shape[1:-1], strides, dilations, pads))
    np.testing.assert_array_equal(dw.numpy(), K.conv_backprop_filter(x, g, w_shape[:rank], strides, dilations, pads))


@pytest.mark.parametrize("x_shape,w_shape,strides,dilations,pads", CASES[:4], ids=IDS[:4])
def test_window_ops_first_and_second_derivatives_match_finite_differences(x_shape, w_shape, strides, dilations,
                                                                          pads):
    rank = len(strides)
    attrs = window_attrs(w_shape[:rank], strides, dilations, pads)
    x = r(*x_shape)

    def windows(a):
        return execute("ConvWindows", (a,), attrs)
    cols = windows(tf.constant(x)).numpy()

    def back(c):
        return execute("ConvWindowsBackprop", (c,), dict(attrs, input_spatial=tuple(x_shape[1:-1])))
    check_gradients(windows, x)
    check_gradients(back, r(*cols.shape))
    # The square makes the second derivatives non-zero, so each op's gradient is differentiated.
    check_gradients(vjp_fn(lambda a: tf.square(windows(a))), x, atol=1e-5)
    check_gradients(vjp_fn(lambda c: tf.square(back(c))), r(*cols.shape), atol=1e-5)


@pytest.mark.parametrize("x_shape,w_shape,strides,dilations,pads", [CASES[1], CASES[3]], ids=[IDS[1], IDS[3]])
def test_convolution_derivatives_and_jacobians_through_the_windows(x_shape, w_shape, strides, dilations, pads):
    def f(x, w):
        return tf.square(conv(x, w, strides, dilations, pads))
    check_gradients(vjp_fn(f), r(*x_shape), r(*w_shape), atol=1e-5)
    check_jacobian(lambda x, w: conv(x, w, strides, dilations, pads), r(*x_shape), r(*w_shape))


def test_forward_mode_and_forward_over_backward_match_finite_differences():
    """The windows get no cotangent from ConvOfWindows: derivatives reach x whole through its own input."""
    x, w, tx, tw = r(2, 9, 3), r(3, 3, 4), r(2, 9, 3), r(3, 3, 4)

    def f(a, b):
        return tf.nn.conv1d(a, b, 2, "SAME")

    def grad_at(a):
        a = tf.constant(a)
        with tf.GradientTape() as tape:
            tape.watch(a)
            loss = tf.reduce_sum(tf.square(f(a, tf.constant(w))))
        return tape.gradient(loss, a).numpy()
    eps = 1e-6
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.autodiff.ForwardAccumulator([xt, wt], [tf.constant(tx), tf.constant(tw)]) as acc:
        y = f(xt, wt)
    numeric = (f(x + eps * tx, w + eps * tw).numpy() - f(x - eps * tx, w - eps * tw).numpy()) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(y).numpy(), numeric, atol=1e-7)
    xt = tf.constant(x)
    with tf.autodiff.ForwardAccumulator(xt, tf.constant(tx)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(xt)
            loss = tf.reduce_sum(tf.square(f(xt, tf.constant(w))))
        g = tape.gradient(loss, xt)
    numeric = (grad_at(x + eps * tx) - grad_at(x - eps * tx)) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(g).numpy(), numeric, atol=1e-6)


def counting_gathers(monkeypatch):
    """Counts im2col calls that gather windows (a pointwise im2col is a reshape, not a gather)."""
    calls = []
    real = K.im2col

    def counted(x, kernel, strides, dilations, pads):
        if not K._pointwise(kernel, strides, pads):
            calls.append(kernel)
        return real(x, kernel, strides, dilations, pads)
    monkeypatch.setattr(K, "im2col", counted)
    return calls


def conv1d_training_gradient(x, w, b):
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.square(tf.nn.relu(tf.nn.conv1d(x, w, 1, "VALID") + b)))
    return tape.gradient(y, [w, b])


def test_the_filter_gradient_reads_the_forward_windows(monkeypatch):
    x, w, b = tf.constant(r(4, 20, 3, dtype=np.float32)), tf.Variable(r(5, 3, 6, dtype=np.float32)), tf.Variable(
        r(6, dtype=np.float32))
    gathers = counting_gathers(monkeypatch)
    eager = conv1d_training_gradient(x, w, b)
    assert len(gathers) == 1
    traced = tf.function(conv1d_training_gradient)
    traced(x, w, b)
    gathers.clear()
    again = traced(x, w, b)
    assert len(gathers) == 1
    for a, c in zip(eager, again):
        np.testing.assert_array_equal(a.numpy(), c.numpy())


@pytest.mark.parametrize("limit,gathers_expected", [(4 * 16 * 15 * 4, 1), (4 * 16 * 15 * 4 - 1, 2)],
                         ids=["at_the_limit", "one_byte_over"])
def test_windows_beyond_the_kept_size_are_gathered_again_with_the_same_numbers(monkeypatch, limit,
                                                                               gathers_expected):
    x, w, b = tf.constant(r(4, 20, 3, dtype=np.float32)), tf.Variable(r(5, 3, 6, dtype=np.float32)), tf.Variable(
        r(6, dtype=np.float32))
    kept = conv1d_training_gradient(x, w, b)
    monkeypatch.setattr(conv_ops, "WINDOWS_KEPT_BYTES", limit)    # the windows: 4 x 16 rows of 5 x 3 floats
    gathers = counting_gathers(monkeypatch)
    rebuilt = conv1d_training_gradient(x, w, b)
    assert len(gathers) == gathers_expected
    for a, c in zip(kept, rebuilt):
        np.testing.assert_array_equal(a.numpy(), c.numpy())


def test_windows_that_do_not_fit_the_input_are_refused():
    attrs = dict(window_attrs((3,), (1,), (1,), ((0, 0),)), input_spatial=(10,))
    with pytest.raises(InvalidArgumentError, match="do not fit an input of spatial shape"):
        execute("ConvWindowsBackprop", (tf.constant(r(2, 7, 6)),), attrs)    # 8 positions, not 7
    with pytest.raises(InvalidArgumentError, match="multiple of 3"):
        execute("ConvWindowsBackprop", (tf.constant(r(2, 8, 5)),), attrs)
    with pytest.raises(InvalidArgumentError, match="one entry per spatial dimension"):
        execute("ConvWindows", (tf.constant(r(2, 8, 5)),), window_attrs((3, 3), (1,), (1,), ((0, 0),)))
    with pytest.raises(InvalidArgumentError, match="do not fit an input of shape"):
        execute("ConvOfWindows", (tf.constant(r(2, 10, 5)), tf.constant(r(2, 7, 15)), tf.constant(r(3, 5, 4))),
                {"strides": (1,), "dilations": (1,), "padding": ((0, 0),)})


@pytest.mark.parametrize("x_shape,w_shape,strides,dilations,pads", CASES, ids=IDS)
def test_the_input_gradient_in_blocks_is_col2im_of_one_product(monkeypatch, x_shape, w_shape, strides, dilations,
                                                               pads):
    rank = len(strides)
    x, w = r(*x_shape, dtype=np.float32), r(*w_shape, dtype=np.float32)
    g = r(*K.conv(x, w, strides, dilations, pads).shape, dtype=np.float32)
    whole = K.col2im(g.reshape(-1, w_shape[-1]) @ w.reshape(-1, w_shape[-1]).T, x_shape, w_shape[:rank], strides,
                     dilations, pads)
    for block_bytes in (1, 2 * g[0].size // w_shape[-1] * int(np.prod(w_shape[:-1])) * 4, 1 << 30):
        monkeypatch.setattr(K, "_BLOCK_BYTES", block_bytes)    # one example, two (3 = 2 + 1), all
        got = K.conv_backprop_input(g, w, x_shape[1:-1], strides, dilations, pads)
        np.testing.assert_allclose(got, whole, rtol=1e-6, atol=1e-6)


def test_a_first_layer_reading_data_gets_no_input_gradient(monkeypatch):
    """Two convolutions on a constant input: only the second one's input gradient is computed."""
    calls = []
    real = K.conv_backprop_input

    def counted(dy, *args, **kwargs):
        calls.append(dy.shape)
        return real(dy, *args, **kwargs)
    monkeypatch.setattr(K, "conv_backprop_input", counted)
    x = tf.constant(r(2, 12, 3, dtype=np.float32))
    w1, w2 = tf.Variable(r(3, 3, 4, dtype=np.float32)), tf.Variable(r(3, 4, 5, dtype=np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.nn.conv1d(tf.nn.relu(tf.nn.conv1d(x, w1, 1, "VALID")), w2, 1, "VALID")))
        return tape.gradient(loss, [w1, w2])
    step()
    assert calls == [(2, 8, 5)]
    calls.clear()
    traced = tf.function(step)
    traced()
    calls.clear()
    traced()
    assert calls == [(2, 8, 5)]

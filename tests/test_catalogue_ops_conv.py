"""keras.ops conv, conv_transpose, depthwise_conv, separable_conv, max_pool and average_pool: results against
Keras 3 (tests/fixtures/keras3_catalogue/ops_conv.npz, written by make_fixtures.py), gradients of first and
second order against finite differences."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn

ops = tf.keras.ops
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_catalogue")
with open(os.path.join(FIXTURES, "ops_conv_cases.json")) as _f:
    CASES = json.load(_f)


def _inputs(data, name):
    found, i = [], 0
    while f"{name}/input{i}" in data:
        found.append(data[f"{name}/input{i}"])
        i += 1
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_keras(name):
    data = np.load(os.path.join(FIXTURES, "ops_conv.npz"))
    case = CASES[name]
    out = getattr(ops, case["op"])(*_inputs(data, name), **case["kwargs"])
    expected = data[f"{name}/output"]
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


GRADIENT_CASES = {
    "conv": (lambda x, k: ops.conv(x, k, strides=(1, 2), padding="same", dilation_rate=1), [(1, 4, 5, 2),
                                                                                             (2, 2, 1, 4)]),
    "conv1d_dilated": (lambda x, k: ops.conv(x, k, dilation_rate=2), [(2, 6, 2), (2, 2, 2)]),
    "conv_transpose": (lambda x, k: ops.conv_transpose(x, k, strides=2, padding="valid", output_padding=1),
                       [(1, 3, 2, 2), (2, 2, 3, 2)]),
    "depthwise_conv": (lambda x, k: ops.depthwise_conv(x, k, padding="same", data_format="channels_first"),
                       [(1, 2, 4, 3), (2, 2, 2, 2)]),
    "separable_conv": (lambda x, d, p: ops.separable_conv(x, d, p, strides=2),
                       [(1, 5, 5, 2), (2, 2, 2, 1), (1, 1, 2, 3)]),
    "max_pool": (lambda x: ops.max_pool(x, 2, strides=1, padding="same"), [(1, 3, 3, 2)]),
    "average_pool": (lambda x: ops.average_pool(x, (2, 3), padding="same"), [(1, 4, 5, 1)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_first_and_second_order(name):
    f, shapes = GRADIENT_CASES[name]
    rng = np.random.default_rng(0)
    # Well-separated values so that no max-pool window holds a tie (finite differences would straddle it).
    arrays = [rng.permutation(np.prod(s)).reshape(s) * 0.37 + rng.uniform(0, 0.1, s) if name == "max_pool"
              else rng.normal(size=s) for s in shapes]
    check_gradients(f, *arrays)
    if name != "average_pool":  # linear: its second derivative is identically zero (no recorded path)
        check_gradients(vjp_fn(f), *arrays)


def test_defaults_and_namespaces():
    x = np.random.default_rng(1).normal(size=(2, 6, 3)).astype("float32")
    np.testing.assert_array_equal(ops.max_pool(x, 2).numpy(), ops.max_pool(x, 2, strides=2).numpy())
    np.testing.assert_array_equal(ops.average_pool(x, 3).numpy(), x.reshape(2, 2, 3, 3).mean(2))
    assert ops.nn.conv is ops.conv and ops.nn.average_pool is ops.average_pool
    kernel = np.ones((1, 3, 4), "float32")
    out = ops.conv(x, kernel, padding="SAME")        # Keras lower-cases the padding
    np.testing.assert_allclose(out.numpy(), np.repeat(x.sum(-1, keepdims=True), 4, -1), rtol=1e-6)
    ints = ops.conv(np.ones((1, 3, 1), "int32"), np.ones((2, 1, 1), "int32"))
    assert ints.dtype == tf.float32 and ints.numpy().ravel().tolist() == [2.0, 2.0]


def test_channels_first_default_follows_image_data_format():
    x = np.random.default_rng(2).normal(size=(1, 2, 4, 4)).astype("float32")
    previous = tf.keras.config.image_data_format()
    tf.keras.config.set_image_data_format("channels_first")
    try:
        out = ops.max_pool(x, 2)
    finally:
        tf.keras.config.set_image_data_format(previous)
    assert tuple(out.shape) == (1, 2, 2, 2)
    np.testing.assert_array_equal(out.numpy(), x.reshape(1, 2, 2, 2, 2, 2).max((3, 5)))


def test_errors_name_the_problem():
    x = np.ones((1, 4, 4, 3), "float32")
    with pytest.raises(ValueError, match="rank 4"):
        ops.conv(x, np.ones((3, 3, 3), "float32"))
    with pytest.raises(ValueError, match="multiple of the kernel's input channels"):
        ops.conv(x, np.ones((3, 3, 2, 4), "float32"))
    with pytest.raises(ValueError, match="`padding` must be 'valid' or 'same'"):
        ops.conv(x, np.ones((3, 3, 3, 4), "float32"), padding="causal")
    with pytest.raises(ValueError, match="data_format"):
        ops.max_pool(x, 2, data_format="NHWC")
    with pytest.raises(ValueError, match="has 2"):
        ops.depthwise_conv(x, np.ones((3, 3, 2, 1), "float32"))
    with pytest.raises(ValueError, match="output_padding"):
        ops.conv_transpose(x, np.ones((3, 3, 2, 3), "float32"), strides=2, output_padding=2)
    with pytest.raises(ValueError, match="pointwise kernel"):
        ops.separable_conv(x, np.ones((3, 3, 3, 1), "float32"), np.ones((2, 2, 3, 4), "float32"))
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        ops.max_pool(np.ones((2, 3)), 2)
    with pytest.raises(ValueError, match="strides"):
        ops.max_pool(x, 2, strides=0)

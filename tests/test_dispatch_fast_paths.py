"""The per-op fast paths behave exactly like the general paths they bypass."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.kernels import activations


def test_floating_point_errors_are_silent_and_leave_numpy_error_state_alone():
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = [tf.constant(1.0) / 0.0, tf.math.log(tf.constant(0.0)), tf.exp(tf.constant(100.0)),
                   tf.sqrt(tf.constant(-1.0)), tf.math.rsqrt(tf.constant(0.0)), tf.math.reciprocal(tf.constant(0.0)),
                   tf.constant(2.0) ** 1000.0, tf.math.floormod(tf.constant(1.0), 0.0)]
    values = [float(r) for r in results]
    assert values[0] == np.inf and values[1] == -np.inf and values[2] == np.inf and np.isnan(values[3])
    assert values[4] == np.inf and values[5] == np.inf and values[6] == np.inf and np.isnan(values[7])
    assert np.geterr() == before
    with np.errstate(all="raise"):  # a caller's strict numpy settings do not leak into ops either
        assert float(tf.constant(1.0) / 0.0) == np.inf
        with pytest.raises(FloatingPointError):
            np.float32(1.0) / np.float32(0.0)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64, tf.complex64])
def test_python_numbers_take_the_tensor_dtype_on_either_side(dtype):
    x = tf.constant([1.0, 2.0], dtype)
    for result in (x * 2.0, 2.0 * x, x + 1, 1 - x, x / 4, x * 3):
        assert result.dtype == dtype
    np.testing.assert_allclose(np.asarray(x * 2.5), [2.5, 5.0])
    np.testing.assert_allclose(np.asarray(1 - x), [0.0, -1.0])


def test_python_float_with_an_integer_tensor_is_still_an_error():
    with pytest.raises(TypeError, match="int32"):
        tf.constant([1, 2]) * 2.5
    assert (tf.constant([1, 2]) * 2).dtype == tf.int32
    assert (tf.constant([1.0]) * True).dtype == tf.float32


def test_scalar_operand_gradient_flows_only_to_the_tensor():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = 2.0 * x * x + 1
    assert float(tape.gradient(y, x)) == 12.0


@pytest.mark.parametrize("value", [np.float32(-1.5), np.arange(-3, 3, dtype=np.float32).reshape(2, 3),
                                   np.arange(-3, 3, dtype=np.float16), np.arange(12, dtype=np.float64)[::2]])
def test_kernel_apply_handles_scalars_views_and_narrow_floats(value):
    out = activations.apply(activations.relu, value)
    assert out.dtype == value.dtype and out.shape == np.shape(value)
    np.testing.assert_array_equal(out, np.maximum(value, 0))


def test_kernel_apply_broadcasts_its_inputs():
    g = np.ones((2, 3), np.float32)
    y = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_array_equal(activations.apply(activations.relu_grad, g, y), np.where(y > 0, g, 0))


def test_fast_mean_equals_numpy_mean_bit_for_bit():
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32, np.float64):
        x = (rng.normal(size=(6, 5, 4)) * 100).astype(dtype)
        for axis in (None, 0, 1, [0, 2], -1):
            for keepdims in (False, True):
                got = tf.reduce_mean(tf.constant(x), axis=axis, keepdims=keepdims).numpy()
                expected = np.mean(x, axis=None if axis is None else tuple(np.atleast_1d(axis)), keepdims=keepdims)
                assert np.asarray(got).dtype == dtype
                np.testing.assert_array_equal(got, expected)


def test_mean_divides_by_the_exact_count_like_numpy():
    x = np.full((1 << 24) + 3, 3.0, np.float32)
    assert float(tf.reduce_mean(tf.constant(x))) == float(np.mean(x)) == 3.0


def test_integer_scalar_wraparound_is_silent_as_in_tensorflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(tf.constant(2 ** 31 - 1) + tf.constant(1)) == -(2 ** 31)
        assert int(tf.constant(0, tf.uint8) - tf.constant(1, tf.uint8)) == 255


def test_error_settings_at_import_time_do_not_stick():
    import subprocess
    import sys
    code = ("import numpy as np\n"
            "with np.errstate(under='raise'):\n"
            "    import tapeflow as tf\n"
            "print(float(tf.exp(tf.constant(-200.0))), float(tf.constant(1e-30) / 1e30))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0.0", "0.0"]


def test_array_conversion_copies_when_asked():
    t = tf.constant([1.0, 2.0])
    copied = np.array(t, copy=True)
    copied[0] = 99.0
    assert t.numpy()[0] == 1.0
    t.numpy()[1] = 99.0                # numpy() is a copy too, as in TensorFlow
    assert t.numpy()[1] == 2.0


def test_numpy_of_a_scalar_is_a_numpy_scalar_as_in_tensorflow():
    for value, kind in ((tf.constant(1.5), np.float32), (tf.constant(3), np.int32), (tf.Variable(2.0), np.float32),
                        (tf.Variable(4), np.int32), (tf.constant(True), np.bool_)):
        assert type(value.numpy()) is kind
    assert tf.constant("abc").numpy() == b"abc"

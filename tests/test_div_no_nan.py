"""tf.math.divide_no_nan as one op (DivNoNan) with its own gradient, as TensorFlow."""
import numpy as np

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn


def test_zero_wherever_the_divisor_is_zero_whatever_the_numerator():
    x = tf.constant([1.0, np.nan, np.inf, 3.0, -4.0])
    y = tf.constant([0.0, 0.0, 0.0, 2.0, 0.5])
    np.testing.assert_array_equal(tf.math.divide_no_nan(x, y).numpy(), [0.0, 0.0, 0.0, 1.5, -8.0])
    assert tf.math.divide_no_nan(tf.constant([3, 4]), tf.constant([2, 0])).numpy().tolist() == [1.5, 0.0]
    assert tf.math.divide_no_nan(tf.constant([[1.0], [2.0]]), tf.constant([0.0, 4.0])).shape == (2, 2)


def test_gradients_are_zero_where_the_divisor_is_zero():
    x, y = tf.constant([2.0, 3.0]), tf.constant([0.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = tf.reduce_sum(tf.math.divide_no_nan(x, y))
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.25])
    np.testing.assert_allclose(gy.numpy(), [0.0, -3.0 / 16])


def test_gradients_first_and_second_order_and_jacobian():
    f = lambda x, y: tf.math.divide_no_nan(x, y)  # noqa: E731
    x = np.array([[1.5, -2.0, 0.7], [0.3, 1.1, -1.4]])
    y = np.array([0.8, 1.7, -0.9])
    check_gradients(f, x, y)
    check_gradients(vjp_fn(f), x, y)
    check_jacobian(lambda x: f(x, tf.constant(y)), x)

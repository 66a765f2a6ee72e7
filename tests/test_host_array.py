"""host_array: the one public way for code above the engine to read a tensor's data without a copy."""
import numpy as np

import tapeflow as tf
from tapeflow.framework.tensor import host_array


def test_a_tensor_hands_out_its_own_array_without_a_copy():
    t = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    a = host_array(t)
    assert type(a) is np.ndarray and a is host_array(t)
    np.testing.assert_array_equal(a, t.numpy())
    assert t.numpy() is not t.numpy()      # numpy() copies; host_array does not


def test_a_scalar_tensor_gives_a_zero_d_array():
    a = host_array(tf.constant(2.5))
    assert type(a) is np.ndarray and a.shape == () and a.dtype == np.float32 and float(a) == 2.5


def test_a_variable_gives_a_read_only_snapshot_that_outlives_updates():
    w = tf.Variable(np.zeros(3, np.float32))
    snapshot = host_array(w)
    assert not snapshot.flags.writeable
    tf.keras.optimizers.SGD(1.0).apply_gradients([(tf.constant(np.ones(3, np.float32)), w)])
    np.testing.assert_array_equal(snapshot, 0.0)
    np.testing.assert_array_equal(host_array(w), -1.0)


def test_other_values_go_through_numpy():
    np.testing.assert_array_equal(host_array([1, 2]), np.array([1, 2]))
    array = np.ones(2)
    assert host_array(array) is array


def test_a_traced_tensor_gives_the_concrete_shape_being_computed():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        seen.append((tuple(x.shape), host_array(x).shape))
        return x

    f(tf.zeros((5, 3)))
    assert seen and all(static == (None, 3) for static, _ in seen)
    assert all(len(concrete) == 2 and concrete[1] == 3 and isinstance(concrete[0], int) for _, concrete in seen)

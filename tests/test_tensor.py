"""Tensor, Variable, TensorShape and tf.Module: dtypes, printing (spec section 5), operators."""
import numpy as np
import pytest

import tapeflow as tf


@pytest.mark.parametrize("value, dtype, text", [
    (6.0, None, "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"),
    (1 / 3, None, "<tf.Tensor: shape=(), dtype=float32, numpy=0.3333333432674408>"),
    (3, None, "<tf.Tensor: shape=(), dtype=int32, numpy=3>"),
    (True, None, "<tf.Tensor: shape=(), dtype=bool, numpy=True>"),
    ("abc", None, "<tf.Tensor: shape=(), dtype=string, numpy=b'abc'>"),
    (1 + 2j, None, "<tf.Tensor: shape=(), dtype=complex128, numpy=(1+2j)>"),
    (float("nan"), None, "<tf.Tensor: shape=(), dtype=float32, numpy=nan>"),
    (float("inf"), None, "<tf.Tensor: shape=(), dtype=float32, numpy=inf>"),
    (-0.0, None, "<tf.Tensor: shape=(), dtype=float32, numpy=-0.0>"),
    (2.5, tf.float16, "<tf.Tensor: shape=(), dtype=float16, numpy=2.5>"),
    ([1.0, 2.0, 3.0], None, "<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>"),
    ([[1, 2], [3, 4]], None, "<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>"),
])
def test_repr(value, dtype, text):
    assert repr(tf.constant(value, dtype=dtype)) == text


@pytest.mark.parametrize("value, text", [
    (6.0, "tf.Tensor(6.0, shape=(), dtype=float32)"),
    (1 / 3, "tf.Tensor(0.33333334, shape=(), dtype=float32)"),
    ([1.0, 2.0, 3.0], "tf.Tensor([1. 2. 3.], shape=(3,), dtype=float32)"),
    ("abc", "tf.Tensor(b'abc', shape=(), dtype=string)"),
    (1 + 2j, "tf.Tensor((1+2j), shape=(), dtype=complex128)"),
    ([[1, 2], [3, 4]], "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"),
])
def test_str(value, text):
    assert str(tf.constant(value)) == text


def test_empty_and_large_printing():
    assert repr(tf.zeros([0, 3])) == "<tf.Tensor: shape=(0, 3), dtype=float32, numpy=array([], shape=(0, 3), dtype=float32)>"
    assert str(tf.range(2000)) == "tf.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)"
    assert repr(tf.range(2000)) == ("<tf.Tensor: shape=(2000,), dtype=int32, numpy=\narray([   0,    1,    2, ..., 1997, "
                                    "1998, 1999],\n      shape=(2000,), dtype=int32)>")


def test_tensor_shape():
    assert str(tf.TensorShape([])) == "()" and str(tf.TensorShape([3])) == "(3,)"
    assert str(tf.TensorShape([2, 3])) == "(2, 3)" and str(tf.TensorShape([None, 3])) == "(None, 3)"
    assert str(tf.TensorShape(None)) == "<unknown>" and repr(tf.TensorShape([2, 3])) == "TensorShape([2, 3])"
    s = tf.constant(np.zeros((2, 3))).shape
    assert s == (2, 3) and s == [2, 3] and s.as_list() == [2, 3] and s.rank == 2 and s[1] == 3 and len(s) == 2
    assert s.num_elements() == 6 and tf.TensorShape([None, 3]).is_compatible_with([5, 3])


def test_variable_printing_and_names():
    assert repr(tf.Variable(3.0)) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>"
    v = tf.Variable(3.0, name='x0')
    assert str(v) == repr(v) == "<tf.Variable 'x0:0' shape=() dtype=float32, numpy=3.0>"
    assert v.name == 'x0:0'
    assert repr(tf.Variable([1.0, 2.0], name='x0')) == (
        "<tf.Variable 'x0:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>")
    assert repr(tf.Variable([[1, 2], [3, 4]])) == (
        "<tf.Variable 'Variable:0' shape=(2, 2) dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>")
    assert repr(tf.Variable(3.0).assign(6.0)) == "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=6.0>"


def test_variable_assignments():
    v = tf.Variable([1.0, 2.0])
    v.assign([3.0, 4.0]).assign_add([1.0, 1.0])
    v.assign_sub(tf.constant([0.5, 0.5]))
    assert v.numpy().tolist() == [3.5, 4.5]
    with pytest.raises(ValueError, match=r"^Cannot assign value to variable ' Variable:0': Shape mismatch.The variable shape \(2,\), and the assigned value shape \(3,\) are incompatible.$"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor with dtype float64"):
        v.assign(tf.constant([1.0, 2.0], tf.float64))
    assert v.numpy().tolist() == [3.5, 4.5]
    with pytest.raises(ValueError, match="initial_value"):
        tf.Variable(None)
    assert tf.Variable(lambda: tf.ones([2])).numpy().tolist() == [1.0, 1.0]
    assert tf.Variable(1.0, dtype=tf.float64).dtype == tf.float64


def test_default_dtypes():
    assert tf.constant(1.0).dtype == tf.float32 and tf.constant(1).dtype == tf.int32
    assert tf.constant([1, 2]).dtype == tf.int32 and tf.constant(np.array([1, 2])).dtype == tf.int64
    assert tf.constant(np.array([1.0])).dtype == tf.float64 and tf.constant(2 ** 40).dtype == tf.int64
    assert tf.constant(1.0, dtype=tf.float64).dtype == tf.float64
    with pytest.raises(TypeError, match="Cannot convert 2.5 to EagerTensor of dtype int32"):
        tf.constant(2.5, dtype=tf.int32)
    assert tf.constant(7.0, shape=[2, 2]).numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert tf.as_dtype('float32') is tf.float32 and tf.as_dtype(np.int64) is tf.int64
    assert repr(tf.float32) == "tf.float32" and tf.float32.is_floating and not tf.int32.is_floating


def test_python_operators():
    x = tf.constant([1.0, 2.0, 4.0])
    assert (x + 1).numpy().tolist() == [2, 3, 5] and (1 + x).numpy().tolist() == [2, 3, 5]
    assert (x - 1).numpy().tolist() == [0, 1, 3] and (10 - x).numpy().tolist() == [9, 8, 6]
    assert (x * 2).numpy().tolist() == [2, 4, 8] and (x / 2).numpy().tolist() == [0.5, 1, 2]
    assert (2 / x).numpy().tolist() == [2, 1, 0.5] and (x ** 2).numpy().tolist() == [1, 4, 16]
    assert (2 ** x).numpy().tolist() == [2, 4, 16] and (x // 3).numpy().tolist() == [0, 0, 1]
    assert (x % 3).numpy().tolist() == [1, 2, 1] and (-x).numpy().tolist() == [-1, -2, -4]
    assert abs(tf.constant(-3.0)).numpy() == 3.0
    assert (x > 1.5).numpy().tolist() == [False, True, True] and (x == 2.0).numpy().tolist() == [False, True, False]
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).numpy().tolist() == [[7, 10], [15, 22]]
    assert (np.ones((2, 2), np.float32) @ m).numpy().tolist() == [[4, 6], [4, 6]]
    assert isinstance(np.float32(2.0) * x, tf.Tensor)
    assert bool(tf.constant(True)) and float(tf.constant(2.5)) == 2.5 and int(tf.constant(3)) == 3
    assert np.asarray(x).tolist() == [1.0, 2.0, 4.0] and len(x) == 3 and [float(t) for t in x] == [1.0, 2.0, 4.0]
    assert f"{tf.constant(2.5):.2f}" == "2.50"
    assert (tf.constant(7) // 2).dtype == tf.int32 and (tf.constant(7) / 2).dtype == tf.float64
    with pytest.raises(TypeError, match="unhashable"):
        {x: 1}
    assert {x.ref(): 1}[x.ref()] == 1


def test_mixed_dtypes_are_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"cannot compute Mul as input #1\(zero-based\) was expected to be a float tensor but is a double tensor"):
        tf.constant(1.0) * tf.constant(2.0, tf.float64)


def test_slicing_and_its_gradient():
    x = tf.constant(np.arange(12.0).reshape(3, 4))
    assert x[1].numpy().tolist() == [4, 5, 6, 7] and x[:, 1].numpy().tolist() == [1, 5, 9]
    assert x[::2, -1].numpy().tolist() == [3, 11] and x[..., None].shape == (3, 4, 1)
    assert x[tf.constant(2), 0].numpy() == 8.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x[1:, ::2] * 3.0) + x[0, 0] * x[0, 0]
    g = tape.gradient(y, x).numpy()
    expected = np.zeros((3, 4))
    expected[1:, ::2] = 3.0
    assert g.tolist() == expected.tolist()
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[1.5]


def test_variable_operators_and_slicing_are_differentiable():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = v[0] * v[2] + (tf.reshape(v, [1, 3]) @ tf.ones([3, 1]))[0, 0] * 0 + tf.reduce_sum(-v)
    assert tape.gradient(y, v).numpy().tolist() == [2.0, -1.0, 0.0]


def test_module_tracks_variables_in_attributes_lists_and_dicts():
    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([n_in, n_out]), name='w')
            self.b = tf.Variable(tf.zeros([n_out]), name='b', trainable=False)

        def __call__(self, x):
            return x @ self.w + self.b

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2, 3), Dense(3, 1)]
            self.extra = {'scale': tf.Variable(2.0, name='scale')}

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x * self.extra['scale']

    net = Net()
    assert net.name == "net" and Dense(1, 1).name == "dense"
    assert len(net.variables) == 5 and len(net.trainable_variables) == 3 and len(net.submodules) == 2
    assert [v.name for v in net.trainable_variables] == ['scale:0', 'w:0', 'w:0']
    with tf.GradientTape() as tape:
        y = net(tf.ones([1, 2]))
    grads = tape.gradient(y, net.trainable_variables)
    assert all(g is not None for g in grads) and y.numpy().tolist() == [[12.0]]
    with pytest.raises(ValueError, match="is not a valid module name"):
        tf.Module(name="bad name!")


def test_lists_of_tensors_pack_with_the_tensors_dtype():
    t = tf.convert_to_tensor([tf.constant(1.0, tf.float64), 2.0])
    assert t.dtype == tf.float64 and t.numpy().tolist() == [1.0, 2.0]
    assert tf.constant([tf.constant(1), 2]).dtype == tf.int32


def test_equality_with_foreign_objects_and_dtype_errors():
    x = tf.constant([1.0, 2.0])
    assert (x == None) is False and (x != "text") is True  # noqa: E711
    with pytest.raises(tf.errors.InvalidArgumentError):
        x == tf.constant([1.0, 2.0], tf.float64)
    assert tf.sigmoid(tf.constant(0.0)).numpy() == 0.5


def test_adopt_takes_fresh_arrays_without_copying_and_falls_back_otherwise():
    v = tf.Variable(np.zeros((2, 3), np.float32))
    with tf.GradientTape() as tape:
        before = v * 1.0
    fresh = np.ones((2, 3), np.float32)
    v._adopt(fresh)
    assert np.shares_memory(v._value, fresh) and before.numpy().tolist() == [[0.0] * 3] * 2
    wrong_dtype = np.full((2, 3), 2.0)
    v._adopt(wrong_dtype)
    assert not np.shares_memory(v._value, wrong_dtype) and v.dtype == tf.float32 and float(v[0, 0]) == 2.0
    with pytest.raises(ValueError, match="Shape mismatch"):
        v._adopt(np.ones((3, 2), np.float32))


def test_scalars_convert_to_numpy_arrays_and_keep_their_dtype():
    x = tf.constant(1.5)
    y = x * x + 1.0
    for t in (x, y, tf.constant(np.float64(2.0)), tf.constant(3)):
        arr = np.asarray(t)
        assert isinstance(arr, np.ndarray) and arr.shape == () and arr.dtype == t.dtype.as_numpy_dtype
    assert np.asarray(y, dtype=np.float64).dtype == np.float64
    assert float(np.array(y)) == 3.25
    assert type(x.numpy()) is np.float32  # TensorFlow's .numpy() of a scalar is a numpy scalar


def test_variables_and_their_errors_read_as_tensorflows():
    v = tf.Variable([1.0, 2.0])
    assert type(v).__name__ == "ResourceVariable" and isinstance(v, tf.Variable)
    expected = (r"^Cannot assign value to variable ' Variable:0': Shape mismatch.The variable shape \(2,\), and the "
                r"assigned value shape \(3,\) are incompatible.$")
    with pytest.raises(ValueError, match=expected):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=expected):
        tf.function(lambda: v.assign([1.0, 2.0, 3.0]))()      # the traced assign says the same
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"requires a multiple of 4 \[Op:Reshape\]$"):
        tf.reshape(tf.range(6), (-1, 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Only one input size may be -1, not both 0 and 1"):
        tf.reshape(tf.range(6), (-1, -1))

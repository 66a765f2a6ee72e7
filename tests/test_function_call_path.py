"""The fast call path of a traced tf.function keeps the retracing rules of the general one: a call whose arguments
are all tensors builds its cache key directly, an input_signature remembers the argument shapes it has accepted,
and the replay hands back every output structure as traced."""
import numpy as np
import pytest

import tapeflow as tf


def test_tensors_and_arrays_of_the_same_shape_and_dtype_share_one_trace():
    @tf.function
    def f(x, y):
        return x * y

    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    f(tf.constant(a), tf.constant(b))
    f(a, b)                                    # numpy arrays take the general path, with the same key
    f(tf.constant(b), tf.constant(b) + 1.0)      # other values, same shapes and dtypes
    assert f.experimental_get_tracing_count() == 1
    f(tf.constant(a[:1]), tf.constant(b[:1]))  # a new shape
    f(tf.cast(a, tf.float64), tf.cast(b, tf.float64))   # a new dtype
    assert f.experimental_get_tracing_count() == 3


def test_python_values_variables_and_nesting_still_decide_retracing():
    calls = []

    @tf.function
    def f(x, scale=1.0):
        calls.append(scale)
        return x * scale

    x = tf.constant([1.0, 2.0])
    f(x)
    f(x, 2.0)
    f(x, 2.0)
    f(x, 3.0)
    assert calls == [1.0, 2.0, 3.0] and f.experimental_get_tracing_count() == 3
    assert f(x, 3.0).numpy().tolist() == [3.0, 6.0]

    @tf.function
    def total(pair):
        return pair[0] + pair[1]

    assert float(total([tf.constant(1.0), tf.constant(2.0)])) == 3.0
    assert float(total((tf.constant(1.0), tf.constant(5.0)))) == 6.0
    assert total.experimental_get_tracing_count() == 2   # a list and a tuple are different structures

    v, w = tf.Variable(1.0), tf.Variable(1.0)

    @tf.function
    def read(var):
        return var * 2.0

    assert float(read(v)) == 2.0 and float(read(v)) == 2.0
    w.assign(5.0)
    assert float(read(w)) == 10.0                         # another variable of the same spec: the same trace (TF)
    assert read.experimental_get_tracing_count() == 1
    read(tf.Variable(1.0, trainable=False))               # trainability is part of the spec
    assert read.experimental_get_tracing_count() == 2


def test_an_input_signature_checks_every_call_after_remembering_a_match():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return x + 1.0

    assert f(tf.zeros([3, 2])).numpy().tolist() == [[1.0, 1.0]] * 3
    assert f(tf.zeros([3, 2])).shape == (3, 2)
    with pytest.raises(TypeError, match="does not match TensorSpec"):
        f(tf.zeros([3, 2], tf.float64))                   # same shape, other dtype
    with pytest.raises(TypeError, match="does not match TensorSpec"):
        f(tf.zeros([3, 3]))
    with pytest.raises(TypeError, match="has 1 tensors, but 2 were given"):
        f(tf.zeros([3, 2]), tf.zeros([3, 2]))
    assert f(np.zeros((1, 2), np.float32)).numpy().tolist() == [[1.0, 1.0]]
    assert f.experimental_get_tracing_count() == 1

    @tf.function(input_signature=[[tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.float32)]])
    def scaled(pair):
        return pair[0] * pair[1]

    assert scaled([tf.constant([1.0, 2.0]), tf.constant(3.0)]).numpy().tolist() == [3.0, 6.0]


def test_the_replay_returns_every_output_structure():
    @tf.function
    def parts(x):
        return {"double": x * 2.0, "label": "x", "pair": (x + 1.0, 7)}

    x = tf.constant([1.0, 2.0])
    for _ in range(2):
        out = parts(x)
        assert out["double"].numpy().tolist() == [2.0, 4.0] and out["label"] == "x"
        assert out["pair"][0].numpy().tolist() == [2.0, 3.0] and int(out["pair"][1]) == 7
    assert isinstance(out["pair"], tuple)

    @tf.function
    def nothing(x):
        x * 2.0

    assert nothing(x) is None

    @tf.function
    def same_twice(x):
        y = x * 3.0
        return y, y

    a, b = same_twice(x)
    assert a.numpy().tolist() == b.numpy().tolist() == [3.0, 6.0]


def test_python_scalars_strings_and_none_key_by_type_and_value():
    seen = []

    @tf.function
    def f(x, a, b, c):
        seen.append((a, b, c))
        return x * 2.0 if c is None else x

    x = tf.constant(1.0)
    for a, b, c in [(1, "s", None), (1, "s", None), (True, "s", None), (1.0, "s", None), (1, "t", None),
                    (1, "s", 0), (1, "s", None)]:
        f(x, a, b, c)
    assert seen == [(1, "s", None), (True, "s", None), (1.0, "s", None), (1, "t", None), (1, "s", 0)]
    assert f.experimental_get_tracing_count() == 5
    f(x, a=1, b="s", c=None)           # keywords: another structure, as before
    assert f.experimental_get_tracing_count() == 6

"""Recursive conversion: functions, methods and callable objects a tf.function calls are converted too when
they are user code (tapeflow/autograph/calls.py); library code, builtins and do_not_convert are not."""
import functools
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.autograph import calls, converter


def helper(x):
    if tf.reduce_sum(x) > 0:
        x = x * x
    else:
        x = -x
    return x


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        if tf.reduce_sum(x) > 0:
            return x * self.k
        return x - self.k

    def __call__(self, x):
        while tf.reduce_sum(x) < 10.0:
            x = x + 1.0
        return x


class Shifted(Scaler):
    def apply(self, x):
        return super().apply(x) + 1.0

    def __call__(self, x):
        y = x
        if tf.reduce_sum(x) > 0:
            y = super().__call__(x)     # super() inside a converted if (a generated function)
        return y


def _op_types(function, *args):
    return [op.type for op in function.get_concrete_function(*args).graph.get_operations()]


def test_a_helper_with_a_tensor_if_becomes_a_cond():
    @tf.function
    def f(x):
        return helper(x) + 1.0
    for value in ([1.0, 2.0], [-1.0, -2.0]):
        x = tf.constant(value)
        np.testing.assert_array_equal(f(x).numpy(), helper(x).numpy() + 1.0)   # eager == traced
    assert f.experimental_get_tracing_count() == 1
    assert "If" in _op_types(f, tf.constant([1.0, 2.0]))
    assert "ag__.converted_call(helper, (x,), None)" in tf.autograph.to_code(f)


def test_methods_super_and_callable_objects_are_converted():
    @tf.function
    def f(x):
        return Scaler(3.0).apply(x), Shifted(2.0).apply(x), Scaler(0.0)(x), Shifted(0.0)(x)
    for value in ([1.0, 2.0], [-1.0, -2.0]):
        x = tf.constant(value)
        got = f(x)
        expected = (Scaler(3.0).apply(x), Shifted(2.0).apply(x), Scaler(0.0)(x), Shifted(0.0)(x))
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert f.experimental_get_tracing_count() == 1
    assert _op_types(f, tf.constant([1.0, 2.0])).count("If") == 3
    assert "While" in _op_types(f, tf.constant([1.0, 2.0]))


def test_nested_tf_function_and_decorated_helpers_are_converted():
    @tf.function
    def inner(x):
        if x > 0:
            return x * 10.0
        return x

    def doubled(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return 2.0 * fn(*args)
        return wrapper

    @doubled
    def decorated(x):
        if x > 0:
            x = x + 1.0
        return x

    @tf.function
    def outer(x):
        return inner(x) + decorated(x)
    assert [float(outer(tf.constant(v))) for v in (1.0, -1.0)] == [14.0, -3.0]
    assert outer.experimental_get_tracing_count() == 1


def test_do_not_convert_library_code_and_builtins_stay_python():
    @tf.autograph.experimental.do_not_convert
    def plain(x):
        if x > 0:
            return x
        return -x

    @tf.function
    def f(x):
        return plain(x)
    with pytest.raises(TypeError, match="Python bool"):
        f(tf.constant(1.0))

    assert calls.is_user_function(helper) and calls.is_user_function(Scaler.apply)
    assert not calls.is_user_function(plain)
    assert not calls.is_user_function(tf.nn.relu)              # tapeflow's own
    assert not calls.is_user_function(json.dumps)              # the standard library
    assert not calls.is_user_function(np.linalg.norm)          # site-packages
    assert not calls.is_user_function(len)

    @tf.function
    def uses_library(x):
        return tf.nn.relu(x) + np.float32(len([1, 2])) + float(json.loads("1.5"))
    assert float(uses_library(tf.constant(-1.0))) == 3.5


def test_converted_code_is_compiled_once_per_definition():
    def make(k):
        def step(x):
            if x > k:
                x = x - k
            return x
        return step
    a, b = converter.convert(make(1.0)), converter.convert(make(5.0))
    assert a.__code__ is b.__code__ and a is not b
    assert float(a(tf.constant(3.0))) == 2.0 and float(b(tf.constant(3.0))) == 3.0

    @tf.function
    def f(x):
        return make(1.0)(x) + make(5.0)(x)
    assert float(f(tf.constant(7.0))) == 8.0
    assert float(f(tf.constant(0.5))) == 1.0


def test_a_bound_method_given_to_tf_function_is_converted():
    scaler = Scaler(3.0)
    apply = tf.function(scaler.apply)
    assert [float(apply(tf.constant(v))) for v in (2.0, -2.0)] == [6.0, -5.0]
    assert apply.experimental_get_tracing_count() == 1
    relu = tf.function(tf.nn.relu)          # tapeflow's own functions run as they are written
    assert relu._traced_function() is tf.nn.relu and float(relu(tf.constant(-1.0))) == 0.0


def test_python_side_effects_of_a_converted_helper_happen_at_trace_time(capfd):
    # The guide's rule (print traces, tf.print executes) holds through a converted helper.
    def report(x):
        print("Traced with", x)
        if x > 0:
            tf.print("Executed with", x)
        return x

    @tf.function
    def f(x):
        return report(x)
    f(1)
    f(1)
    f(2)
    captured = capfd.readouterr()
    assert captured.out.splitlines() == ["Traced with 1", "Traced with 2"]
    assert captured.err.splitlines() == ["Executed with 1", "Executed with 1", "Executed with 2"]
    assert f.experimental_get_tracing_count() == 2
    f(tf.constant(3))
    f(tf.constant(-3))
    assert capfd.readouterr().err.splitlines() == ["Executed with 3"]
    assert f.experimental_get_tracing_count() == 3

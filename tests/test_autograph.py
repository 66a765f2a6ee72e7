"""AutoGraph: tf.function converts Python if/while/for on tensors into cond/while_loop, keeps Python
conditions Python, handles break/continue, and says clearly what it does not convert."""
import numpy as np
import pytest

import tapeflow as tf

from gradcheck import check_gradients


def test_if_on_a_tensor_decides_at_each_call():
    @tf.function
    def f(x):
        if tf.reduce_sum(x) > 0:
            x = x * x
        else:
            x = -x // 2
        return x
    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [1.0, 4.0])
    np.testing.assert_array_equal(f(tf.constant([-3.0, -1.0])).numpy(), [1.0, 0.0])
    assert f.experimental_get_tracing_count() == 1


def test_python_conditions_stay_python():
    @tf.function
    def f(x, training):
        if training:          # a Python bool: one branch is traced, per value of the argument
            x = x + 1.0
        return x
    assert float(f(tf.constant(1.0), True)) == 2.0 and float(f(tf.constant(1.0), False)) == 1.0
    assert f.experimental_get_tracing_count() == 2
    ops = [op.type for op in f.get_concrete_function(tf.constant(1.0), True).graph.get_operations()]
    assert "If" not in ops


def test_fizzbuzz_prints_at_each_call(capfd):
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            if i % 15 == 0:
                tf.print("FizzBuzz")
            elif i % 3 == 0:
                tf.print("Fizz")
            elif i % 5 == 0:
                tf.print("Buzz")
            else:
                tf.print(i)
    fizzbuzz(tf.constant(5))
    fizzbuzz(tf.constant(15))
    printed = capfd.readouterr().err.split()
    expected = ["1", "2", "Fizz", "4", "Buzz"]
    assert printed == expected + expected + ["Fizz", "7", "8", "Fizz", "Buzz", "11", "Fizz", "13", "14", "FizzBuzz"]
    assert fizzbuzz.experimental_get_tracing_count() == 1


def test_while_on_a_tensor_with_tf_print(capfd):
    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            x = tf.tanh(x)
        return x
    x = tf.constant([0.5, 0.9, 0.7])
    expected = x.numpy()
    while expected.sum() > 1:
        expected = np.tanh(expected)
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-6)
    assert [op.type for op in f.get_concrete_function(x).graph.get_operations()].count("While") == 1


def test_accumulating_in_a_tensor_array_over_tf_range():
    def rnn_step(inp, state):
        return inp + state

    @tf.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        input_data = tf.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]
        states = tf.TensorArray(tf.float32, size=max_seq_len)
        state = initial_state
        for i in tf.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return tf.transpose(states.stack(), [1, 0, 2])
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = dynamic_rnn(rnn_step, tf.constant(data), tf.zeros([2, 4]))
    np.testing.assert_array_equal(out.numpy(), np.cumsum(data, axis=1))


def test_continue_and_break_in_loops_over_tensors():
    def sum_even(items):
        s = 0
        for c in items:
            if c % 2 > 0:
                continue
            s += c
        return s

    def until(limit):
        total = 0.0
        i = 0
        while i < 10:
            if total > limit:
                break
            total += 1.5
            i += 1
        return total, i
    assert int(tf.function(sum_even)(tf.constant([10, 12, 15, 20]))) == sum_even([10, 12, 15, 20])
    traced_until = tf.function(until)
    for limit in (4.0, 100.0):
        total, i = traced_until(tf.constant(limit))
        assert (float(total), int(i)) == until(limit)
    assert "ag__.for_stmt" in tf.autograph.to_code(sum_even)


def test_boolean_operators_on_tensors_become_logical_ops():
    @tf.function
    def f(x, y):
        if x > 0 and not y > 0 or x > 10:
            r = 1
        else:
            r = 0
        return r
    cases = [(1, -1), (1, 1), (-1, -1), (11, 5)]
    assert [int(f(tf.constant(a), tf.constant(b))) for a, b in cases] == [1, 0, 0, 1]
    assert f.experimental_get_tracing_count() == 1


def test_gradients_flow_through_converted_statements():
    @tf.function
    def f(x, n):
        y = x
        for _ in tf.range(n):
            if tf.reduce_sum(y) > 1.0:
                y = y * 0.5
            else:
                y = y * y + x
        return y
    n = tf.constant(4)
    check_gradients(lambda x: f(x, n), np.array([0.3, 0.9]))


def test_methods_closures_and_nonlocal_state_are_converted():
    scale = tf.constant(3.0)

    class Counter(tf.Module):
        def __init__(self):
            self.v = tf.Variable(0.0)

        @tf.function
        def run(self, n):
            for i in tf.range(n):
                self.v.assign_add(tf.cast(i, tf.float32) * scale)
            return self.v + 0.0
    c = Counter()
    assert float(c.run(tf.constant(3))) == 9.0
    assert float(c.run(tf.constant(2))) == 12.0


def test_early_returns_and_clear_errors_for_what_is_not_converted():
    @tf.function
    def early_return(x):
        if x > 0:
            return x * 2.0
        x = x - 1.0
        return -x
    assert [float(early_return(tf.constant(v))) for v in (1.0, -3.0)] == [2.0, 4.0]
    assert early_return.experimental_get_tracing_count() == 1

    @tf.function
    def search(x):
        for v in x:
            if v > 2.0:
                return v
        return -1.0
    with pytest.raises(NotImplementedError, match="a for loop with a return statement"):
        search(tf.constant([1.0, 3.0]))
    assert float(tf.function(search.python_function)([1.0, 3.0])) == 3.0   # a Python iterable still works

    @tf.function
    def temporary(x):
        if x > 0:
            t = x * 2.0      # new in the branch and not used after it: no value needed in the else branch
            x = t + 1.0
        return x
    assert [float(temporary(tf.constant(v))) for v in (1.0, -1.0)] == [3.0, -1.0]

    @tf.function
    def one_branch(x):
        if x > 0:
            y = x
        return y
    with pytest.raises(NameError, match="'y' is used before it has a value"):
        one_branch(tf.constant(1.0))

    @tf.function
    def mixed(x):
        y = None
        if x > 0:
            y = x
        return y
    with pytest.raises(TypeError, match="'y' is a Tensor in the if branch and a NoneType in the else branch"):
        mixed(tf.constant(1.0))

    @tf.function(autograph=False)
    def unconverted(x):
        if x > 0:
            x = -x
        return x
    with pytest.raises(TypeError, match="Python bool"):
        unconverted(tf.constant(1.0))


def test_to_code_shows_the_converted_source():
    def f(x):
        if x > 0:
            x = x * x
        return x
    code = tf.autograph.to_code(f)
    assert "def f(x):" in code and "ag__.if_stmt(x > 0" in code
    assert float(tf.function(f)(tf.constant(-2.0))) == -2.0


def test_nonlocal_names_and_generators_keep_python_semantics():
    traces = 0

    @tf.function
    def f(x):
        nonlocal traces
        if x > 0:
            traces += 1      # Python state: changes while tracing, as TensorFlow's guide says
            x = x + 1.0
        return x
    assert [float(f(tf.constant(v))) for v in (1.0, -1.0)] == [2.0, -1.0]
    assert traces == 1

    def numbers(n):
        for i in range(n):
            yield i
    assert tf.autograph.convert(numbers) is numbers

"""tf.print (issue 14): TensorFlow's formatting, stderr by default, printed at every call of a function."""
import sys

import numpy as np

import tapeflow as tf


def test_values_are_formatted_as_tensorflow_prints_them(capsys):
    tf.print(tf.constant(2))
    tf.print("x:", tf.constant([1.0, 2.5, 0.1]), "n =", tf.constant(3))
    tf.print(tf.range(10))
    tf.print(tf.constant(1.0) / 3.0)
    tf.print(tf.constant([[1, 2], [3, 4]]), output_stream=sys.stdout)
    tf.print(tf.constant([True, False]), tf.constant(np.nan), sep="|")
    out = capsys.readouterr()
    assert out.err.splitlines() == ["2", "x: [1 2.5 0.1] n = 3", "[0 1 2 ... 7 8 9]", "0.333333343", "[1 0]|nan"]
    assert out.out == "[[1 2]\n [3 4]]\n"


def test_a_traced_function_prints_at_every_call_while_python_print_runs_once(capsys):
    @tf.function
    def f(x):
        print("traced")
        tf.print("called with", x)
        return x + 1

    f(tf.constant(1)), f(tf.constant(2))
    out = capsys.readouterr()
    assert out.out == "traced\n"
    assert out.err == "called with 1\ncalled with 2\n"


def test_summarize_and_nested_elision(capsys):
    tf.print(tf.reshape(tf.range(64), (8, 8)), summarize=1)
    tf.print(tf.range(8), summarize=-1)
    assert capsys.readouterr().err == "[[0 ... 7]\n ...\n [56 ... 63]]\n[0 1 2 3 4 5 6 7]\n"

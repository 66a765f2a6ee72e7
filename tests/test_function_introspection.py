"""tf.function as the guide describes it (issue 14): signatures, operations, retracing, returned
Python numbers, variables created after the first call."""
import pytest

import tapeflow as tf


def test_pretty_printed_concrete_signatures_list_every_trace():
    @tf.function
    def double(a):
        return a + a

    double(tf.constant(1)), double(tf.constant(1.5)), double(tf.constant(2))
    assert double.experimental_get_tracing_count() == 2
    assert double.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.int32, name=None)\n"
        "Output Type:\n  TensorSpec(shape=(), dtype=tf.int32, name=None)\nCaptures:\n  None\n\n"
        "Input Parameters:\n  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)\n"
        "Output Type:\n  TensorSpec(shape=(), dtype=tf.float32, name=None)\nCaptures:\n  None")


def test_python_arguments_print_as_literals_and_variables_as_captures():
    v = tf.Variable(2.0)

    @tf.function
    def scale(x, factor):
        return x * v * factor

    scale(tf.constant([1.0]), 3)
    text = scale.pretty_printed_concrete_signatures()
    assert "factor (POSITIONAL_OR_KEYWORD): Literal[3]" in text
    assert "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(1,), dtype=tf.float32, name=None)" in text
    assert f"  {id(v)}: TensorSpec(shape=(), dtype=tf.resource, name=None)" in text


def test_get_concrete_function_reuses_a_matching_trace_and_lists_operations():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        return tf.nn.relu(x) * 2.0

    f(tf.constant([1.0, -1.0]))
    concrete = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
    assert len(traces) == 1                       # the call's trace serves the signature
    assert [(op.name, op.type) for op in concrete.graph.get_operations()][:2] == [("x", "Placeholder"),
                                                                                  ("Relu", "Relu")]
    assert concrete.graph.structured_outputs.shape == (2,)
    assert f(tf.constant([3.0, -3.0])).numpy().tolist() == [6.0, 0.0]
    assert len(traces) == 1


def test_python_numbers_returned_become_tensors():
    @tf.function
    def add_one(foo):
        return 1 + foo

    result = add_one(1)
    assert isinstance(result, tf.Tensor) and result.dtype == tf.int32 and int(result) == 2


def test_creating_a_variable_on_every_trace_is_tensorflows_value_error():
    # TensorFlow 2.21: the first call traces twice when it created variables (the second trace may not), so a
    # function that creates one on every call raises at once, and on every later call.
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        v = tf.Variable(1.0)
        return x * v

    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        f(tf.constant(2.0))
    assert len(traces) == 2 and f.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        f(tf.constant(2.0))
    assert len(traces) == 3


def test_a_variable_created_once_on_the_first_call_is_allowed(capsys):
    class Scale:
        v = None

        @tf.function
        def __call__(self, x):
            print("tracing")
            if self.v is None:
                self.v = tf.Variable(2.0)
            return self.v * x

    scale = Scale()
    assert float(scale(1.0)) == 2.0
    assert float(scale(tf.constant(3.0))) == 6.0                 # a retrace: the variable exists, none created
    assert float(scale(2.0)) == 4.0
    # TensorFlow also traces the first call a second time (creation disallowed) and counts and prints it;
    # tapeflow's check is silent and uncounted (see Function._counted_trace).
    assert capsys.readouterr().out == "tracing\n" * 3


def test_frequent_retracing_warns_as_tensorflow(capsys):
    @tf.function
    def f(x):
        return x

    for i in range(4):
        f(i)                        # Python numbers retrace per value
    assert "retracing" not in capsys.readouterr().err
    f(4)
    err = capsys.readouterr().err
    assert "5 out of the last 5 calls to <function" in err and "triggered tf.function retracing" in err
    for _ in range(5):
        f(tf.constant(1))           # one new trace, then none: the window fills with untraced calls
    f(tf.constant(1.0))
    assert "retracing" in capsys.readouterr().err    # still 5 traces in the last 10 calls


def test_as_graph_def_lists_nodes_as_tensorflow_names_them():
    # TensorFlow 2.21 prints, for the tf.function guide's `double`: [] -> a, ['a', 'a'] -> add, ['add'] -> Identity
    @tf.function
    def double(a):
        return a + a

    graph_def = double.get_concrete_function(tf.constant(1)).graph.as_graph_def()
    assert [(list(n.input), n.name) for n in graph_def.node] == [([], "a"), (["a", "a"], "add"), (["add"], "Identity")]
    assert [n.op for n in graph_def.node] == ["Placeholder", "AddV2", "Identity"]
    assert 'name: "add"\n  op: "AddV2"\n  input: "a"\n  input: "a"' in str(graph_def)


def test_as_graph_def_shows_constants_variables_and_every_output():
    v = tf.Variable(1.0)

    @tf.function
    def f(x, w):
        v.assign_add(1.0)
        y = tf.matmul(x, w) * 2.0
        return tf.nn.relu(y), y

    nodes = f.get_concrete_function(tf.constant([[1.0]]), tf.constant([[2.0]])).graph.as_graph_def().node
    by_name = {n.name: n for n in nodes}
    assert [n.op for n in nodes if n.op == "Placeholder"] == ["Placeholder"] * 3   # x, w and v's resource
    assert by_name["MatMul"].input == ["x", "w"]
    assert by_name["mul"].op == "Mul" and by_name["mul"].input[0] == "MatMul"
    assert by_name[by_name["mul"].input[1]].op == "Const"
    assert by_name["AssignAddVariableOp"].input[0].endswith("/resource")
    data_inputs = [[i for i in n.input if not i.startswith("^")] for n in nodes if n.op == "Identity"]
    assert data_inputs[-2:] == [["Relu"], ["mul"]]     # TensorFlow also has control inputs ("^NoOp") here

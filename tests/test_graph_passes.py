"""Graph passes, each on its own: node counts before and after, identical results on random inputs,
and side-effect nodes (proven impure by op metadata) never removed, merged or folded."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework import recording
from tapeflow.framework.op_purity import is_pure
from tapeflow.framework.recording import _FORWARDS, register_op
from tapeflow.graph_passes import (PassGraph, eliminate_common_subexpressions, eliminate_dead_code,
                                   fold_constants, optimize, simplify_algebra)
from tapeflow.graph_passes.common_subexpressions import attribute_key
from tapeflow.framework.recording import execute_state, state_op_variable_counts
from tapeflow.graph_passes.pass_graph import VARIABLE_ASSIGN, VARIABLE_READ

rng = np.random.default_rng(7)


def traced(fn, *args):
    """(FuncGraph, PassGraph copy with static input shapes) of ``fn`` traced on ``args``."""
    concrete = tf.function(fn).get_concrete_function(*args)
    graph = concrete.graph
    return graph, PassGraph.from_func_graph(graph, [tuple(a.shape) for a in args])


def run(pass_graph, inputs, variables=()):
    """Interprets a PassGraph on numpy inputs (ops through their registered forwards)."""
    values = {}

    def get(ref):
        if ref[0] == "in":
            return inputs[ref[1]]
        if ref[0] == "const":
            return pass_graph.constants[ref[1]]
        return values[ref]
    for k, node in enumerate(pass_graph.nodes):
        if node is None:
            continue
        op, refs, attrs, _ = node
        if op == VARIABLE_READ:
            values[("node", k, 0)] = variables[attrs["variable"]].numpy()
            continue
        if op == VARIABLE_ASSIGN or state_op_variable_counts(op) is not None:
            continue
        forward, n_out = _FORWARDS[op]
        result = forward(*[get(r) for r in refs], **attrs)
        for j, value in enumerate((result,) if n_out == 1 else tuple(result)):
            values[("node", k, j)] = value
    return [np.asarray(get(r)) for r in pass_graph.outputs if r is not None]


def live_count(pass_graph):
    return sum(node is not None for node in pass_graph.nodes)


def op_types(pass_graph):
    return sorted(node[0] for node in pass_graph.nodes if node is not None)


def assert_same_results(before, after, inputs, variables=()):
    for a, b in zip(run(before, inputs, variables), run(after, inputs, variables)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def fresh(graph, shapes):
    return PassGraph.from_func_graph(graph, shapes)


# ---------------------------------------------------------------- purity ---
def test_purity_is_declared_not_guessed():
    assert is_pure("MatMul") and is_pure("AddV2") and is_pure("StatelessUniformUnit")
    for op in ("Assert", "PrintV2", "CheckNumerics", "RandomUniform", "RandomStandardNormal", "DropoutMask",
               "RandomShuffle", "Multinomial", "TruncatedNormal", VARIABLE_READ, VARIABLE_ASSIGN, "ApplyAdam",
               "AccumulateGradient"):
        assert not is_pure(op), op
    register_op("GraphPassTestUndeclared")(lambda x: x + 1)
    register_op("GraphPassTestDeclaredPure", pure=True)(lambda x: x + 1)
    assert not is_pure("GraphPassTestUndeclared")     # the default: impure
    assert is_pure("GraphPassTestDeclaredPure")
    with pytest.raises(ValueError, match="at_trace side effect cannot be declared pure"):
        register_op("GraphPassTestBad", at_trace=lambda x: x, pure=True)


# ------------------------------------------------------ dead code ---
def test_dead_code_removes_unread_pure_nodes_only():
    w = tf.Variable(rng.normal(size=(4, 3)).astype(np.float32))
    seen = []
    register_op("GraphPassTestSideEffect")(lambda x: seen.append(1) or x)   # impure by default

    def f(x):
        unused = tf.matmul(x, w) * 2.0                                 # pure, nobody reads it
        recording.execute("GraphPassTestSideEffect", (x,))             # unread, but impure
        tf.random.uniform([2])                                          # a random draw: impure
        tf.print(x)
        w.assign_add(tf.ones_like(w))
        del unused
        return tf.reduce_sum(x)

    x = tf.constant(rng.normal(size=(2, 4)).astype(np.float32))
    graph, g = traced(f, x)
    before = op_types(g)
    removed = eliminate_dead_code(g)
    assert removed == 2 and before.count("MatMul") == 1 and "MatMul" not in op_types(g) and "Mul" not in op_types(g)
    for kept in ("GraphPassTestSideEffect", "RandomUniform", "PrintV2", VARIABLE_ASSIGN, VARIABLE_READ, "Sum"):
        assert kept in op_types(g)
    assert_same_results(fresh(graph, [(2, 4)]), g, [x.numpy()], graph.variables)


def test_dead_code_keeps_state_ops_and_their_inputs():
    accumulator = tf.Variable([0.0, 0.0])

    def f(x):
        execute_state("AccumulateGradient", [accumulator], [tf.exp(x)])
        return x * 2.0

    graph, g = traced(f, tf.constant([1.0, 2.0]))
    assert eliminate_dead_code(g) == 0 and op_types(g) == sorted(["Exp", "AccumulateGradient", "Mul"])


def test_the_hvp_graph_sheds_its_unread_matmul():
    rng_ = np.random.default_rng(1)
    x = tf.constant(rng_.normal(size=(8, 6)).astype(np.float32))
    w = tf.Variable(rng_.normal(size=(6, 3)).astype(np.float32))
    v = tf.constant(rng_.normal(size=(6, 3)).astype(np.float32))

    def hvp(x, v):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_sum(tf.tanh(x @ w) ** 2)
            g = inner.gradient(loss, w)
            gv = tf.reduce_sum(g * v)
        return outer.gradient(gv, w)

    graph, g = traced(hvp, x, v)
    n = live_count(g)
    optimize(g)
    assert len(g.nodes) < n
    assert_same_results(fresh(graph, [(8, 6), (6, 3)]), g, [x.numpy(), v.numpy()], graph.variables)
    f = tf.function(hvp)
    np.testing.assert_allclose(f(x, v).numpy(), hvp(x, v).numpy(), rtol=1e-5)


# ------------------------------------------- common subexpressions ---
def test_cse_merges_equal_pure_nodes():
    def f(x):
        return tf.tanh(x) * tf.tanh(x) + tf.tanh(x) + tf.exp(x) - tf.exp(x * 1.0)

    x = tf.constant(rng.normal(size=(5,)).astype(np.float32))
    graph, g = traced(f, x)
    assert op_types(g).count("Tanh") == 3
    merged = eliminate_common_subexpressions(g)
    assert op_types(g).count("Tanh") == 1 and merged == 2 and op_types(g).count("Exp") == 2
    assert_same_results(fresh(graph, [(5,)]), g, [x.numpy()])


def test_cse_never_merges_random_draws_or_side_effects():
    def f(x):
        return tf.random.uniform([3]) + tf.random.uniform([3]) + x

    graph, g = traced(f, tf.constant([1.0, 2.0, 3.0]))
    assert eliminate_common_subexpressions(g) == 0 and op_types(g).count("RandomUniform") == 2


def test_attribute_keys_distinguish_type_and_sign():
    assert attribute_key(0.0) != attribute_key(-0.0)
    assert attribute_key(1.0) != attribute_key(np.float64(1.0)) and attribute_key(1) != attribute_key(True)
    assert attribute_key({"a": [1, 2]}) == attribute_key({"a": [1, 2]}) != attribute_key({"a": (1, 2)})


def test_cse_keeps_nodes_with_different_attributes():
    def f(x):
        return tf.nn.leaky_relu(x, 0.2) + tf.nn.leaky_relu(x, 0.3) + tf.nn.leaky_relu(x, 0.2)

    x = tf.constant(rng.normal(size=(4,)).astype(np.float32))
    graph, g = traced(f, x)
    eliminate_common_subexpressions(g)
    assert op_types(g).count("LeakyRelu") == 2
    assert_same_results(fresh(graph, [(4,)]), g, [x.numpy()])


# ------------------------------------------------ constant folding ---
def test_constant_folding_replaces_constant_subgraphs():
    c = tf.constant([0.5, 1.5, -2.0])

    def f(x):
        return x + tf.exp(c) * 3.0 - tf.reduce_sum(tf.square(c))

    x = tf.constant(rng.normal(size=(3,)).astype(np.float32))
    graph, g = traced(f, x)
    assert op_types(g) == sorted(["AddV2", "Exp", "Mul", "Square", "Sum", "Sub"])
    assert fold_constants(g) == 4
    assert op_types(g) == ["AddV2", "Sub"]
    assert_same_results(fresh(graph, [(3,)]), g, [x.numpy()])


def test_constant_folding_leaves_impure_and_large_results():
    def f(x):
        return x + tf.random.uniform([2]) + tf.reduce_sum(tf.fill([600, 600], 2.0))

    graph, g = traced(f, tf.constant([1.0, 2.0]))
    fold_constants(g)
    assert "RandomUniform" in op_types(g) and "Fill" in op_types(g)    # 1.4 MB: computed per call


def test_loaded_graphs_without_a_trace_are_not_folded():
    graph, _ = traced(lambda x: x + tf.exp(tf.constant(1.0)), tf.constant(1.0))
    g = PassGraph(graph.nodes, graph.constants, [(("node", len(graph.nodes) - 1, 0))])   # no trace values
    assert fold_constants(g) == 0


# ------------------------------------------ algebraic simplification ---
def test_identities_are_bypassed():
    def f(x, m):
        a = x * tf.constant(1.0) + 0.0                # the + 0.0 stays (see below)
        b = tf.constant(1.0) * a / tf.constant(1.0) - tf.constant(0.0)
        c = tf.transpose(tf.reshape(m, [2, 3]), [0, 1])
        d = tf.reduce_sum(c, axis=[]) * tf.ones([2, 3])
        return tf.identity(b), d

    x = tf.constant(rng.normal(size=(4,)).astype(np.float32))
    m = tf.constant(rng.normal(size=(2, 3)).astype(np.float32))
    graph, g = traced(f, x, m)
    simplify_algebra(g)
    eliminate_dead_code(g)
    assert op_types(g) == ["AddV2"]
    assert_same_results(fresh(graph, [(4,), (2, 3)]), g, [x.numpy(), m.numpy()])


def test_adding_positive_zero_is_not_an_identity_for_floats():
    def f(x):
        return x + 0.0, x + tf.constant(-0.0), tf.cast(x, tf.int32) + 0

    graph, g = traced(f, tf.constant([-0.0, 1.0]))
    assert simplify_algebra(g) == 2                   # x + -0.0 and the integer + 0
    assert op_types(g) == sorted(["AddV2", "Cast"])
    plus_zero, minus_zero, _ = run(g, [np.array([-0.0, 1.0], np.float32)])
    assert not np.signbit(plus_zero[0]) and np.signbit(minus_zero[0])


def test_rules_that_would_change_shape_dtype_or_gradient_stay():
    def f(x, n):
        widened = x * tf.ones([2, 3])                      # broadcasting makes it bigger
        stopped = tf.stop_gradient(x)
        wide_one = tf.cast(n, tf.float64) * tf.constant(1.0, tf.float64)   # fine: same dtype -> bypassed
        return widened, stopped, wide_one

    graph, g = traced(f, tf.constant([1.0, 2.0, 3.0]), tf.constant([1, 2]))
    assert simplify_algebra(g) == 1
    assert op_types(g) == sorted(["Cast", "Mul", "StopGradient"])


def test_shape_rules_need_shapes_known_at_every_call():
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        return tf.transpose(x, [0, 1]) * 2.0

    concrete = f.get_concrete_function()
    unknown = PassGraph.from_func_graph(concrete.graph, [None])
    assert simplify_algebra(unknown) == 0
    known = PassGraph.from_func_graph(concrete.graph, [(2, 3)])
    assert simplify_algebra(known) == 1
    np.testing.assert_array_equal(f(tf.ones([5, 3])).numpy(), np.full((5, 3), 2.0, np.float32))


# ---------------------------------------------------- in tf.function ---
def test_functions_replay_the_optimised_graph_and_keep_the_traced_one():
    w = tf.Variable(rng.normal(size=(3, 3)).astype(np.float32))

    def f(x):
        unused = tf.matmul(x, w)
        del unused
        y = tf.tanh(x @ w) * 1.0
        return y + tf.tanh(x @ w) + tf.exp(tf.constant(2.0))

    fn = tf.function(f)
    x = tf.constant(rng.normal(size=(2, 3)).astype(np.float32))
    concrete = fn.get_concrete_function(x)
    assert len(concrete.optimized.nodes) < len(concrete.graph.nodes)
    np.testing.assert_allclose(fn(x).numpy(), f(x).numpy(), rtol=1e-6)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(fn(x))
    with tf.GradientTape() as tape2:
        y2 = tf.reduce_sum(f(x))
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), tape2.gradient(y2, w).numpy(), rtol=1e-6)


def test_powers_one_and_zero_of_floats_are_the_base_and_ones():
    def f(x, n):
        return x ** tf.constant(1.0), x ** tf.constant(0.0), x ** tf.constant([0.0, 1.0, 0.0]), n ** 0

    special = np.array([np.nan, np.inf, -0.0], np.float32)
    graph, g = traced(f, tf.constant(special), tf.constant([2, 3, 4]))
    assert simplify_algebra(g) == 2                  # the mixed exponent and the integer power stay
    eliminate_dead_code(g)
    assert op_types(g) == ["Pow", "Pow"]
    assert_same_results(fresh(graph, [(3,), (3,)]), g, [special, np.array([2, 3, 4], np.int32)])
    base, ones = run(g, [special, np.array([2, 3, 4], np.int32)])[:2]
    np.testing.assert_array_equal(base.view(np.uint32), special.view(np.uint32))   # NaN, inf, -0.0 kept
    assert ones.dtype == np.float32 and ones.tolist() == [1.0, 1.0, 1.0]


def test_a_power_of_zero_needs_a_shape_known_at_every_call():
    f = tf.function(lambda x: x ** tf.constant(0.0), input_signature=[tf.TensorSpec([None], tf.float32)])
    concrete = f.get_concrete_function()
    assert "Pow" in [node[0] for node in concrete.optimized.nodes]
    assert f(tf.constant([np.nan, 2.0])).numpy().tolist() == [1.0, 1.0]

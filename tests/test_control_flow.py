"""tf.cond / case / switch_case / while_loop / TensorArray / map_fn / scan / folds: eager and traced results,
a traced predicate deciding at each call, gradients of first and second order against finite differences,
and a SavedModel with a cond and a while_loop reloaded in a fresh process."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError

from gradcheck import check_gradients, vjp_fn


def _loop(n, x, w):
    """h <- h * w + x while h < 10 (at most n times), in a traced function."""
    def body(i, h):
        return i + 1, tf.cond(h > 0.5, lambda: h * w + x, lambda: h - w)
    return tf.while_loop(lambda i, h: i < n, body, (tf.constant(0), x))[1]


def _loop_reference(n, x, w):
    h = x
    for _ in range(n):
        h = h * w + x if h > 0.5 else h - w
    return h


# ------------------------------------------------------------------ results ---
def test_eager_cond_case_switch_and_while_run_python():
    assert tf.cond(tf.constant(True), lambda: 1, lambda: 2) == 1
    assert float(tf.cond(tf.constant(2.0) > 3.0, lambda: tf.constant(1.0), lambda: tf.constant(2.0))) == 2.0
    assert tf.switch_case(tf.constant(1), [lambda: "a", lambda: "b", lambda: "c"]) == "b"
    assert tf.switch_case(7, [lambda: "a", lambda: "b"], default=lambda: "d") == "d"
    x = tf.constant(3)
    assert tf.case([(x < 0, lambda: "neg"), (x > 2, lambda: "big")], default=lambda: "other") == "big"
    i, s = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
    assert (int(i), int(s)) == (4, 6)
    assert int(tf.while_loop(lambda v: v < 100, lambda v: v * 2, tf.constant(3), maximum_iterations=3)) == 24


def test_traced_predicate_decides_at_each_call_without_retracing():
    @tf.function
    def f(p, x):
        return tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    x = tf.constant([1.0, 4.0])
    np.testing.assert_array_equal(f(tf.constant(True), x).numpy(), [2.0, 8.0])
    np.testing.assert_array_equal(f(tf.constant(False), x).numpy(), [0.0, 3.0])
    np.testing.assert_array_equal(f(tf.constant(True), x).numpy(), [2.0, 8.0])
    assert f.experimental_get_tracing_count() == 1
    assert [op.type for op in f.get_concrete_function(tf.constant(True), x).graph.get_operations()
            if op.type == "If"] == ["If"]


def test_traced_switch_case_and_case_choose_at_each_call():
    @tf.function
    def pick(i, x):
        return tf.switch_case(i, [lambda: x + 1.0, lambda: x * 10.0, lambda: -x])

    @tf.function
    def sign(x):
        return tf.case([(x < 0.0, lambda: tf.constant(-1)), (x > 0.0, lambda: tf.constant(1))],
                       default=lambda: tf.constant(0))
    x = tf.constant(2.0)
    assert [float(pick(tf.constant(k), x)) for k in (0, 1, 2, 5)] == [3.0, 20.0, -2.0, -2.0]
    assert [int(sign(tf.constant(v))) for v in (-3.0, 0.0, 4.0)] == [-1, 0, 1]
    assert pick.experimental_get_tracing_count() == 1 and sign.experimental_get_tracing_count() == 1


def test_traced_while_loop_runs_as_many_iterations_as_each_call_needs():
    @tf.function
    def collatz(n):
        def body(n, steps):
            return tf.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1), steps + 1
        return tf.while_loop(lambda n, steps: n > 1, body, (n, tf.constant(0)))[1]
    assert [int(collatz(tf.constant(v))) for v in (1, 6, 27)] == [0, 8, 111]
    assert collatz.experimental_get_tracing_count() == 1

    @tf.function
    def capped(x):
        return tf.while_loop(lambda v: v < 1000.0, lambda v: v * 2.0, [x], maximum_iterations=4)
    assert float(capped(tf.constant(1.0))[0]) == 16.0
    assert float(capped(tf.constant(300.0))[0]) == 1200.0


def test_while_loop_structures_and_shape_invariants():
    @tf.function
    def f(x):
        state = {"total": tf.zeros([2]), "count": tf.constant(0)}
        return tf.while_loop(lambda s: s["count"] < 3, lambda s: {"total": s["total"] + x, "count": s["count"] + 1},
                             [state])
    out = f(tf.constant([1.0, 2.0]))[0]
    np.testing.assert_array_equal(out["total"].numpy(), [3.0, 6.0])

    @tf.function
    def grow(x):
        return tf.while_loop(lambda v: tf.shape(v)[0] < 8, lambda v: tf.concat([v, v], 0), [x])
    with pytest.raises(ValueError, match="shape_invariants"):
        grow(tf.constant([1.0]))

    @tf.function
    def grow_relaxed(x):
        return tf.while_loop(lambda v: tf.shape(v)[0] < 8, lambda v: tf.concat([v, v], 0), [x],
                             shape_invariants=[tf.TensorShape([None])])
    assert grow_relaxed(tf.constant([1.0]))[0].shape == (8,)
    assert grow_relaxed(tf.constant([1.0, 2.0, 3.0]))[0].shape == (12,)

    @tf.function
    def sized_by_python(x):   # tf.zeros reads the traced size as a Python value: right for one size only
        return tf.while_loop(lambda v: tf.shape(v)[0] < 8, lambda v: tf.concat([v, tf.zeros(tf.shape(v))], 0),
                             [x], shape_invariants=[tf.TensorShape([None])])
    with pytest.raises(ValueError, match="depends on the size of a loop variable"):
        sized_by_python(tf.constant([1.0]))


def test_shape_op_and_tensor_indices_follow_each_call():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
    def f(x, i):
        return tf.shape(x), x[i], x[-1]
    for values, i in (([1.0, 2.0, 3.0], 1), ([5.0, 6.0, 7.0, 8.0, 9.0], 4)):
        shape, item, last = f(tf.constant(values), tf.constant(i))
        assert shape.numpy().tolist() == [len(values)] and float(item) == values[i] and float(last) == values[-1]
    assert isinstance(f.get_concrete_function().graph.get_operations(), list)


def test_shapes_that_depend_on_the_branch_taken_are_read_at_each_call():
    @tf.function
    def f(p, x):
        y = tf.cond(p, lambda: x, lambda: tf.concat([x, x], 0))
        assert y.shape.as_list() == [None]
        return tf.reduce_sum(tf.ones_like(y)), tf.shape(y)[0], y[-1]
    x = tf.constant([1.0, 2.0])
    assert [int(v) for v in f(tf.constant(True), x)[:2]] == [2, 2]
    assert [int(v) for v in f(tf.constant(False), x)[:2]] == [4, 4]
    assert float(f(tf.constant(False), x)[2]) == 2.0
    assert f.experimental_get_tracing_count() == 1


def test_variables_assigned_in_a_loop_are_read_in_place():
    counter = tf.Variable(0)

    @tf.function
    def count(n):
        def body(i):
            counter.assign_add(counter + 1)   # reads the value of this iteration
            return i + 1
        tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
        return counter + 0
    assert int(count(tf.constant(3))) == 7     # 0 -> 1 -> 3 -> 7
    assert int(count(tf.constant(1))) == 15


# ---------------------------------------------------------------- gradients ---
@pytest.mark.parametrize("x0", [0.9, 0.2])
def test_cond_and_while_gradients_match_finite_differences(x0):
    traced = tf.function(lambda x, w: _loop(3, x, w))
    check_gradients(traced, np.float64(x0), np.float64(0.7))
    check_gradients(vjp_fn(traced), np.float64(x0), np.float64(0.7), atol=1e-5, rtol=1e-4, allow_none=True)
    np.testing.assert_allclose(float(traced(tf.constant(x0, tf.float64), tf.constant(0.7, tf.float64))),
                               _loop_reference(3, x0, 0.7))


def test_gradient_of_a_gradient_inside_a_traced_function():
    @tf.function
    def derivatives(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), (0, x))[1]   # x ** 8
            dy = inner.gradient(y, x)
        return y, dy, outer.gradient(dy, x)
    for x in (1.1, 0.8):
        y, dy, d2y = derivatives(tf.constant(x, tf.float64))
        np.testing.assert_allclose([float(y), float(dy), float(d2y)], [x ** 8, 8 * x ** 7, 56 * x ** 6])
    assert derivatives.experimental_get_tracing_count() == 1


def test_gradients_reach_variables_read_inside_branches_and_loops():
    w = tf.Variable(0.7, dtype=tf.float64)

    @tf.function
    def f(n, x):
        return _loop(n, x, w)
    x = tf.Variable(0.9, dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = f(tf.constant(4), x)
    dw, dx = tape.gradient(y, [w, x])
    eps = 1e-6
    np.testing.assert_allclose(float(dw), (_loop_reference(4, 0.9, 0.7 + eps) - _loop_reference(4, 0.9, 0.7 - eps))
                               / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(float(dx), (_loop_reference(4, 0.9 + eps, 0.7) - _loop_reference(4, 0.9 - eps, 0.7))
                               / (2 * eps), rtol=1e-6)


# -------------------------------------------------------------- TensorArray ---
def test_tensor_array_in_traced_loops_with_gradients():
    @tf.function
    def squares(x):
        ta = tf.TensorArray(tf.float64, size=tf.shape(x)[0])
        ta = tf.while_loop(lambda i, ta: i < tf.shape(x)[0], lambda i, ta: (i + 1, ta.write(i, x[i] * x[i])),
                           (0, ta))[1]
        return ta.stack()
    np.testing.assert_array_equal(squares(tf.constant([1.0, 2.0, 3.0], tf.float64)).numpy(), [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(squares(tf.constant([4.0, 5.0], tf.float64)).numpy(), [16.0, 25.0])
    check_gradients(squares, np.array([0.5, -1.5, 2.0]))

    @tf.function
    def growing(n):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        return tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * 10)), (0, ta))[1].stack()
    assert growing(tf.constant(4)).numpy().tolist() == [0, 10, 20, 30]

    fixed = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not resizeable"):
        fixed.write(2, 1.0)
    eager = fixed.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    np.testing.assert_array_equal(eager.stack().numpy(), [[1, 2], [3, 4]])
    assert float(eager.read(1)[0]) == 3.0 and int(eager.size()) == 2


def test_map_fn_scan_and_folds_eager_and_traced():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)

    def run(x):
        return (tf.map_fn(lambda r: tf.reduce_sum(r * r), x),
                tf.map_fn(lambda r: tf.cast(r[0] > 2.0, tf.int32), x, fn_output_signature=tf.int32),
                tf.scan(lambda a, r: a + r, x), tf.scan(lambda a, r: a * r[0], x, initializer=tf.constant(1.0)),
                tf.foldl(lambda a, r: a - r[1], x, initializer=tf.constant(0.0)),
                tf.foldr(lambda a, r: a - r[1], x, initializer=tf.constant(0.0)),
                tf.vectorized_map(lambda r: r * 2.0, x))
    expected = ([5.0, 25.0, 61.0], [0, 1, 1], np.cumsum(x, 0), [1.0, 3.0, 15.0], -12.0, -12.0, x * 2)
    for results in (run(tf.constant(x)), tf.function(run)(tf.constant(x))):
        for got, want in zip(results, expected):
            np.testing.assert_allclose(got.numpy(), want)
    traced = tf.function(lambda x: tf.map_fn(lambda r: tf.reduce_prod(r), x))
    check_gradients(traced, np.array([[1.0, 2.0], [3.0, -1.0]]))


def test_keras_ops_control_flow_inside_traced_functions():
    from tapeflow.keras import ops

    @tf.function
    def f(n, x):
        y = ops.cond(x > 0.0, lambda: x, lambda: -x)
        z = ops.fori_loop(0, n, lambda i, v: v + tf.cast(i, tf.float32), y)
        _, w = ops.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2.0), (0, z))
        return ops.switch(n, [lambda: w, lambda: w + 1.0, lambda: w + 2.0])
    assert float(f(tf.constant(3), tf.constant(-2.0))) == (2.0 + 3.0) * 8.0 + 2.0
    assert float(f(tf.constant(1), tf.constant(1.5))) == 1.5 * 2.0 + 1.0
    assert f.experimental_get_tracing_count() == 1


# --------------------------------------------------------------- SavedModel ---
class _Model(tf.Module):
    def __init__(self):
        self.w = tf.Variable(0.7, dtype=tf.float64)

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float64)])
    def f(self, n, x):
        return _loop(n, x, self.w)


_RELOAD = """
import json, sys
import tapeflow as tf
m = tf.saved_model.load(sys.argv[1])
x = tf.Variable(0.9, dtype=tf.float64)
with tf.GradientTape() as tape:
    y = m.f(tf.constant(4), x)
print(json.dumps([float(y), float(tape.gradient(y, x)), float(m.f(tf.constant(2), tf.constant(0.2, tf.float64)))]))
"""


def test_saved_cond_and_while_loop_reload_in_a_fresh_process(tmp_path):
    model = _Model()
    path = str(tmp_path / "model")
    tf.saved_model.save(model, path)
    out = subprocess.run([sys.executable, "-c", _RELOAD, path], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    y, dy, other = json.loads(out.stdout)
    x = tf.Variable(0.9, dtype=tf.float64)
    with tf.GradientTape() as tape:
        expected = model.f(tf.constant(4), x)
    assert y == float(expected) and dy == float(tape.gradient(expected, x))
    assert other == float(model.f(tf.constant(2), tf.constant(0.2, tf.float64)))
    np.testing.assert_allclose(y, _loop_reference(4, 0.9, 0.7))


def test_a_sub_graph_that_does_not_fit_its_node_is_refused(tmp_path):
    path = str(tmp_path / "model")
    tf.saved_model.save(_Model(), path)
    document_path = os.path.join(path, "saved_model.json")
    with open(document_path) as f:
        document = json.load(f)
    graph = document["objects"][0]["functions"]["f"]["concretes"][0]["graph"]
    node = next(n for n in graph["nodes"] if n["op"] == "While")
    node["attrs"]["body"]["subgraph"]["inputs"].pop()
    node["attrs"]["body"]["subgraph"]["traced_shapes"].pop()
    with open(document_path, "w") as f:
        json.dump(document, f)
    with pytest.raises(FileFormatError, match=r"While\).attrs.body"):
        tf.saved_model.load(path)


def test_saved_function_that_differentiates_a_loop_twice_reloads(tmp_path):
    class Derivatives(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float64)])
        def d(self, x):
            with tf.GradientTape() as outer:
                outer.watch(x)
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), (0, x))[1]
                dy = inner.gradient(y, x)
            stacked = tf.TensorArray(tf.float64, size=2).write(0, y).write(1, dy).stack()
            return stacked, outer.gradient(dy, x)
    path = str(tmp_path / "derivatives")
    tf.saved_model.save(Derivatives(), path)
    loaded = tf.saved_model.load(path)
    for x in (1.1, -0.9):
        stacked, d2y = loaded.d(tf.constant(x, tf.float64))
        np.testing.assert_allclose(stacked.numpy(), [x ** 8, 8 * x ** 7])
        np.testing.assert_allclose(float(d2y), 56 * x ** 6)


def test_a_loop_sees_the_optimizer_updates_it_makes():
    # An optimizer's update is a state op, not an assign: the loop must still read the variable in place
    # at each iteration (it was read once before the loop, so every step saw the starting value).
    def descend(w, optimizer, steps):
        for _ in tf.range(steps):
            with tf.GradientTape() as tape:
                loss = (w - 3.0) ** 2
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return w + 0.0
    w_traced, w_eager = tf.Variable(0.0), tf.Variable(0.0)
    traced = float(tf.function(descend)(w_traced, tf.keras.optimizers.SGD(0.1), tf.constant(5)))
    expected = 3.0 - 3.0 * 0.8 ** 5      # each step moves w 20% of the way to 3
    assert traced == pytest.approx(expected, rel=1e-6)
    assert float(descend(w_eager, tf.keras.optimizers.SGD(0.1), tf.constant(5))) == pytest.approx(traced, rel=1e-6)


@pytest.mark.parametrize("side_effect, message", [
    ("random", r"draws random numbers \(RandomUniform\)"),
    ("assign", "assigns a variable"),
])
def test_differentiating_a_cond_whose_branch_would_not_repeat_is_refused(side_effect, message):
    # The cond's gradient runs the branch again: a second draw would give a wrong gradient, a second
    # assignment a wrong state. Both are refused instead of computed silently.
    x = tf.Variable(2.0)
    counter = tf.Variable(0.0)

    def branch():
        if side_effect == "random":
            return x * tf.random.uniform([])
        counter.assign_add(1.0)
        return x * x

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = tf.cond(x > 0, branch, lambda: x)
        return tape.gradient(y, x)

    with pytest.raises(NotImplementedError, match=message):
        step()
    assert counter.numpy() == 0.0      # refused while tracing: nothing ran

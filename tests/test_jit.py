"""tf.function(jit_compile=True): compiled results equal the replayed function's (to float32
rounding: bit for bit for arithmetic), for every lowered op, for graphs mixing lowered ops and
calls, for gradient graphs and stateful graphs; kernels are cached on disk by source hash."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.jit.lowering import ELEMENTWISE

rng = np.random.default_rng(3)


def both(fn, *args, **kwargs):
    """(replayed, compiled) results of ``fn`` traced as tf.function, as numpy arrays."""
    plain = tf.function(fn, **kwargs)(*args)
    compiled = tf.function(fn, jit_compile=True, **kwargs)(*args)
    flat = lambda out: [t.numpy() for t in tf.nest.flatten(out)]   # noqa: E731
    return flat(plain), flat(compiled)


def compiled_segments(fn, *args):
    f = tf.function(fn, jit_compile=True)
    f(*args)
    return f.get_concrete_function(*args).compiled()


def floats(*shape, dtype=np.float32, scale=1.0):
    return tf.constant((rng.normal(size=shape) * scale).astype(dtype))


# Each lowered elementwise op through its public function, on inputs in its domain.
UNARY = {
    "Neg": tf.negative, "Abs": tf.abs, "Square": tf.square, "Identity": tf.identity, "Exp": tf.exp,
    "Log": lambda x: tf.math.log(tf.abs(x) + 0.1), "Sqrt": lambda x: tf.sqrt(tf.abs(x)), "Sin": tf.sin,
    "Cos": tf.cos, "Tanh": tf.tanh, "Sigmoid": tf.sigmoid, "Relu": tf.nn.relu,
    "Cast": lambda x: tf.cast(tf.cast(x, tf.float64) * 1.5, tf.float32),
    "BroadcastTo": lambda x: tf.broadcast_to(x, [2, 4, 5]),
    "Elu": tf.nn.elu, "LeakyRelu": lambda x: tf.nn.leaky_relu(x, 0.3),
}
BINARY = {"AddV2": tf.add, "Sub": tf.subtract, "Mul": tf.multiply, "RealDiv": tf.divide}


def test_every_lowered_elementwise_op_is_tested():
    covered = set(UNARY) | set(BINARY) | {"TanhGrad", "SigmoidGrad", "ReluGrad", "EluGrad", "LeakyReluGrad"}
    assert covered == set(ELEMENTWISE)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_ops_fused_match_the_replay(dtype):
    x = floats(4, 5, dtype=dtype)
    y = floats(4, 5, dtype=dtype)
    row = floats(5, dtype=dtype)
    column = floats(4, 1, dtype=dtype)

    def f(x, y, row, column):
        outs = [fn(x) for fn in UNARY.values()]
        outs += [fn(x, y) for fn in BINARY.values()]
        outs += [fn(x, row) for fn in BINARY.values()]           # broadcast along rows
        outs += [fn(column, x) for fn in BINARY.values()]        # and columns
        return outs

    replayed, compiled = both(f, x, y, row, column)
    names = list(UNARY) + list(BINARY) * 3
    for name, a, b in zip(names, replayed, compiled):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        if name in ("Exp", "Log", "Sqrt", "Sin", "Cos", "Tanh", "Sigmoid", "Elu"):
            np.testing.assert_array_max_ulp(a, b, maxulp=2)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    program = compiled_segments(f, x, y, row, column)
    assert len(program.segments) == 1                           # one kernel for the whole graph


def test_sums_fold_into_the_loops_that_compute_their_inputs():
    x = floats(3, 4, 5)

    def f(x):
        y = tf.tanh(x) * 2.0
        outs = [tf.reduce_sum(y, axis=axes, keepdims=keep) for axes in (0, 1, -1, [0, 2], [0, 1, 2])
                for keep in (False, True)]
        row_sums = tf.reduce_sum(y, axis=-1, keepdims=True)
        return outs + [y - row_sums / 5.0]              # a loop reading a sum starts after it

    replayed, compiled = both(f, x)
    for a, b in zip(replayed, compiled):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    program = compiled_segments(f, x)
    kinds = [kind for seg in program.segments for _, kind in seg.nodes]
    assert kinds.count("reduce") == 10 and len(program.segments) == 1     # row_sums is merged by CSE
    assert program.source.count("for j0 in range(") == 3    # x with its ten sums; row_sums / 5; y - that


def test_activation_gradients_compile_and_match():
    x = floats(3, 7)

    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * tf.sigmoid(x) + tf.nn.relu(x) * x + tf.nn.elu(x) * x
                              + tf.nn.leaky_relu(x, 0.2) * x)
        return tape.gradient(y, x)

    (a,), (b,) = both(f, x)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    program = compiled_segments(f, x)
    kinds = [kind for seg in program.segments for _, kind in seg.nodes]
    assert kinds.count("elementwise") >= 14
    assert {"EluGrad", "LeakyReluGrad", "TanhGrad", "SigmoidGrad", "ReluGrad"} <= {
        program.graph.nodes[k][0] for seg in program.segments for k, _ in seg.nodes}


def test_special_values_follow_the_ops():
    x = tf.constant([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0], tf.float32)
    z = tf.constant([0.0, 0.0, 1.0, 0.0, -0.0, 0.0, 0.0], tf.float32)

    def f(x, z):
        return (x / z, tf.math.log(x), tf.nn.relu(x), tf.sqrt(x), x * z, tf.sigmoid(x), tf.exp(x) - x)

    with np.errstate(invalid="ignore"):            # inf * 0 and inf - inf warn in numpy's Mul and Sub
        replayed, compiled = both(f, x, z)
    for a, b in zip(replayed, compiled):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
        np.testing.assert_array_max_ulp(np.nan_to_num(a), np.nan_to_num(b), maxulp=2)   # exp: the last bit


def test_matmuls_with_transposes_and_the_mlp_step():
    x = floats(16, 8)
    w1 = tf.Variable(floats(8, 12).numpy())
    b1 = tf.Variable(floats(12).numpy())
    w2 = tf.Variable(floats(12, 3).numpy())
    labels = tf.constant(rng.integers(0, 3, 16))

    def f(x):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(x @ w1 + b1)
            logits = tf.matmul(h, w2) + tf.matmul(x, tf.ones([8, 3]))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        return [loss] + tape.gradient(loss, [w1, b1, w2]) + [tf.matmul(x, x, transpose_a=True),
                                                             tf.matmul(x, x, transpose_b=True)]

    replayed, compiled = both(f, x)
    for a, b in zip(replayed, compiled):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
    kinds = [kind for seg in compiled_segments(f, x).segments for _, kind in seg.nodes]
    assert kinds.count("elementwise") >= 3      # bias adds, relu and its gradient fused between the matmuls


# Ops without a lowering: the graph splits into kernels and calls, results unchanged.
LIBRARY = [
    lambda x: tf.reduce_sum(tf.exp(x), axis=1) * 2.0,
    lambda x: tf.nn.softmax(x * 3.0) + 1.0,
    lambda x: tf.concat([tf.tanh(x), x[:, :2] * 2.0], axis=1),
    lambda x: tf.gather(x * x, [2, 0], axis=1) - 1.0,
    lambda x: tf.reduce_max(x - tf.reduce_mean(x), axis=0),
    lambda x: tf.transpose(tf.sin(x)) @ x,
    lambda x: tf.reshape(tf.exp(x), [-1]) * tf.range(12, dtype=tf.float32),
    lambda x: tf.where(x > 0, x * 2.0, tf.square(x)),
    lambda x: tf.math.cumsum(tf.abs(x), axis=1) / 3.0,
    lambda x: tf.nn.conv1d(tf.reshape(x, [1, 4, 3]) * 2.0, tf.ones([2, 3, 2]), 1, "VALID") + 1.0,
    lambda x: tf.linalg.inv(tf.matmul(x, x, transpose_a=True) + 3.0 * tf.eye(3)) * 0.5,
    lambda x: tf.cast(tf.argmax(x, axis=1), tf.float32) + tf.reduce_min(x),
    lambda x: tf.stack([tf.maximum(x, 0.1), tf.minimum(x, -0.1)]) * x,
    lambda x: tf.math.reduce_logsumexp(x, axis=0) + tf.nn.log_softmax(x)[0],
]


@pytest.mark.parametrize("index", range(len(LIBRARY)))
def test_graphs_mixing_kernels_and_calls(index):
    x = floats(4, 3)
    (a,), (b,) = both(LIBRARY[index], x)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_hessian_and_hvp_graphs_compile():
    kernel = tf.Variable(floats(5, 8).numpy())
    x = floats(6, 5)
    v = floats(5, 8)

    def hvp(x, v):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_sum(tf.tanh(x @ kernel) ** 2)
            g = inner.gradient(loss, kernel)
            gv = tf.reduce_sum(g * v)
        return outer.gradient(gv, kernel)

    def hessian(x):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_sum(tf.sigmoid(x @ kernel))
            g = inner.gradient(loss, kernel)
        return outer.jacobian(g, kernel)

    (a,), (b,) = both(hvp, x, v)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    (a,), (b,) = both(hessian, x)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_tape_outside_differentiates_a_compiled_function():
    x = floats(3, 4)
    f = tf.function(lambda x: tf.reduce_sum(tf.tanh(x) * x), jit_compile=True)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x).numpy()
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(g, t + x.numpy() * (1 - t * t), rtol=1e-5)


def test_state_and_side_effects_run_in_order(capsys):
    v = tf.Variable(np.ones(3, np.float32))

    def step(x):
        v.assign_add(x * 2.0)
        tf.print(tf.reduce_sum(v), output_stream=sys.stdout)
        return v * 3.0 + 1.0

    plain = tf.function(step)
    compiled = tf.function(step, jit_compile=True)
    x = tf.constant([1.0, 2.0, 3.0])
    out_plain = [plain(x).numpy() for _ in range(2)]
    after_plain = v.numpy().copy()
    v.assign(np.ones(3, np.float32))
    out_compiled = [compiled(x).numpy() for _ in range(2)]
    np.testing.assert_array_equal(np.array(out_plain), np.array(out_compiled))
    np.testing.assert_array_equal(after_plain, v.numpy())
    printed = capsys.readouterr().out.split()
    assert len(printed) == 4 and printed[:2] == printed[2:] == ["15", "27"]


def test_scheduling_moves_only_pure_nodes_and_keeps_dependencies():
    from tapeflow.graph_passes.pass_graph import PassGraph
    from tapeflow.jit.compiler import _lowerings, schedule
    v = tf.Variable(floats(4, 3).numpy())

    def step(x):
        e = tf.exp(x) * 3.0                    # traced first, needed last: moves next to its reader
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.tanh(x @ v) * 2.0)
        g = tape.gradient(y, v)
        v.assign_sub(g * 0.1)
        tf.print(y)
        return tf.exp(tf.reduce_sum(v)) + y + tf.reduce_sum(e)

    x = floats(5, 4)
    graph = tf.function(step).get_concrete_function(x).graph
    g = PassGraph.from_func_graph(graph, [(5, 4)])
    kinds, _ = _lowerings(g, g.static_shapes())
    order = schedule(g, kinds)
    assert sorted(order) == list(range(len(g.nodes))) and order != sorted(order)
    position = {k: i for i, k in enumerate(order)}
    for k, (_, refs, _, _) in enumerate(g.nodes):
        assert all(position[r[1]] < position[k] for r in refs if r[0] == "node")
    impure = [k for k in range(len(g.nodes)) if not g.is_pure(k)]
    assert sorted(impure, key=position.get) == impure


def test_unknown_dimensions_are_specialised_per_shape():
    f = tf.function(lambda x: tf.tanh(x) * 2.0 + 1.0, jit_compile=True,
                    input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    for n in (2, 5):
        x = floats(n, 3)
        np.testing.assert_allclose(f(x).numpy(), np.tanh(x.numpy()) * 2 + 1, rtol=1e-6, atol=1e-6)
    assert len(f.traced_concrete_functions()) == 3    # the signature's trace, then one per shape


def test_integer_graphs_run_as_calls():
    x = tf.constant([[1, 2], [3, 4]])
    (a,), (b,) = both(lambda x: x * 3 + x // 2, x)
    np.testing.assert_array_equal(a, b)
    assert compiled_segments(lambda x: x * 3 + x // 2, x).segments == []


def test_kernels_are_cached_on_disk_by_source(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, tapeflow as tf
        f = tf.function(lambda x: tf.tanh(x) * 1.25 - x, jit_compile=True)
        x = tf.constant(np.arange(6, dtype=np.float32))
        print(f(x).numpy().tolist())
        program = f.get_concrete_function(x).compiled()
        kernel = getattr(program.module, program.segments[0].name)
        print(sum(kernel.stats.cache_hits.values()), sum(kernel.stats.cache_misses.values()))
    """)
    env = dict(os.environ, TAPEFLOW_JIT_CACHE=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    (cold_values, cold_stats), (warm_values, warm_stats) = [run.stdout.splitlines() for run in runs]
    assert cold_values == warm_values
    assert cold_stats.split() == ["0", "1"] and warm_stats.split() == ["1", "0"]
    modules = [p for p in os.listdir(tmp_path) if p.startswith("tapeflow_jit_") and p.endswith(".py")]
    assert len(modules) == 1


def test_import_compiles_nothing():
    done = subprocess.run([sys.executable, "-c", "import sys, tapeflow; print('tapeflow.jit' in sys.modules)"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"


def test_model_compile_jit_compile_trains_as_the_eager_fit():
    rng_ = np.random.default_rng(0)
    x = rng_.normal(size=(120, 6)).astype(np.float32)
    y = rng_.integers(0, 3, 120)

    def fit(jit_compile):
        tf.keras.utils.set_random_seed(1)
        model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(8, activation="relu"),
                                     tf.keras.layers.Dense(3, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                      jit_compile=jit_compile)
        history = model.fit(x, y, batch_size=50, epochs=2, verbose=0, shuffle=False)
        return model, history.history

    traced, traced_history = fit("auto")
    compiled, compiled_history = fit(True)
    assert traced_history == compiled_history
    for a, b in zip(traced.weights, compiled.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    step = compiled._step_functions["train"]
    assert step.experimental_get_tracing_count() == 1      # one trace for batches of 50 and the last 20, as Keras
    assert len(step.traced_concrete_functions()) == 2      # compiled code for each of the two batch shapes
    assert all(c.jit_compile and c.compiled().segments for c in step.traced_concrete_functions())
    assert compiled.get_compile_config()["jit_compile"] is True
    assert traced.get_compile_config()["jit_compile"] is False
    assert not any(c.jit_compile for c in traced._step_functions["train"].traced_concrete_functions())


def test_an_unwritable_cache_directory_falls_back_to_a_private_one(tmp_path, monkeypatch):
    from tapeflow.jit import module_cache
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("TAPEFLOW_JIT_CACHE", str(blocked / "jit"))
    module = module_cache.load_module('"""test"""\nVALUE = 41 + 1\n')
    assert module.VALUE == 42 and not module.__file__.startswith(str(blocked))


def test_a_compiled_training_step_drops_its_reads_and_updates_variables_in_place():
    x = floats(8, 3)
    init = floats(3, 2).numpy()
    w_compiled, w_replayed = tf.Variable(init), tf.Variable(init)

    def make_step(w):
        opt = tf.keras.optimizers.Adam(0.1)

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(tf.nn.relu(x @ w) + 1.0))
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            return loss
        return step

    compiled = tf.function(make_step(w_compiled), jit_compile=True)
    replayed = tf.function(make_step(w_replayed))
    compiled(x), replayed(x)
    storage = id(w_compiled._storage)
    for _ in range(3):
        np.testing.assert_allclose(float(compiled(x)), float(replayed(x)), rtol=1e-6)
    np.testing.assert_allclose(w_compiled.numpy(), w_replayed.numpy(), rtol=1e-6)
    # the compiled program let go of its reads of w before Adam ran: no copy-on-write was needed
    assert id(w_compiled._storage) == storage


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (False, True), (True, False), (True, True)])
def test_outer_products_fuse_into_loops(transpose_a, transpose_b):
    a = floats(*((1, 5) if transpose_a else (5, 1)))
    b = floats(*((4, 1) if transpose_b else (1, 4)))

    def f(a, b):
        return tf.nn.relu(tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b) + 0.5) * 2.0

    replayed, compiled = both(f, a, b)
    np.testing.assert_array_equal(compiled[0], replayed[0])      # one product per output, rounded once either way
    np.testing.assert_array_equal(compiled[0], np.maximum(a.numpy().reshape(5, 1) * b.numpy().reshape(1, 4) + 0.5,
                                                          0) * 2.0)
    lowered = {compiled_segments(f, a, b).graph.nodes[k][0] for seg in compiled_segments(f, a, b).segments
               for k, _ in seg.nodes}
    assert "MatMul" in lowered


def _elu_net_batch_jacobian(w1, w2):
    def jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.elu(tf.matmul(tf.nn.elu(x @ w1 + 0.1), w2, transpose_b=True))
        return tape.batch_jacobian(y, x)
    return jacobian


def test_batch_jacobian_seeds_take_the_short_product_and_match_the_replay(monkeypatch):
    from tapeflow.jit import one_hot
    x, w1, w2 = floats(16, 10), floats(10, 40), floats(24, 40)
    taken = []
    kernel = one_hot.diagonal_times_rows
    monkeypatch.setattr(one_hot, "diagonal_times_rows", lambda *a: taken.append(a[0].shape) or kernel(*a))
    replayed, compiled = both(_elu_net_batch_jacobian(w1, w2), x)
    assert taken == [(24, 16, 24)]                   # one product, (outputs, batch, outputs) one-hot rows
    np.testing.assert_allclose(compiled[0], replayed[0], rtol=1e-5, atol=1e-6)    # float32 sums, fused expm1
    # against the per-example jacobian written out: J[b] = diag(elu'(z)) w2 diag(elu'(a)) w1^T
    a = x.numpy() @ w1.numpy() + np.float32(0.1)
    h = np.where(a > 0, a, np.expm1(a))
    z = h @ w2.numpy().T
    d1, d2 = np.where(a > 0, 1, h + 1), np.where(z > 0, 1, np.expm1(z) + 1)
    expected = np.einsum("bo,oj,bj,ij->boi", d2, w2.numpy(), d1, w1.numpy())
    np.testing.assert_allclose(compiled[0], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # numpy's, on 0 * inf
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_non_finite_weight_gives_the_matmuls_nans(bad):
    x, w1 = floats(4, 3), floats(3, 5)
    w2 = floats(2, 5).numpy()
    w2[1, 2] = bad                    # 0 * inf in the one-hot rows' product: the MatMul's NaNs must stay
    replayed, compiled = both(_elu_net_batch_jacobian(w1, tf.constant(w2)), x)
    assert np.isnan(replayed[0]).any()
    np.testing.assert_array_equal(np.isnan(compiled[0]), np.isnan(replayed[0]))
    np.testing.assert_allclose(compiled[0], replayed[0], rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_the_short_product_is_the_matmul_of_one_hot_rows_with_any_weights():
    from tapeflow.jit.one_hot import diagonal_times_rows
    a = np.zeros((3, 2, 3), np.float32)
    a[np.arange(3), :, np.arange(3)] = [[2.0, 0.0], [np.inf, -1.5], [np.nan, 3.0]]
    w = rng.normal(size=(3, 5)).astype(np.float32)
    w[0, 1], w[2, 3], w[1, 4] = np.inf, np.nan, -np.inf
    out = np.empty((3, 2, 5), np.float32)
    diagonal_times_rows(a, w, out)
    want = a @ w
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    np.testing.assert_array_equal(out[~np.isnan(want)], want[~np.isnan(want)])


def test_the_one_hot_proof_needs_a_gradient_that_keeps_zero_cotangents_zero():
    from tapeflow.jit.one_hot import proven_one_hot_product
    w1, w2 = floats(3, 6), floats(4, 6)

    def net(activation):
        def jacobian(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = activation(tf.matmul(tf.nn.elu(x @ w1), w2, transpose_b=True))
            return tape.batch_jacobian(y, x)
        return jacobian

    x = floats(5, 3)
    for activation, proven in [(tf.nn.elu, True), (tf.nn.relu, True), (lambda z: tf.nn.leaky_relu(z, 0.2), True),
                               (tf.tanh, False), (tf.sigmoid, False)]:   # tanh'(NaN) * 0 is NaN: not proven
        fn = net(activation)
        program = compiled_segments(fn, x)
        shapes = program.graph.static_shapes()
        found = [k for k in range(len(program.graph.nodes)) if proven_one_hot_product(program.graph, k, shapes)]
        assert bool(found) == proven, activation
        replayed, compiled = both(fn, x)
        np.testing.assert_allclose(compiled[0], replayed[0], rtol=1e-5, atol=1e-6)


def bits(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def test_the_host_program_keeps_values_as_locals_and_calls_stacked_products_once():
    w = floats(6, 4)

    def f(x):
        a = tf.nn.relu(x + 0.5)                          # a kernel result, 3-D
        b = tf.matmul(a, w, transpose_b=True)            # stack of matrices times one matrix: one product
        c = tf.reshape(b, [3, 12]) * 2.0
        return c, tf.reshape(a, [-1]), {"sum": tf.reduce_sum(b)}

    x = floats(2, 3, 4)
    replayed, compiled = both(f, x)
    for r, c in zip(replayed[:2], compiled[:2]):
        np.testing.assert_array_equal(bits(c), bits(r))
    np.testing.assert_allclose(compiled[2], replayed[2], rtol=1e-6)      # a loop's sum, in index order
    source = compiled_segments(f, x).source
    assert "matmul(" in source and ".reshape((6, 4))" in source and "values[" not in source


def test_a_variable_read_again_after_an_assign_sees_the_new_value():
    v = tf.Variable([1.0, 2.0])

    def f(x):
        before = v * x
        v.assign_add(x)
        after = v * x
        again = v + 0.0
        return before, after, again

    x = tf.constant([2.0, 3.0])
    compiled = tf.function(f, jit_compile=True)
    before, after, again = [t.numpy().tolist() for t in compiled(x)]
    assert before == [2.0, 6.0] and after == [6.0, 15.0] and again == [3.0, 5.0]
    assert v.numpy().tolist() == [3.0, 5.0]


def _bias_relu_net(w1, b1, w2, b2):
    from tapeflow.ops.nn_ops import bias_relu

    def loss_and_grads(x):
        with tf.GradientTape() as tape:
            tape.watch([w1, b1, w2, b2])
            h = bias_relu(x @ w1, b1)
            y = bias_relu(h @ w2, b2)
            loss = tf.reduce_sum(y * y)
        return [loss] + tape.gradient(loss, [w1, b1, w2, b2])
    return loss_and_grads


def test_bias_relu_and_its_gradient_run_in_place_and_match_the_replay():
    w1, b1, w2, b2 = floats(5, 7), floats(7), floats(7, 3), floats(3)
    x = floats(9, 5)
    fn = _bias_relu_net(w1, b1, w2, b2)
    replayed, compiled = both(fn, x)
    np.testing.assert_allclose(compiled[0], replayed[0], rtol=1e-6)       # the loss: a loop's sum
    for r, c in zip(replayed[1:], compiled[1:]):
        np.testing.assert_array_equal(bits(c), bits(r))
    source = compiled_segments(fn, x).source
    assert source.count("bias_relu_in_place(") == 2 and source.count("bias_relu_grad_in_place(") == 2
    # against the gradient written out
    xs, a, b, c, d = (t.numpy() for t in (x, w1, b1, w2, b2))
    h = np.maximum(xs @ a + b, 0)
    y = np.maximum(h @ c + d, 0)
    dz2 = 2 * y * (y > 0)
    dz1 = (dz2 @ c.T) * (h > 0)
    for got, want in zip(compiled[1:], [xs.T @ dz1, dz1.sum(0), h.T @ dz2, dz2.sum(0)]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_bias_relu_gradients_keep_nans_of_infinite_cotangents():
    from tapeflow.jit import in_place
    g = np.array([[np.inf, 1.0], [-np.inf, np.nan]], np.float32)
    y = np.array([[0.0, 2.0], [-1.0, 3.0]], np.float32)
    dx, dbias = in_place.bias_relu_grad(g.copy(), y)
    from tapeflow.framework.recording import _FORWARDS
    want_dx, want_dbias = _FORWARDS["BiasReluGrad"][0](g, y)
    np.testing.assert_array_equal(bits(dx), bits(want_dx))
    np.testing.assert_array_equal(bits(dbias), bits(want_dbias))


def test_an_operand_read_elsewhere_is_not_overwritten():
    from tapeflow.ops.nn_ops import bias_relu
    w, b = floats(4, 6), floats(6)

    def f(x):
        z = x @ w
        return z, bias_relu(z, b)          # z is an output: its buffer must stay as it is

    x = floats(3, 4)
    replayed, compiled = both(f, x)
    for r, c in zip(replayed, compiled):
        np.testing.assert_array_equal(bits(c), bits(r))
    assert "bias_relu_in_place(" not in compiled_segments(f, x).source.split("def run")[1]


@pytest.mark.parametrize("dtype, options", [(np.float32, {}), (np.float64, {}),
                                            (np.float32, {"weight_decay": 0.05}), (np.float32, {"amsgrad": True})])
def test_adam_steps_in_the_program_train_as_the_replay(dtype, options):
    init = [(rng.normal(size=s)).astype(dtype) for s in [(4, 3), (3,)]]
    x = tf.constant(rng.normal(size=(6, 4)).astype(dtype))

    def make():
        variables = [tf.Variable(v) for v in init]
        optimizer = (tf.keras.optimizers.AdamW if "weight_decay" in options else tf.keras.optimizers.Adam)(
            0.05, **options)

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.tanh(x @ variables[0] + variables[1]) ** 2)
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss
        return variables, step

    (v_plain, plain), (v_jit, step) = make(), make()
    plain, jitted = tf.function(plain), tf.function(step, jit_compile=True)
    for _ in range(3):      # the loss and bias gradient are sums in loops: equal to rounding
        np.testing.assert_allclose(jitted(x).numpy(), plain(x).numpy(), rtol=1e-6)
    for a, b in zip(v_jit, v_plain):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    from tapeflow.jit.adam_step import AdamStep
    program = jitted.get_concrete_function(x).compiled()
    bound = [cell.cell_contents for cell in program._run.__closure__]       # what the program calls
    assert any(isinstance(f, AdamStep) for f in bound) != ("amsgrad" in options)


@pytest.mark.parametrize("dtype, decay", [(np.float32, False), (np.float64, False), (np.float32, True)])
def test_the_program_adam_step_is_the_op_bit_for_bit(dtype, decay):
    from tapeflow.framework.recording import _FORWARDS
    from tapeflow.jit.adam_step import AdamStep
    own = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "decay": decay, "weight_decay": 0.01}
    start = [rng.normal(size=(5, 3)).astype(dtype), np.zeros((5, 3), dtype), np.zeros((5, 3), dtype)]
    by_op, by_step = ([tf.Variable(a) for a in start] for _ in range(2))
    forward = _FORWARDS["ApplyAdam"][0]
    step = AdamStep(own, np.dtype(dtype), forward)
    for iteration in range(4):
        g = rng.normal(size=(5, 3)).astype(dtype)
        lr, it = np.asarray(0.01, dtype), np.asarray(iteration, np.int64)
        forward(by_op, g, lr, it, **own)
        step(by_step, g, lr, it)
        for a, b in zip(by_op, by_step):
            np.testing.assert_array_equal(bits(b.numpy()), bits(a.numpy()))
    with pytest.raises(Exception, match="shape"):      # a misfit runs the op, which raises its own error
        step(by_step, np.ones((2, 2), dtype), lr, it)


def test_one_hot_and_softmax_calls_match_the_ops():
    def f(labels, logits):
        return (tf.one_hot(labels, 5), tf.one_hot(labels, 4, on_value=2.5, off_value=-1.0),
                tf.nn.softmax(logits), tf.nn.softmax(logits, axis=1))

    labels = tf.constant([[0, 4, 7], [-1, 2, 3]])              # out of range and negative: rows of off
    logits = floats(2, 3, 5, scale=30.0)
    replayed, compiled = both(f, labels, logits)
    for r, c in zip(replayed, compiled):
        np.testing.assert_array_equal(bits(c), bits(r))
    assert compiled[0][0, 2].tolist() == [0.0] * 5 and compiled[1][1, 0].tolist() == [-1.0] * 4


def test_uniform_constants_are_loop_literals_with_their_sign():
    def f(x):
        return (x * tf.fill([3, 4], 0.5) - tf.fill([3, 4], -0.0)) * tf.constant(-0.0), x + tf.fill([4], 0.1)

    x = tf.constant(np.array([[0.0, -0.0, 1.0, np.inf]] * 3, np.float32))
    replayed, compiled = both(f, x)
    for r, c in zip(replayed, compiled):
        np.testing.assert_array_equal(bits(c), bits(r))
    program = compiled_segments(f, x)
    assert "np.float32(-0.0)" in program.source and "np.float32(0.1" in program.source
    assert all(r[0] != "const" for seg in program.segments for r in seg.inputs)


def test_a_kernel_passing_an_input_through_a_reshape_does_not_hand_it_to_an_in_place_op():
    from tapeflow.ops.nn_ops import bias_relu
    b = floats(6)

    def f(x, y):
        s = tf.nn.relu(y) * 2.0                          # makes a kernel; x's reshape joins it
        return s, bias_relu(tf.reshape(x, [2, 6]), b)

    x, y = floats(3, 4), floats(5)
    kept = x.numpy().copy()
    replayed, compiled = both(f, x, y)
    for r, c in zip(replayed, compiled):
        np.testing.assert_array_equal(bits(c), bits(r))
    np.testing.assert_array_equal(x.numpy(), kept)       # the caller's tensor is untouched

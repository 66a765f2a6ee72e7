"""The fused RNNSequence op: forward and gradients against the same recurrence written step by step with
ordinary ops, first and second order against finite differences, and bad inputs."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import rnn_ops

from gradcheck import check_gradients, check_jacobian, vjp_fn

CELLS = ["lstm", "gru", "gru_v1", "simple"]


def _inputs(cell, batch=2, steps=4, units=3, dtype="float64", seed=0, masked=True, bias=False):
    """z, R, rb, h0, c0 and a mask; rb is the GRU's recurrent bias, and for the other cells the input bias
    when ``bias`` (else empty)."""
    rng = np.random.default_rng(seed)
    g = rnn_ops.CELLS[cell]
    z = rng.normal(size=(batch, steps, g * units))
    R = rng.normal(scale=0.6, size=(units, g * units))
    rb = rng.normal(size=(g * units,)) if cell == "gru" or bias else np.zeros((0,))
    h0 = rng.normal(size=(batch, units))
    c0 = rng.normal(size=(batch, units)) if cell == "lstm" else np.zeros((batch, 0))
    mask = rng.random((batch, steps)) > 0.3 if masked else np.ones((batch, steps), bool)
    if masked:
        mask[0, 0] = False  # a leading masked step: the initial state carries through
        mask[-1, -1] = False
    return [a.astype(dtype) for a in (z, R, rb, h0, c0)], mask


def _fused(cell, mask, go_backwards):
    def f(z, R, rb, h0, c0):
        H, C, _ = rnn_ops.execute("RNNSequence", (z, R, rb, h0, c0, tf.constant(mask)),
                                  {"cell": cell, "go_backwards": go_backwards})
        return [H, C]
    return f


def _steps(cell, mask, go_backwards):
    def f(z, R, rb, h0, c0):
        return list(rnn_ops.sequence_by_steps(z, R, rb, h0, c0, tf.constant(mask), cell, go_backwards))
    return f


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [False, True])
def test_fused_equals_step_by_step_forward_and_gradient(cell, go_backwards, dtype, bias):
    arrays, mask = _inputs(cell, dtype=dtype, bias=bias)
    tensors = [tf.constant(a) for a in arrays]
    ct = np.random.default_rng(5).normal(size=(2, 4, 3)).astype(dtype)
    results = []
    for f in (_fused(cell, mask, go_backwards), _steps(cell, mask, go_backwards)):
        with tf.GradientTape() as tape:
            tape.watch(tensors)
            H, C = f(*tensors)
            loss = tf.reduce_sum(H * ct) + tf.reduce_sum(C * C)
        grads = tape.gradient(loss, tensors)
        assert H.dtype.name == dtype
        results.append([H.numpy(), C.numpy()] + [np.zeros(t.shape) if g is None else g.numpy()  # unused rb, c0
                                                  for g, t in zip(grads, tensors)])
    tol = 1e-5 if dtype == "float32" else 1e-12
    for fused, stepped in zip(*results):
        np.testing.assert_allclose(fused, stepped, rtol=tol, atol=tol)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_equals_step_by_step_at_vector_widths(cell, dtype):
    """Units beyond a SIMD register and not a multiple of one: the kernels' vectorised loop bodies and their
    remainders both run (forward and backward, masked rows and go_backwards, with the input bias)."""
    arrays, mask = _inputs(cell, batch=5, steps=6, units=37, dtype=dtype, seed=7, bias=True)
    tensors = [tf.constant(a) for a in arrays]
    rng = np.random.default_rng(8)
    ct_h, ct_c = (rng.normal(size=(5, 6, 37)).astype(dtype) for _ in range(2))
    for go_backwards in (False, True):
        results = []
        for f in (_fused(cell, mask, go_backwards), _steps(cell, mask, go_backwards)):
            with tf.GradientTape() as tape:
                tape.watch(tensors)
                H, C = f(*tensors)
                loss = tf.reduce_sum(H * ct_h) + (tf.reduce_sum(C * ct_c[..., :C.shape[-1]]) if cell == "lstm"
                                                  else 0.0)
            grads = tape.gradient(loss, tensors)
            results.append([H.numpy(), C.numpy()] + [np.zeros(t.shape) if g is None else g.numpy()
                                                      for g, t in zip(grads, tensors)])
        tol = 2e-5 if dtype == "float32" else 1e-12
        for name, fused, stepped in zip(["H", "C", "dz", "dR", "drb", "dh0", "dc0"], *results):
            scale = max(1.0, np.abs(stepped).max(initial=0.0))  # sums of many terms: rounding grows with them
            np.testing.assert_allclose(fused, stepped, rtol=tol, atol=tol * scale, err_msg=f"{name}, go_backwards="
                                       f"{go_backwards}")


def test_masked_steps_carry_the_state():
    arrays, mask = _inputs("lstm")
    H, C = _fused("lstm", mask, False)(*[tf.constant(a) for a in arrays])
    H, C = H.numpy(), C.numpy()
    np.testing.assert_array_equal(H[0, 0], arrays[3][0])   # masked first step: h0, c0 unchanged
    np.testing.assert_array_equal(C[0, 0], arrays[4][0])
    np.testing.assert_array_equal(H[-1, -1], H[-1, -2])    # masked last step: the previous state


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_gradient_against_finite_differences(cell, go_backwards):
    arrays, mask = _inputs(cell, steps=3, bias=go_backwards)
    check_gradients(_fused(cell, mask, go_backwards), *arrays, allow_none=True)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("bias", [False, True])
def test_second_order_against_finite_differences_of_the_first(cell, bias):
    arrays, mask = _inputs(cell, batch=2, steps=3, units=2, seed=3, bias=bias)
    check_gradients(vjp_fn(_fused(cell, mask, True)), *arrays, allow_none=True, atol=1e-5)


def _reading(cell, mask, go_backwards, outputs):
    """The fused sequence with only some outputs read: "H", "C" or "last" (the last state, as a layer
    without return_sequences reads it). The others get no cotangent: the backward runs without them."""
    def f(z, R, rb, h0, c0):
        H, C = _fused(cell, mask, go_backwards)(z, R, rb, h0, c0)
        return {"H": [H], "C": [C], "last": [H[:, -1]]}[outputs]
    return f


@pytest.mark.parametrize("cell, outputs", [("lstm", "C"), ("lstm", "last"), ("gru", "last"), ("simple", "H")])
def test_gradients_of_some_outputs_against_finite_differences(cell, outputs):
    arrays, mask = _inputs(cell, steps=3, bias=True)
    check_gradients(_reading(cell, mask, True, outputs), *arrays, allow_none=True)
    arrays, mask = _inputs(cell, batch=2, steps=3, units=2, seed=3, bias=True)
    check_gradients(vjp_fn(_reading(cell, mask, False, outputs)), *arrays, allow_none=True, atol=1e-5)


@pytest.mark.parametrize("cell", CELLS)
def test_an_absent_cotangent_equals_a_zero_one(cell):
    """RNNSequenceGrad's empty cotangent stands for zeros: the same numbers as a dense zero cotangent (the
    form graphs saved before it take)."""
    arrays, mask = _inputs(cell, batch=3, steps=5, units=4, bias=True)
    inputs = [tf.constant(a) for a in arrays] + [tf.constant(mask)]
    attrs = {"cell": cell, "go_backwards": True}
    H, C, reserve = rnn_ops.execute("RNNSequence", inputs, attrs)
    dH = tf.constant(np.random.default_rng(1).normal(size=H.shape))
    dC = tf.constant(np.random.default_rng(2).normal(size=C.shape))
    absent = tf.zeros((0,), "float64")
    for given in ((dH, tf.zeros_like(C)), (tf.zeros_like(H), dC)):
        dense = rnn_ops.execute("RNNSequenceGrad", inputs + [H, C, reserve, *given], attrs)
        sparse = [absent if np.all(g.numpy() == 0) else g for g in given]
        light = rnn_ops.execute("RNNSequenceGrad", inputs + [H, C, reserve, *sparse], attrs)
        for a, b in zip(dense, light):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("cell", ["lstm", "gru_v1", "simple"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_input_bias_in_the_op_equals_adding_it_to_z(cell, dtype):
    """rb carries the input bias of every cell but "gru": the same states, to the bit, as z + b with an empty
    rb (the form graphs saved before it take), and the bias's gradient is the sum of z's over batch and
    steps."""
    arrays, mask = _inputs(cell, batch=3, steps=5, units=4, dtype=dtype, bias=True)
    z, R, b, h0, c0 = [tf.constant(a) for a in arrays]
    ct = tf.constant(np.random.default_rng(4).normal(size=(3, 5, 4)).astype(dtype))
    results = []
    for in_op in (True, False):
        with tf.GradientTape() as tape:
            tape.watch([z, b])
            inputs = (z, R, b, h0, c0) if in_op else (z + b, R, tf.zeros((0,), dtype), h0, c0)
            H, C = _fused(cell, mask, True)(*inputs)
            loss = tf.reduce_sum(H * ct)
        results.append([H.numpy(), C.numpy()] + [g.numpy() for g in tape.gradient(loss, [z, b])])
    (H1, C1, dz1, db1), (H2, C2, dz2, db2) = results
    np.testing.assert_array_equal(H1, H2)
    np.testing.assert_array_equal(C1, C2)
    np.testing.assert_array_equal(dz1, dz2)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(db1, db2, rtol=tol, atol=tol)
    np.testing.assert_allclose(db1, dz1.astype(np.float64).sum(axis=(0, 1)), rtol=tol, atol=tol)


def test_jacobian_runs_the_backward_per_cotangent():
    arrays, mask = _inputs("gru", batch=2, steps=2, units=2)
    check_jacobian(lambda z, R: _fused("gru", mask, False)(z, R, *[tf.constant(a) for a in arrays[2:]])[0],
                   arrays[0], arrays[1])


def test_bad_inputs_are_refused_before_any_kernel_runs():
    arrays, mask = _inputs("lstm")
    z, R, rb, h0, c0 = [tf.constant(a) for a in arrays]
    bad = {
        "R": (z, tf.constant(np.zeros((3, 8))), rb, h0, c0, tf.constant(mask)),
        "h0": (z, R, rb, tf.constant(np.zeros((5, 3))), c0, tf.constant(mask)),
        "mask": (z, R, rb, h0, c0, tf.constant(np.ones((2, 4)))),
        "c0": (z, R, rb, h0, tf.constant(np.zeros((2, 0))), tf.constant(mask)),
        "rb": (z, R, tf.constant(np.zeros((3,))), h0, c0, tf.constant(mask)),
    }
    for name, inputs in bad.items():
        with pytest.raises(ValueError, match=f"RNNSequence: {name}"):
            rnn_ops.execute("RNNSequence", inputs, {"cell": "lstm", "go_backwards": False})
    with pytest.raises(ValueError, match="float32 or all float64"):
        rnn_ops.execute("RNNSequence", (z, tf.cast(R, "float32"), rb, h0, c0, tf.constant(mask)),
                        {"cell": "lstm", "go_backwards": False})
    with pytest.raises(ValueError, match="unknown cell"):
        rnn_ops.execute("RNNSequence", (z, R, rb, h0, c0, tf.constant(mask)), {"cell": "xx", "go_backwards": False})


@pytest.mark.parametrize("cell", CELLS)
def test_backward_refuses_a_reserve_or_cotangent_of_the_wrong_size(cell):
    """The kernels index the reserve and the cotangents without bounds checks: RNNSequenceGrad (a graph from a
    file may feed it anything) checks their shapes first."""
    arrays, mask = _inputs(cell)
    inputs = [tf.constant(a) for a in arrays] + [tf.constant(mask)]
    attrs = {"cell": cell, "go_backwards": False}
    H, C, reserve = rnn_ops.execute("RNNSequence", inputs, attrs)
    good = inputs + [H, C, reserve, tf.ones_like(H), tf.ones_like(C)]
    rnn_ops.execute("RNNSequenceGrad", good, attrs)
    for index, name in ((8, "reserve"), (9, "dH"), (10, "dC")):
        bad = list(good)
        bad[index] = tf.constant(np.concatenate([good[index].numpy().ravel(), [0.0]]))
        with pytest.raises(ValueError, match=f"RNNSequenceGrad: {name} has shape"):
            rnn_ops.execute("RNNSequenceGrad", bad, attrs)
    for index, name in ((9, "dH"), (10, "dC")):  # empty, but not the absent form
        bad = list(good)
        bad[index] = tf.zeros((2, 0, 3), "float64") if name == "dH" else tf.zeros((0, 0), "float64")
        with pytest.raises(ValueError, match=f"RNNSequenceGrad: {name} has shape"):
            rnn_ops.execute("RNNSequenceGrad", bad, attrs)


@pytest.mark.parametrize("cell", CELLS)
def test_a_sequence_of_no_steps_has_empty_outputs_and_zero_gradients(cell):
    arrays, _ = _inputs(cell, steps=0, masked=False)
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        H, C = _fused(cell, np.ones((2, 0), bool), True)(*tensors)
        loss = tf.reduce_sum(H) + tf.reduce_sum(C)
    assert H.shape == (2, 0, 3)
    for g, a in zip(tape.gradient(loss, tensors), arrays):
        np.testing.assert_array_equal(g.numpy(), np.zeros_like(a))


def test_batch_jacobian_through_an_lstm_layer():
    """RNNSequence declares its rows independent: batch_jacobian is assembled per example, and equals the
    diagonal blocks of the full jacobian."""
    layer = tf.keras.layers.LSTM(3, dtype="float64", return_sequences=True)
    x = tf.constant(np.random.default_rng(2).normal(size=(3, 4, 2)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(x)[:, -1]
    blocks = tape.batch_jacobian(y, x).numpy()
    full = tape.jacobian(y, x).numpy()
    for b in range(3):
        np.testing.assert_allclose(blocks[b], full[b, :, b], rtol=1e-12, atol=1e-14)
    assert np.abs(full[0, :, 1]).max() == 0.0


class _OldFormGraphs(tf.Module):
    """Graphs as tapeflow traced them before rb carried the input bias and cotangents could be absent: the bias
    added to z by its own op, an empty rb, and dense zeros for the cell states' cotangent."""

    @tf.function
    def forward_and_backward(self, z, R, b, h0, c0, mask, dH):
        inputs = (z + b, R, tf.zeros((0,), "float64"), h0, c0, mask)
        attrs = {"cell": "lstm", "go_backwards": True}
        H, C, reserve = rnn_ops.execute("RNNSequence", inputs, attrs)
        dz, dR, drb, dh0, dc0 = rnn_ops.execute("RNNSequenceGrad", inputs + (H, C, reserve, dH, tf.zeros_like(C)),
                                                attrs)
        return H, dz, dR, tf.reduce_sum(dz, axis=[0, 1]), dh0, dc0


def test_a_saved_graph_of_the_old_form_loads_and_gives_the_current_numbers(tmp_path):
    arrays, mask = _inputs("lstm", batch=3, steps=5, units=4, bias=True)
    tensors = [tf.constant(a) for a in arrays] + [tf.constant(mask)]
    dH = tf.constant(np.random.default_rng(6).normal(size=(3, 5, 4)))
    module = _OldFormGraphs()
    module.forward_and_backward(*tensors, dH)
    tf.saved_model.save(module, str(tmp_path / "old"))
    loaded = tf.saved_model.load(str(tmp_path / "old"))
    old = [t.numpy() for t in loaded.forward_and_backward(*tensors, dH)]
    z, R, b, h0, c0, _ = tensors
    with tf.GradientTape() as tape:
        tape.watch([z, R, b, h0, c0])
        H, _C = _fused("lstm", mask, True)(z, R, b, h0, c0)   # dC absent, the bias in rb
    current = [H.numpy()] + [g.numpy() for g in tape.gradient(H, [z, R, b, h0, c0], output_gradients=dH)]
    for name, a, c in zip(["H", "dz", "dR", "db", "dh0", "dc0"], old, current):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12, err_msg=name)


def test_outputs_without_cotangent_reach_the_backward_as_absent(monkeypatch):
    """The tape makes no zero arrays for RNNSequence's outputs that got no cotangent: a loss of H only runs
    RNNSequenceGrad with the empty form for C's cotangent."""
    from tapeflow.framework import recording
    forward, n_out = recording._FORWARDS["RNNSequenceGrad"]
    seen = []

    def spy(*args, **attrs):
        seen.append([a.shape for a in args[9:11]])
        return forward(*args, **attrs)
    monkeypatch.setitem(recording._FORWARDS, "RNNSequenceGrad", (spy, n_out))
    arrays, mask = _inputs("lstm", bias=True)
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        H, _ = _fused("lstm", mask, False)(*tensors)
        loss = tf.reduce_sum(H * H)
    tape.gradient(loss, tensors)
    assert seen == [[(2, 4, 3), rnn_ops.ABSENT]]

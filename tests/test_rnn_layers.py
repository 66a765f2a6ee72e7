"""Recurrent layers: the fused path gives the step-by-step cell path's numbers and gradients; masks,
go_backwards, states, stateful layers, dropout, user cells, stacking, Bidirectional, TimeDistributed,
Masking; configs as Keras writes them; training and input-gradient regularisation."""
import json
import os
import zipfile

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_rnn")
rng = np.random.default_rng(0)


class StepLSTMCell(L.LSTMCell):
    def fused_cell(self, training):
        return None


class StepGRUCell(L.GRUCell):
    def fused_cell(self, training):
        return None


class StepSimpleRNNCell(L.SimpleRNNCell):
    def fused_cell(self, training):
        return None


def _pair(kind, units=3, **flags):
    """(the built-in layer, an RNN over a cell that only runs step by step) sharing weights, float64."""
    layer_cls, cell_cls, cell_kwargs = {
        "lstm": (L.LSTM, StepLSTMCell, {}), "gru": (L.GRU, StepGRUCell, {}),
        "gru_v1": (L.GRU, StepGRUCell, {"reset_after": False}), "simple": (L.SimpleRNN, StepSimpleRNNCell, {}),
    }[kind]
    cell_kwargs = dict(cell_kwargs, **{k: flags.pop(k) for k in ("dropout", "recurrent_dropout", "use_bias")
                                       if k in flags})
    fused = layer_cls(units, dtype="float64", **cell_kwargs, **flags)
    stepped = L.RNN(cell_cls(units, dtype="float64", **cell_kwargs), dtype="float64", **flags)
    fused.build((4, 5, 2))
    stepped.build((4, 5, 2))
    stepped.set_weights([w + rng.normal(scale=0.3, size=w.shape) for w in fused.get_weights()])
    fused.set_weights(stepped.get_weights())
    return fused, stepped


def _x(batch=4, steps=5, features=2):
    return tf.constant(rng.normal(size=(batch, steps, features)))


def _mask(batch=4, steps=5):
    mask = np.ones((batch, steps), bool)
    mask[1, 3:] = False
    mask[2, :2] = False
    mask[3, 2] = False
    return tf.constant(mask)


def _flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("kind", ["lstm", "gru", "gru_v1", "simple"])
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("use_bias", [True, False])
def test_fused_path_equals_cell_path(kind, go_backwards, use_bias):
    fused, stepped = _pair(kind, return_sequences=True, return_state=True, go_backwards=go_backwards,
                           use_bias=use_bias)
    x, mask = _x(), _mask()
    n_states = 2 if kind == "lstm" else 1
    initial = [tf.constant(rng.normal(size=(4, 3))) for _ in range(n_states)]
    results = []
    for layer in (fused, stepped):
        with tf.GradientTape() as tape:
            tape.watch(x)
            outs = _flat(layer(x, initial_state=initial, mask=mask))
            loss = sum(tf.reduce_sum(o * o) for o in outs)
        grads = tape.gradient(loss, [x] + layer.trainable_weights)
        results.append([o.numpy() for o in outs] + [g.numpy() for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_fused_path_runs_one_sequence_op():
    fused, stepped = _pair("lstm", return_sequences=True)
    x = _x()

    def op_types(layer):
        graph = tf.function(lambda t: layer(t)).get_concrete_function(x).graph
        return [op.type for op in graph.get_operations()]
    fused_ops, stepped_ops = op_types(fused), op_types(stepped)
    assert fused_ops.count("RNNSequence") == 1 and fused_ops.count("MatMul") == 1
    assert "RNNSequence" not in stepped_ops and stepped_ops.count("MatMul") == 2 * 5


def test_masked_steps_keep_state_and_output():
    fused, _ = _pair("gru", return_sequences=True)
    x, mask = _x(), _mask()
    out = fused(x, mask=mask).numpy()
    np.testing.assert_array_equal(out[1, 3], out[1, 2])
    np.testing.assert_array_equal(out[1, 4], out[1, 2])
    np.testing.assert_array_equal(out[2, :2], 0.0)  # no real step yet: the zero initial state
    # The masked steps' inputs do not matter.
    x2 = x.numpy().copy()
    x2[~mask.numpy()] = 1e3
    np.testing.assert_array_equal(fused(tf.constant(x2), mask=mask).numpy(), out)


def test_zero_output_for_mask():
    fused, stepped = _pair("lstm", return_sequences=True, zero_output_for_mask=True, go_backwards=True)
    x, mask = _x(), _mask()
    a, b = fused(x, mask=mask).numpy(), stepped(x, mask=mask).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_array_equal(a[1, :2], 0.0)   # backwards: the masked steps 4 and 3 come first
    assert np.all(a[1, 2:] != 0.0)


class MinimalRNNCell(L.Layer):
    """Keras's documented example of a user cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                name="recurrent_kernel")

    def call(self, inputs, states):
        prev_output = states[0]
        h = tf.matmul(inputs, self.kernel)
        output = h + tf.matmul(prev_output, self.recurrent_kernel)
        return output, [output]


def test_user_cell_against_numpy():
    layer = L.RNN(MinimalRNNCell(3, dtype="float64"), return_sequences=True, dtype="float64")
    x, mask = _x(), _mask()
    out = layer(x, mask=mask).numpy()
    W, U = [w.numpy() for w in layer.weights]
    h = np.zeros((4, 3))
    expected = []
    for t in range(5):
        m = mask.numpy()[:, t:t + 1]
        h = np.where(m, x.numpy()[:, t] @ W + h @ U, h)
        expected.append(h)
    np.testing.assert_allclose(out, np.stack(expected, 1), rtol=1e-12)


def test_stacked_cells_equal_stacked_layers():
    stacked = L.RNN([L.SimpleRNNCell(3, dtype="float64"), L.LSTMCell(2, dtype="float64")], return_sequences=True,
                    dtype="float64")
    first = L.SimpleRNN(3, return_sequences=True, dtype="float64")
    second = L.LSTM(2, return_sequences=True, dtype="float64")
    x = _x()
    out = stacked(x).numpy()
    first.build((4, 5, 2))
    second.build((4, 5, 3))
    weights = stacked.get_weights()
    first.set_weights(weights[:3])
    second.set_weights(weights[3:])
    np.testing.assert_allclose(out, second(first(x)).numpy(), rtol=1e-12)
    assert [w.path for w in stacked.weights][0].startswith(f"{stacked.name}/stacked_rnn_cells/simple_rnn_cell")


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(merge_mode):
    bi = L.Bidirectional(L.LSTM(3, return_sequences=True, dtype="float64"), merge_mode=merge_mode, dtype="float64")
    x, mask = _x(), _mask()
    out = bi(x, mask=mask)
    fw = bi.forward_layer(x, mask=mask).numpy()
    bw = bi.backward_layer(x, mask=mask).numpy()[:, ::-1]
    expected = {"concat": np.concatenate([fw, bw], -1), "sum": fw + bw, "mul": fw * bw, "ave": (fw + bw) / 2,
                None: [fw, bw]}[merge_mode]
    if merge_mode is None:
        for o, e in zip(out, expected):
            np.testing.assert_allclose(o.numpy(), e, rtol=1e-12)
    else:
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert bi.backward_layer.go_backwards and bi.forward_layer.zero_output_for_mask


def test_bidirectional_return_state_and_initial_state():
    bi = L.Bidirectional(L.GRU(3, return_state=True, dtype="float64"), dtype="float64")
    x = _x()
    out, h_fw, h_bw = bi(x)
    assert out.shape == (4, 6) and h_fw.shape == (4, 3) and h_bw.shape == (4, 3)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([h_fw.numpy(), h_bw.numpy()], -1))
    init = [tf.constant(rng.normal(size=(4, 3))), tf.constant(rng.normal(size=(4, 3)))]
    out2 = bi(x, initial_state=init)[0].numpy()
    np.testing.assert_allclose(out2[:, :3], bi.forward_layer(x, initial_state=init[:1])[0].numpy(), rtol=1e-12)


def test_time_distributed_equals_the_layer_on_each_step():
    dense = L.Dense(4, dtype="float64")
    td = L.TimeDistributed(dense, dtype="float64")
    x = _x()
    np.testing.assert_allclose(td(x).numpy(), dense(x).numpy(), rtol=1e-12)
    inputs = tf.keras.Input((5, 2))
    assert L.TimeDistributed(L.Dense(7))(inputs).shape == (None, 5, 7)


def test_stateful_layer_continues_where_it_stopped():
    layer = L.LSTM(3, stateful=True, return_sequences=True, dtype="float64")
    whole = L.LSTM(3, return_sequences=True, dtype="float64")
    x = _x()
    first = layer(x[:, :2]).numpy()
    whole.build((4, 5, 2))
    whole.set_weights(layer.get_weights())
    expected = whole(x).numpy()
    np.testing.assert_allclose(np.concatenate([first, layer(x[:, 2:]).numpy()], 1), expected, rtol=1e-12)
    layer.reset_states()
    np.testing.assert_allclose(layer(x[:, :2]).numpy(), expected[:, :2], rtol=1e-12)
    assert len(layer.weights) == 3  # the states are not weights, as in Keras
    with pytest.raises(ValueError, match="fixed batch size"):
        tf.keras.Sequential([tf.keras.Input((5, 2)), L.LSTM(3, stateful=True)])


def test_dropout_uses_one_mask_per_sequence_on_both_paths():
    fused, stepped = _pair("lstm", dropout=0.5, return_sequences=True)
    x = _x()
    fixed = tf.constant((rng.random((4, 2)) > 0.5) * 2.0)
    for layer in (fused, stepped):
        layer.cell.__dict__["get_dropout_mask"] = lambda step_inputs: fixed
    np.testing.assert_allclose(fused(x, training=True).numpy(), stepped(x, training=True).numpy(), rtol=1e-12)
    np.testing.assert_allclose(fused(x * fixed[:, None, :]).numpy(), fused(x, training=True).numpy(), rtol=1e-12)


def test_recurrent_dropout_in_training_takes_the_cell_path():
    layer = L.GRU(3, recurrent_dropout=0.5, dropout=0.2)
    assert layer.cell.fused_cell(True) is None and layer.cell.fused_cell(False) == "gru"
    x = tf.cast(_x(), "float32")
    inference = layer(x).numpy()
    assert not np.allclose(layer(x, training=True).numpy(), inference)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), inference)


def test_non_standard_activation_takes_the_cell_path():
    layer = L.SimpleRNN(3, activation="relu")
    assert layer.cell.fused_cell(False) is None
    lstm = L.LSTM(3, recurrent_activation="hard_sigmoid")
    assert lstm.cell.fused_cell(False) is None


def test_masks_travel_through_sequential_and_functional_models():
    emb = L.Embedding(10, 4, mask_zero=True)
    inputs = tf.keras.Input((None,), dtype="int32")
    h = L.LSTM(3, return_sequences=True)(emb(inputs))
    out = L.GlobalAveragePooling1D()(L.Dense(2)(h))
    model = tf.keras.Model(inputs, out)
    padded, short = np.array([[4, 2, 7, 0, 0]]), np.array([[4, 2, 7]])
    np.testing.assert_allclose(model.predict(padded, verbose=0), model.predict(short, verbose=0), rtol=1e-6)
    seq = tf.keras.Sequential([tf.keras.Input((None, 2)), L.Masking(-1.0), L.GRU(3)])
    x = rng.normal(size=(1, 3, 2)).astype("float32")
    x_padded = np.concatenate([x, -np.ones((1, 2, 2), "float32")], 1)
    np.testing.assert_allclose(seq.predict(x_padded, verbose=0), seq.predict(x, verbose=0), rtol=1e-6)
    y = emb(tf.constant(padded))
    from tapeflow.layers.layer import get_keras_mask  # the mask rides with the output tensor
    np.testing.assert_array_equal(get_keras_mask(y).numpy(), [[True, True, True, False, False]])


def test_masking_layer_zeroes_masked_steps():
    x = rng.normal(size=(2, 4, 3)).astype("float32")
    x[0, 1] = 0.0
    layer = L.Masking()
    out = layer(x)
    np.testing.assert_array_equal(out.numpy(), x)
    np.testing.assert_array_equal(layer.compute_mask(tf.constant(x)).numpy(), [[1, 0, 1, 1], [1, 1, 1, 1]])
    assert L.Masking.from_config(L.Masking(0.5).get_config()).mask_value == 0.5


def test_configs_have_keras_keys():
    with zipfile.ZipFile(os.path.join(FIXTURES, "bidirectional.keras")) as z:
        config = json.loads(z.read("config.json"))
    bi_config = config["config"]["layers"][2]["config"]
    keras_lstm = bi_config["layer"]["config"]
    ours = L.LSTM(4, return_sequences=True).get_config()
    assert set(ours) == set(keras_lstm)
    assert set(L.Bidirectional(L.LSTM(4)).get_config()) == set(bi_config)
    with zipfile.ZipFile(os.path.join(FIXTURES, "gru.keras")) as z:
        keras_gru = json.loads(z.read("config.json"))["config"]["layers"][1]["config"]
    assert set(L.GRU(3).get_config()) == set(keras_gru)
    with zipfile.ZipFile(os.path.join(FIXTURES, "simple_rnn.keras")) as z:
        keras_simple = json.loads(z.read("config.json"))["config"]["layers"][1]["config"]
    assert set(L.SimpleRNN(3).get_config()) == set(keras_simple)
    for layer in [L.SimpleRNN(2, go_backwards=True), L.GRU(2, reset_after=False), L.RNN([L.GRUCell(2)]),
                  L.TimeDistributed(L.Dense(2)), L.Bidirectional(L.SimpleRNN(2), merge_mode="mul")]:
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config


def test_errors():
    with pytest.raises(ValueError, match="units"):
        L.LSTM(0)
    with pytest.raises(ValueError, match="recurrent layer"):
        L.Bidirectional(L.Dense(3))
    with pytest.raises(ValueError, match="Merge mode"):
        L.Bidirectional(L.LSTM(3), merge_mode="max")
    with pytest.raises(ValueError, match="steps"):
        L.LSTM(3)(np.zeros((2, 3), "float32"))
    with pytest.raises(ValueError, match="0 time steps"):
        L.GRU(3)(np.zeros((2, 0, 3), "float32"))
    with pytest.raises(ValueError, match="initial state"):
        L.LSTM(3)(np.zeros((2, 4, 3), "float32"), initial_state=[np.zeros((2, 3), "float32")])


def test_fit_reduces_the_loss():
    data = np.random.default_rng(1)
    x = data.normal(size=(128, 12, 2)).astype("float32")
    y = (x[:, :, 0].sum(1) > 0).astype("float32")[:, None]
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((12, 2)), L.LSTM(8), L.Dense(1, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="binary_crossentropy")
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0]


def test_input_gradient_penalty_second_order_against_finite_differences():
    """d/dkernel of ||d sum(LSTM(x)) / dx||^2, the input-gradient regulariser, by the tape and numerically."""
    layer = L.LSTM(2, dtype="float64")
    x = tf.constant(rng.normal(size=(2, 3, 2)))
    layer.build((2, 3, 2))

    def penalty():
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.sin(layer(x)))
        g = inner.gradient(y, x)
        return tf.reduce_sum(g * g)

    with tf.GradientTape() as outer:
        p = penalty()
    analytic = [g.numpy() for g in outer.gradient(p, layer.trainable_weights)]
    eps = 1e-6
    for w, a in zip(layer.trainable_weights, analytic):
        base = w.numpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                w.assign(shifted)
                numeric[idx] += sign * float(penalty().numpy()) / (2 * eps)
        w.assign(base)
        np.testing.assert_allclose(a, numeric, rtol=1e-5, atol=1e-7)


def test_mask_survives_the_cast_into_a_layer_of_another_dtype():
    inputs = tf.keras.Input((None, 2), dtype="float64")
    masked = L.Masking(0.0, dtype="float64")(inputs)
    model = tf.keras.Model(inputs, L.LSTM(3)(masked))   # the LSTM computes in float32: its input is cast
    x = rng.normal(size=(1, 3, 2))
    x_padded = np.concatenate([x, np.zeros((1, 2, 2))], 1)
    np.testing.assert_allclose(model.predict(x_padded, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_input_gradient_penalty_traced_equals_eager():
    layer = L.GRU(2, dtype="float64", reset_after=False)
    x = tf.constant(rng.normal(size=(2, 3, 2)))
    layer.build((2, 3, 2))

    def penalty_gradient():
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.sin(layer(x)))
            g = inner.gradient(y, x)
            p = tf.reduce_sum(g * g)
        return outer.gradient(p, layer.trainable_weights)
    for eager, traced in zip(penalty_gradient(), tf.function(penalty_gradient)()):
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12)

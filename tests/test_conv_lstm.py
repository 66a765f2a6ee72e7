"""ConvLSTM1D/2D/3D: models saved by real Keras 3 (tests/fixtures/keras3_conv_lstm/make_fixtures.py, jax
backend) load and predict as Keras did; tapeflow's files reload and keep Keras's layout and config; the
gradients match finite differences; masks, go_backwards, stateful and the cell path agree."""
import json
import os
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn

L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_conv_lstm")
NAMES = ["conv_lstm1d", "conv_lstm2d", "conv_lstm2d_states", "conv_lstm3d"]
rng = np.random.default_rng(5)


def _path(name):
    return os.path.join(FIXTURES, name)


def _expected(name):
    single = _path(f"{name}_pred.npy")
    if os.path.exists(single):
        return [np.load(single)]
    return [np.load(_path(f"{name}_pred{i}.npy")) for i in range(3)]


def _predict(model, x):
    out = model.predict(x, verbose=0)
    return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]


def _archive(filename):
    """(the config's layers, {weight path: shape}) of a .keras file."""
    with zipfile.ZipFile(filename) as z:
        config = json.loads(z.read("config.json"))
        with z.open("model.weights.h5") as f, h5py.File(f, "r") as h5:
            shapes = {}
            h5.visititems(lambda k, o: shapes.__setitem__(k, o.shape) if isinstance(o, h5py.Dataset) else None)
    return config["config"]["layers"], shapes


@pytest.mark.parametrize("name", NAMES)
def test_keras_file_predicts_as_keras(name):
    model = tf.keras.models.load_model(_path(f"{name}.keras"))
    x = np.load(_path(f"{name}_x.npy"))
    got, expected = _predict(model, x), _expected(name)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_tapeflow_file_reloads_with_keras_layout_and_config(name, tmp_path):
    model = tf.keras.models.load_model(_path(f"{name}.keras"))
    x = np.load(_path(f"{name}_x.npy"))
    model.save(tmp_path / "m.keras")
    for a, b in zip(_predict(tf.keras.models.load_model(tmp_path / "m.keras"), x), _predict(model, x)):
        np.testing.assert_array_equal(a, b)
    ours, our_shapes = _archive(tmp_path / "m.keras")
    theirs, their_shapes = _archive(_path(f"{name}.keras"))
    assert our_shapes == their_shapes
    for mine, keras in zip(ours, theirs):
        if keras["class_name"].startswith("ConvLSTM"):
            assert mine["class_name"] == keras["class_name"]
            assert set(mine["config"]) == set(keras["config"])
            for key in ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
                        "recurrent_activation", "unit_forget_bias", "return_sequences", "return_state",
                        "go_backwards"):
                assert mine["config"][key] == keras["config"][key], key


def _layer(rank=2, dtype="float64", **kwargs):
    cls = {1: L.ConvLSTM1D, 2: L.ConvLSTM2D, 3: L.ConvLSTM3D}[rank]
    kwargs.setdefault("bias_initializer", "random_normal")
    return cls(2, 2, dtype=dtype, **kwargs)


def test_input_gradients_against_finite_differences():
    layer = _layer(padding="same", return_sequences=True, go_backwards=True)
    check_gradients(lambda x: layer(x), rng.normal(size=(2, 3, 4, 3, 2)))


def test_second_order_input_gradients_against_finite_differences():
    layer = _layer(rank=1, padding="same")
    check_gradients(vjp_fn(lambda x: layer(x)), rng.normal(size=(1, 3, 4, 2)))


def test_weight_gradients_against_finite_differences_with_strides_and_mask():
    layer = _layer(rank=1, strides=2)
    x = tf.constant(rng.normal(size=(2, 4, 7, 3)))
    mask = tf.constant([[True, True, False, True], [True, False, False, False]])
    layer.build(x.shape)

    def loss():
        return tf.reduce_sum(tf.sin(layer(x, mask=mask)))

    with tf.GradientTape() as tape:
        value = loss()
    analytic = [g.numpy() for g in tape.gradient(value, layer.trainable_weights)]
    eps = 1e-6
    for w, a in zip(layer.trainable_weights, analytic):
        base = w.numpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                w.assign(shifted)
                numeric[idx] += sign * float(loss().numpy()) / (2 * eps)
        w.assign(base)
        np.testing.assert_allclose(a, numeric, rtol=1e-6, atol=1e-9)


def test_cell_in_the_generic_rnn_equals_the_layer():
    """The layer's one convolution over all steps gives the step-by-step cell's numbers."""
    layer = _layer(return_sequences=True, padding="same", unit_forget_bias=False)
    x = tf.constant(rng.normal(size=(2, 3, 5, 4, 2)))
    expected = layer(x).numpy()
    h = c = tf.zeros((2, 5, 4, 2), "float64")
    for t in range(3):
        out, (h, c) = layer.cell(x[:, t], [h, c])
        np.testing.assert_allclose(out.numpy(), expected[:, t], rtol=1e-12, atol=1e-14)


def test_masked_steps_carry_the_state():
    layer = _layer(rank=1, return_sequences=True)
    x = rng.normal(size=(2, 4, 6, 3))
    mask = np.array([[True, True, False, False], [True, False, True, False]])
    out = layer(tf.constant(x), mask=tf.constant(mask)).numpy()
    np.testing.assert_array_equal(out[0, 2], out[0, 1])
    np.testing.assert_array_equal(out[0, 3], out[0, 1])
    alone = layer(tf.constant(x[:1, :2])).numpy()    # the first sequence without its masked steps
    np.testing.assert_allclose(out[0, :2], alone[0], rtol=1e-12)
    skipped = layer(tf.constant(x[1:, [0, 2]])).numpy()   # the second without step 1
    np.testing.assert_allclose(out[1, 2], skipped[0, 1], rtol=1e-12)
    x2 = x.copy()
    x2[~mask] = 1e3
    np.testing.assert_array_equal(layer(tf.constant(x2), mask=tf.constant(mask)).numpy(), out)


def test_stateful_layer_continues_where_it_stopped():
    layer = _layer(rank=1, stateful=True, return_sequences=True, padding="same")
    whole = _layer(rank=1, return_sequences=True, padding="same")
    x = rng.normal(size=(2, 5, 4, 3))
    first = layer(tf.constant(x[:, :2])).numpy()
    whole.build(x.shape)
    whole.set_weights(layer.get_weights())
    expected = whole(tf.constant(x)).numpy()
    np.testing.assert_allclose(np.concatenate([first, layer(tf.constant(x[:, 2:])).numpy()], 1), expected,
                               rtol=1e-12)
    layer.reset_states()
    np.testing.assert_allclose(layer(tf.constant(x[:, :2])).numpy(), expected[:, :2], rtol=1e-12)


def test_output_shapes_weights_and_config_round_trip():
    layer = L.ConvLSTM2D(4, (3, 2), strides=(2, 1), return_sequences=True, return_state=True)
    outputs = layer(tf.keras.Input((5, 9, 6, 3)))
    assert [tuple(o.shape) for o in outputs] == [(None, 5, 4, 5, 4), (None, 4, 5, 4), (None, 4, 5, 4)]
    assert [w.shape for w in layer.weights] == [(3, 2, 3, 16), (3, 2, 4, 16), (16,)]
    np.testing.assert_array_equal(layer.weights[2].numpy(), np.repeat([0.0, 1.0, 0.0, 0.0], 4))
    copy = L.ConvLSTM2D.from_config(layer.get_config())
    assert copy.get_config() == layer.get_config()
    first = L.ConvLSTM3D(2, 2, data_format="channels_first")
    assert first.compute_output_shape((None, 3, 1, 4, 5, 6)) == (None, 2, 3, 4, 5)


def test_training_reduces_the_loss():
    x = rng.normal(size=(16, 3, 6, 2)).astype("float32")
    y = (x.sum(axis=(1, 2, 3)) > 0).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((3, 6, 2)), L.ConvLSTM1D(4, 3, padding="same"),
                                 L.GlobalAveragePooling1D(), L.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.05), "binary_crossentropy")
    losses = model.fit(x, y, epochs=15, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.7 * losses[0]


def test_errors():
    with pytest.raises(ValueError, match="expected ndim=5"):
        L.ConvLSTM2D(2, 3)(tf.zeros((1, 2, 4, 4)))
    with pytest.raises(ValueError, match="padding"):
        L.ConvLSTM1D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="filters"):
        L.ConvLSTM1D(0, 3)
    with pytest.raises(ValueError, match="dilation_rate"):
        L.ConvLSTM1D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="mask of shape"):
        L.ConvLSTM1D(2, 3)(tf.zeros((1, 2, 5, 1)), mask=tf.ones((1, 2, 5), "bool"))

"""Recurrent models saved by real Keras 3 (tests/fixtures/keras3_rnn/make_fixtures.py, jax backend) load and
predict as Keras did; tapeflow's own files of them reload and have Keras's layout."""
import os

import h5py
import numpy as np
import pytest

import tapeflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_rnn")
NAMES = ["lstm", "gru", "simple_rnn", "bidirectional", "functional", "masking"]


def _path(name):
    return os.path.join(FIXTURES, name)


def _expected(name):
    single = _path(f"{name}_pred.npy")
    if os.path.exists(single):
        return [np.load(single)]
    return [np.load(_path(f"{name}_pred{i}.npy")) for i in range(2)]


def _predict(model, x):
    out = model.predict(x, verbose=0)
    return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]


def _layout(filename):
    """{dataset path: shape} of a .weights.h5 file."""
    found = {}
    with h5py.File(filename, "r") as f:
        f.visititems(lambda key, obj: found.__setitem__(key, obj.shape) if isinstance(obj, h5py.Dataset) else None)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_keras_file_predicts_as_keras(name):
    model = tf.keras.models.load_model(_path(f"{name}.keras"))
    x = np.load(_path(f"{name}_x.npy"))
    for got, expected in zip(_predict(model, x), _expected(name)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name", NAMES)
def test_tapeflow_files_reload_and_match_keras_layout(name, tmp_path):
    model = tf.keras.models.load_model(_path(f"{name}.keras"))
    x = np.load(_path(f"{name}_x.npy"))
    before = _predict(model, x)
    model.save(tmp_path / "m.keras")
    model.save_weights(tmp_path / "m.weights.h5")
    assert _layout(tmp_path / "m.weights.h5") == _layout(_path(f"{name}.weights.h5"))
    for got, expected in zip(_predict(tf.keras.models.load_model(tmp_path / "m.keras"), x), before):
        np.testing.assert_array_equal(got, expected)


def test_keras_weights_file_loads_into_a_model_built_in_tapeflow():
    L = tf.keras.layers
    model = tf.keras.Sequential([tf.keras.Input((None,), dtype="int32"), L.Embedding(20, 6, mask_zero=True),
                                 L.Bidirectional(L.LSTM(4, return_sequences=True)),
                                 L.Bidirectional(L.GRU(3), merge_mode="sum"), L.Dense(2)])
    model.load_weights(_path("bidirectional.weights.h5"))
    x = np.load(_path("bidirectional_x.npy"))
    np.testing.assert_allclose(_predict(model, x)[0], _expected("bidirectional")[0], rtol=1e-5, atol=2e-6)


def test_masked_padding_changes_nothing_in_the_keras_model():
    """Row 3 of the fixture is one token then padding: alone and unpadded it predicts the same."""
    model = tf.keras.models.load_model(_path("bidirectional.keras"))
    x = np.load(_path("bidirectional_x.npy"))
    np.testing.assert_allclose(_predict(model, x[3:4, :1])[0], _expected("bidirectional")[0][3:4],
                               rtol=1e-5, atol=2e-6)

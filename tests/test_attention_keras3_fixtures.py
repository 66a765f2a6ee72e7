"""Attention models saved by real Keras 3.15.1 (tests/fixtures/keras3_attention/make_fixtures.py) load and predict
as Keras did, and tapeflow writes them back with Keras's weight layout and configs."""
import io
import json
import os
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_attention")
L = tf.keras.layers


def _arrays(name, kind):
    data = np.load(os.path.join(FIXTURES, f"{name}_{kind}.npz"))
    return [data[f"arr_{i}"] for i in range(len(data.files))]


def _predict(model, inputs):
    out = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _weights_layout(path):
    """{h5 dataset path: shape} of the weights inside a .keras file."""
    with zipfile.ZipFile(path) as archive:
        data = archive.read("model.weights.h5")
    layout = {}
    with h5py.File(io.BytesIO(data), "r") as h5:
        h5.visititems(lambda name, obj: layout.__setitem__(name, obj.shape) if isinstance(obj, h5py.Dataset) else None)
    return layout


def _layer_configs(path):
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))

    def strip(node):  # Keras marks shared dtype policies with an id of the Python object: not part of the config
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "shared_object_id"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return {layer["name"]: strip(layer["config"]) for layer in config["config"]["layers"]}


@pytest.mark.parametrize("name", ["block", "axes", "gated", "luong"])
def test_keras_attention_file_predicts_as_keras(name, tmp_path):
    path = os.path.join(FIXTURES, f"{name}.keras")
    model = tf.keras.models.load_model(path)
    inputs, expected = _arrays(name, "x"), _arrays(name, "pred")
    outputs = _predict(model, inputs)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=2e-6)

    # Saved again by tapeflow: Keras's weight paths and shapes, the same layer configs, the same predictions.
    resaved = str(tmp_path / f"{name}.keras")
    model.save(resaved)
    assert _weights_layout(resaved) == _weights_layout(path)
    ours, theirs = _layer_configs(resaved), _layer_configs(path)
    for layer_name, config in theirs.items():
        if config.get("dtype") is not None and not isinstance(config["dtype"], str):
            assert ours[layer_name] == config, layer_name
    reloaded = tf.keras.models.load_model(resaved)
    for got, want in zip(_predict(reloaded, inputs), outputs):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_keras_weights_file_loads_into_a_block_built_in_tapeflow():
    tokens = tf.keras.Input((6, 8))
    memory = tf.keras.Input((5, 8))
    pad = tf.keras.Input((6, 6), dtype="bool")
    h, scores = L.MultiHeadAttention(2, 4, dropout=0.1)(tokens, tokens, attention_mask=pad,
                                                         return_attention_scores=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([tokens, h]))
    c, cross_scores = L.MultiHeadAttention(3, 2, value_dim=5, output_shape=8)(
        h, memory, use_causal_mask=True, return_attention_scores=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, c]))
    f = L.Dense(8)(L.Dense(16, activation="relu")(h))
    out = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, f]))
    model = tf.keras.Model([tokens, memory, pad], [out, scores, cross_scores])
    self_attention = next(layer for layer in model.layers if isinstance(layer, L.MultiHeadAttention))
    assert [tuple(w.shape) for w in self_attention.weights] == [(8, 2, 4), (2, 4)] * 3 + [(2, 4, 8), (8,)]
    model.load_weights(os.path.join(FIXTURES, "block.weights.h5"))
    for got, want in zip(_predict(model, _arrays("block", "x")), _arrays("block", "pred")):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=2e-6)

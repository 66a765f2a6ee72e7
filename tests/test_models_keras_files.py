"""Configs and weights written by real Keras 3.15 (tests/fixtures/keras_configs, taken from the
spec's .keras fixtures) rebuild into tapeflow models that predict what Keras predicted.

The weights are read here with h5py, walking the model as Keras's saving does
(layers/<snake_case class>[_k]/vars/<i>), through each layer's own
load_own_variables: the part of the format that belongs to layers.
"""
import json
import os

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.layers.backend import snake_case
from tapeflow.layers.serialization_lib import deserialize_keras_object, serialize_keras_object

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras_configs")


def load(name):
    with open(os.path.join(HERE, f"{name}_config.json")) as f:
        config = json.load(f)
    model = deserialize_keras_object(config)
    with h5py.File(os.path.join(HERE, f"{name}.weights.h5"), "r") as store:
        counts = {}
        for layer in model.layers:
            key = snake_case(type(layer).__name__)
            path = key if key not in counts else f"{key}_{counts[key]}"
            counts[key] = counts.get(key, 0) + 1
            group = store.get(f"layers/{path}/vars")
            if group is not None:
                layer.load_own_variables(group)
    return config, model


@pytest.mark.parametrize("name", ["m", "func", "sgd"])
def test_keras_files_rebuild_and_predict_as_keras(name):
    config, model = load(name)
    x = np.load(os.path.join(HERE, f"{name}_x.npy"))
    expected = np.load(os.path.join(HERE, f"{name}_pred.npy"))
    assert np.allclose(model.predict(x, verbose=0), expected, atol=1e-5)
    # Our config of the rebuilt model has the same layers and settings as Keras's.
    ours = json.loads(json.dumps(serialize_keras_object(model)))
    assert ours["class_name"] == config["class_name"] and ours["module"] == config["module"]
    theirs_layers = config["config"]["layers"]
    for a, b in zip(ours["config"]["layers"], theirs_layers):
        assert (a["class_name"], a["module"]) == (b["class_name"], b["module"])
        for key, value in b["config"].items():
            if key not in ("dtype", "name"):
                assert a["config"].get(key) == value, (a["class_name"], key)


def test_keras_compile_config_is_restored():
    _, model = load("m")
    assert model.compiled and isinstance(model.optimizer, tf.keras.optimizers.Adam)
    assert np.isclose(float(model.optimizer.learning_rate.numpy()), 1e-3)
    assert model.loss == "sparse_categorical_crossentropy"
    config = model.get_compile_config()
    assert config["loss"] == "sparse_categorical_crossentropy" and config["metrics"] == ["accuracy"]
    assert config["optimizer"]["class_name"] == "Adam"
    _, sgd = load("sgd")
    assert isinstance(sgd.optimizer, tf.keras.optimizers.SGD)

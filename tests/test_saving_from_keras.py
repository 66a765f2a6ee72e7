"""Files written by real Keras 3.15 and TF-Keras 2.21 (tests/fixtures/keras) load in tapeflow and
predict exactly what Keras predicted; optimizer state comes back with them."""
import os
import warnings

import h5py
import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
keras = tf.keras


def fixture(name):
    return os.path.join(HERE, name)


def data(stem):
    return np.load(fixture(f"{stem}_x.npy")), np.load(fixture(f"{stem}_pred.npy"))


def assert_predicts_as_keras(model, stem):
    x, expected = data(stem)
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)


def m_architecture(names=("dense", "batch_normalization", "dense_1")):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu", name=names[0]),
                             keras.layers.BatchNormalization(name=names[1]),
                             keras.layers.Dense(3, activation="softmax", name=names[2])], name="seq")


@pytest.mark.parametrize("stem", ["m", "func", "sgd"])
def test_load_model_keras_archive_predicts_as_keras(stem):
    model = keras.models.load_model(fixture(f"{stem}.keras"))
    assert_predicts_as_keras(model, stem)


def test_m_keras_restores_compile_and_adam_state():
    model = keras.models.load_model(fixture("m.keras"))
    assert model.compiled and isinstance(model.optimizer, keras.optimizers.Adam)
    assert model.loss == "sparse_categorical_crossentropy"
    assert model.get_compile_config()["metrics"] == ["accuracy"]
    with h5py.File(fixture("m.weights.h5")) as f:
        saved = [f[f"optimizer/vars/{i}"][()] for i in range(14)]
    state = [np.asarray(v) for v in model.optimizer.variables]
    assert len(state) == 14 and int(state[0]) == 2
    for ours, theirs in zip(state, saved):
        np.testing.assert_array_equal(ours, theirs)


def test_sgd_keras_restores_momentum_state():
    model = keras.models.load_model(fixture("sgd.keras"))
    assert isinstance(model.optimizer, keras.optimizers.SGD) and model.optimizer.momentum == 0.9
    assert model.loss == "mse" and len(model.optimizer.variables) == 4
    assert int(np.asarray(model.optimizer.iterations)) == 1


def test_load_model_compile_false_gives_uncompiled_model():
    model = keras.models.load_model(fixture("m.keras"), compile=False)
    assert not model.compiled and model.optimizer is None
    assert_predicts_as_keras(model, "m")


def test_load_weights_from_keras_weights_file_into_fresh_model():
    model = m_architecture()
    model.load_weights(fixture("m.weights.h5"))
    assert_predicts_as_keras(model, "m")


def test_load_weights_from_keras_archive():
    model = m_architecture()
    model.load_weights(fixture("m.keras"))
    assert_predicts_as_keras(model, "m")


def test_weights_file_fills_optimizer_that_was_never_built():
    model = m_architecture()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert not model.optimizer.built
    model.load_weights(fixture("m.weights.h5"))
    assert int(np.asarray(model.optimizer.iterations)) == 2
    with h5py.File(fixture("m.weights.h5")) as f:
        np.testing.assert_array_equal(np.asarray(model.optimizer.variables[2]), f["optimizer/vars/2"][()])


def test_functional_with_nested_sequential_weights_file():
    x = keras.Input((4,), name="x")
    block = keras.Sequential([keras.layers.Dense(3), keras.layers.BatchNormalization()], name="block")
    model = keras.Model(x, keras.layers.Dense(1, name="head")(block(x)), name="func")
    model.load_weights(fixture("func.weights.h5"))
    dense, bn = block.layers
    with h5py.File(fixture("func.weights.h5")) as f:
        np.testing.assert_array_equal(dense.kernel.numpy(), f["layers/sequential/layers/dense/vars/0"][()])
        np.testing.assert_array_equal(bn.moving_variance.numpy(),
                                      f["layers/sequential/layers/batch_normalization/vars/3"][()])
        np.testing.assert_array_equal(model.get_layer("head").bias.numpy(), f["layers/dense/vars/1"][()])


def test_legacy_h5_from_keras3_restores_model_and_optimizer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = keras.models.load_model(fixture("m.h5"))
    assert_predicts_as_keras(model, "m")
    assert int(np.asarray(model.optimizer.iterations)) == 2
    with h5py.File(fixture("m.h5")) as f:
        np.testing.assert_array_equal(np.asarray(model.optimizer.variables[-1]),
                                      f["optimizer_weights/adam/seq_dense_1_bias_velocity"][()])


def test_legacy_h5_from_tf_keras_2_with_its_optimizer_state():
    model = keras.models.load_model(fixture("tfk2.h5"))
    assert_predicts_as_keras(model, "tfk2")
    assert model.get_compile_config()["metrics"] == ["accuracy"]
    # TF-Keras 2 saved [iteration, m, v, ...] with no learning_rate: mapped onto Keras 3's order.
    with h5py.File(fixture("tfk2.h5")) as f:
        assert int(np.asarray(model.optimizer.iterations)) == int(f["optimizer_weights/iteration:0"][()])
        np.testing.assert_array_equal(np.asarray(model.optimizer.variables[2]),
                                      f["optimizer_weights/Adam/m/dense/kernel:0"][()])
        np.testing.assert_array_equal(np.asarray(model.optimizer.variables[3]),
                                      f["optimizer_weights/Adam/v/dense/kernel:0"][()])
    assert np.isclose(float(np.asarray(model.optimizer.learning_rate)), 1e-3)


def test_tf_keras_2_weights_load_by_order_into_differently_named_layers():
    model = m_architecture(names=("a", "b", "c"))
    model.load_weights(fixture("tfk2_weights.h5"))
    assert_predicts_as_keras(model, "tfk2")


def test_tf_keras_2_weights_load_by_name():
    model = m_architecture()
    model.load_weights(fixture("tfk2_weights.h5"), by_name=True)
    assert_predicts_as_keras(model, "tfk2")
    renamed = m_architecture(names=("dense", "other_bn", "dense_1"))
    before = renamed.get_layer("other_bn").get_weights()
    renamed.load_weights(fixture("tfk2_weights.h5"), by_name=True)
    # Only the layers whose names are in the file are filled.
    for a, b in zip(renamed.get_layer("other_bn").get_weights(), before):
        np.testing.assert_array_equal(a, b)
    with h5py.File(fixture("tfk2_weights.h5")) as f:
        np.testing.assert_array_equal(renamed.get_layer("dense").kernel.numpy(), f["dense/dense/kernel:0"][()])

"""Round trips through every format, custom classes, and training that continues after a reload
exactly as if it had never stopped."""
import os
import warnings

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def data(n=48, d=5, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)).astype(np.float32), rng.integers(0, classes, n)


def classifier(seed=1):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def same_weights(a, b):
    wa, wb = a.get_weights(), b.get_weights()
    assert len(wa) == len(wb)
    for x, y in zip(wa, wb):
        np.testing.assert_array_equal(x, y)


def save(model, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the legacy .h5 notice
        model.save(path)


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_training_continues_identically_after_reload(tmp_path, suffix):
    x, y = data()
    uninterrupted = classifier()
    resumed = keras.models.clone_model(uninterrupted)
    resumed.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                    metrics=["accuracy"])
    resumed.build((None, 5))
    resumed.set_weights(uninterrupted.get_weights())
    full = uninterrupted.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0)
    resumed.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    path = tmp_path / f"ckpt{suffix}"
    save(resumed, path)
    reloaded = keras.models.load_model(path)
    assert int(np.asarray(reloaded.optimizer.iterations)) == 6
    rest = reloaded.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    np.testing.assert_allclose(rest.history["loss"], full.history["loss"][2:], rtol=1e-6)
    same_weights(reloaded, uninterrupted)
    for a, b in zip(reloaded.optimizer.variables, uninterrupted.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_weights_file_round_trip_resumes_training(tmp_path):
    x, y = data()
    first = classifier()
    first.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    first.save_weights(tmp_path / "w.weights.h5")
    second = keras.models.clone_model(first)
    second.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    second.build((None, 5))
    second.load_weights(tmp_path / "w.weights.h5")
    same_weights(first, second)
    first.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    second.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    same_weights(first, second)


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_functional_model_round_trip(tmp_path, suffix):
    inputs = keras.Input((5,), name="features")
    a = keras.layers.Dense(8, activation="tanh")(inputs)
    b = keras.layers.Dense(8, activation="relu")(inputs)
    merged = keras.layers.Concatenate()([a, b])
    out = keras.layers.Dense(2)(keras.layers.Dropout(0.3)(merged))
    model = keras.Model(inputs, out, name="two_towers")
    model.compile(optimizer="sgd", loss="mse")
    x = data()[0]
    save(model, tmp_path / f"f{suffix}")
    loaded = keras.models.load_model(tmp_path / f"f{suffix}")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert isinstance(loaded.optimizer, keras.optimizers.SGD)


def test_unzipped_keras_directory_round_trip(tmp_path):
    model = classifier()
    model.fit(*data(), epochs=1, verbose=0)
    model.save(tmp_path / "m.keras", zipped=False)
    assert sorted(os.listdir(tmp_path / "m.keras")) == ["config.json", "metadata.json", "model.weights.h5"]
    loaded = keras.models.load_model(tmp_path / "m.keras")
    same_weights(model, loaded)


@keras.saving.register_keras_serializable(package="tapeflow_tests")
class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False, name="count")

    def call(self, x):
        return x * self.w * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def test_registered_custom_layer_round_trip(tmp_path):
    model = keras.Sequential([keras.Input((3,)), Scale(3.0), keras.layers.Dense(1)])
    model.layers[0].w.assign(np.array([1.0, 2.0, 3.0], np.float32))
    model.layers[0].count.assign(7.0)
    model.save(tmp_path / "s.keras")
    import json
    import zipfile
    with zipfile.ZipFile(tmp_path / "s.keras") as z:
        entry = json.loads(z.read("config.json"))["config"]["layers"][1]
    assert entry["registered_name"] == "tapeflow_tests>Scale"
    loaded = keras.models.load_model(tmp_path / "s.keras")
    assert isinstance(loaded.layers[0], Scale) and loaded.layers[0].factor == 3.0
    assert float(loaded.layers[0].count.numpy()) == 7.0
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


class Unregistered(keras.layers.Layer):
    def call(self, x):
        return x + 1.0


def test_custom_objects_rebuild_an_unregistered_class(tmp_path):
    model = keras.Sequential([keras.Input((2,)), Unregistered(), keras.layers.Dense(1)])
    model.save(tmp_path / "u.keras")
    with pytest.raises(TypeError, match="'Unregistered'"):
        keras.models.load_model(tmp_path / "u.keras")
    loaded = keras.models.load_model(tmp_path / "u.keras", custom_objects={"Unregistered": Unregistered})
    assert isinstance(loaded.layers[0], Unregistered)
    same_weights(model, loaded)


def test_subclassed_model_weights_round_trip(tmp_path):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.enc = keras.layers.Dense(4)
            self.blocks = [keras.layers.Dense(4), keras.layers.Dense(4)]
            self.dec = keras.layers.Dense(2)

        def call(self, x):
            x = self.enc(x)
            for block in self.blocks:
                x = block(x)
            return self.dec(x)
    x = np.ones((1, 3), np.float32)
    a, b = Net(), Net()
    a(x)
    b(x)
    a.save_weights(tmp_path / "n.weights.h5")
    b.load_weights(tmp_path / "n.weights.h5")
    same_weights(a, b)


def test_skip_mismatch_loads_what_matches(tmp_path):
    source = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4), keras.layers.Dense(2)])
    source.save_weights(tmp_path / "w.weights.h5")
    target = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4), keras.layers.Dense(3)])
    before = target.layers[1].get_weights()
    with pytest.warns(UserWarning, match="Skipping loading"):
        target.load_weights(tmp_path / "w.weights.h5", skip_mismatch=True)
    np.testing.assert_array_equal(target.layers[0].kernel.numpy(), source.layers[0].kernel.numpy())
    np.testing.assert_array_equal(target.layers[1].kernel.numpy(), before[0])


@keras.saving.register_keras_serializable(package="tapeflow_tests")
class EncoderDecoder(keras.Model):
    def __init__(self, width=4, **kwargs):
        super().__init__(**kwargs)
        self.width = width
        self.enc = keras.layers.Dense(width, activation="relu")
        self.dec = keras.layers.Dense(2)

    def call(self, x):
        return self.dec(self.enc(x))

    def get_config(self):
        return {**super().get_config(), "width": self.width}


def test_registered_subclassed_model_round_trip_with_optimizer(tmp_path):
    x = data(16, 3)[0]
    y = np.stack([x.sum(1), x[:, 0]], 1)
    model = EncoderDecoder(6)
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    model.save(tmp_path / "ed.keras")
    loaded = keras.models.load_model(tmp_path / "ed.keras")
    assert isinstance(loaded, EncoderDecoder) and loaded.width == 6
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))

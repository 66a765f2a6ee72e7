"""Dataset.shuffle gives TensorFlow's orders, and a Keras fit on a shuffled dataset gives Keras's numbers
(tests/fixtures/tf_data_shuffle, written by TF 2.21 / Keras 3.15)."""
import json
import os

import numpy as np

import tapeflow as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "tf_data_shuffle", "orders.json")))
Dataset = tf.data.Dataset


def test_seeded_shuffles_give_tensorflows_orders():
    ref = REF["orders"]
    tf.random.set_seed(1)
    assert [int(v) for v in Dataset.range(10).shuffle(4, seed=7)] == ref["b4_s7"]
    assert [int(v) for v in Dataset.range(10).shuffle(10, seed=7)] == ref["b10_s7"]
    assert [int(v) for v in Dataset.range(10).shuffle(100, seed=7)] == ref["b100_s7"]
    ds = Dataset.range(6).shuffle(6, seed=3)
    assert [[int(v) for v in ds] for _ in range(3)] == ref["epochs"]          # reshuffled every iteration
    fixed = Dataset.range(6).shuffle(6, seed=3, reshuffle_each_iteration=False)
    assert [[int(v) for v in fixed] for _ in range(2)] == ref["no_reshuffle"]


def test_unseeded_shuffles_under_a_global_seed_and_composed_pipelines():
    ref = REF["orders"]
    tf.random.set_seed(5)
    assert [int(v) for v in Dataset.range(8).shuffle(8)] == ref["unseeded_g5"]
    assert [int(v) for v in Dataset.range(8).shuffle(8)] == ref["unseeded_g5_2"]
    assert [int(v) for v in Dataset.range(5).shuffle(3, seed=2).repeat(3)] == ref["repeat"]
    assert [v.numpy().tolist() for v in Dataset.range(20).shuffle(7, seed=9).batch(6)] == ref["batched"]
    slices = Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6], [7, 8]]).shuffle(4, seed=1)
    assert [v.numpy().tolist() for v in slices] == ref["tensor_slices"]
    generated = Dataset.from_generator(lambda: iter(range(9)), output_signature=tf.TensorSpec([], tf.int64))
    assert [int(v) for v in generated.shuffle(5, seed=4)] == ref["generator"]


def test_keras_fit_on_a_shuffled_dataset_gives_kerass_numbers():
    keras = tf.keras
    fit = REF["fit"]
    keras.utils.set_random_seed(2)
    x, y = np.asarray(fit["x"], np.float32), np.asarray(fit["y"], np.float32)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"), keras.layers.Dense(1)])
    model.compile("adam", "mse")
    history = model.fit(Dataset.from_tensor_slices((x, y)).shuffle(50).batch(8), epochs=3, verbose=0)
    np.testing.assert_allclose(history.history["loss"], fit["loss"], rtol=1e-6)
    for w, expected in zip(model.get_weights(), fit["weights"]):
        np.testing.assert_allclose(w, np.asarray(expected, np.float32), rtol=0, atol=1e-6)


def test_each_keras_loop_over_a_dataset_takes_kerass_shuffle_seeds():
    keras = tf.keras
    seen = []

    class Recorder(keras.Model):
        def test_step(self, data):
            seen.append(["e"] + np.asarray(data[0])[:, 0].astype(int).tolist()[:4])
            return {"n": 0.0}

        def train_step(self, data):
            seen.append(["t"] + np.asarray(data[0])[:, 0].astype(int).tolist()[:4])
            return {"n": 0.0}

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            seen.append(["p"] + np.asarray(x)[:, 0].astype(int).tolist()[:4])
            return x

    keras.utils.set_random_seed(2)
    inputs = keras.Input((1,))
    model = Recorder(inputs, keras.layers.Dense(1)(inputs))
    model.compile("sgd", "mse", run_eagerly=True)
    x = np.arange(12, dtype=np.float32).reshape(12, 1)
    ds = Dataset.from_tensor_slices((x, x)).shuffle(12, seed=5).batch(12)
    model.evaluate(ds, verbose=0)
    model.evaluate(ds, verbose=0)
    model.fit(ds, epochs=2, verbose=0, validation_data=ds)
    model.predict(ds, verbose=0)
    assert seen == REF["keras_passes"]

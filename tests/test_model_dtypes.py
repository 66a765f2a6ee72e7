"""Model-level dtype handling: a float64 Input stays float64 inside Sequential and functional models."""
import numpy as np

import tapeflow as tf


def test_float64_inputs_are_not_cast_down_by_the_models_policy():
    x = np.full((1, 1), 1 / 3)
    dense = tf.keras.layers.Dense(1, dtype="float64", kernel_initializer="ones")
    seq = tf.keras.Sequential([tf.keras.Input(shape=(1,), dtype="float64"), dense])
    inputs = tf.keras.Input(shape=(1,), dtype="float64")
    func = tf.keras.Model(inputs, tf.keras.layers.Dense(1, dtype="float64", kernel_initializer="ones")(inputs))
    for model in (seq, func):
        out = model(tf.constant(x)).numpy()
        assert out.dtype == np.float64 and out[0, 0] == 1 / 3


def test_float32_models_still_compute_in_float32_from_float64_data():
    model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
    assert model(np.ones((3, 2))).dtype == tf.float32
    assert model.predict(np.ones((3, 2)), verbose=0).dtype == np.float32

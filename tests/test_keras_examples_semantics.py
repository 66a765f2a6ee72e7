"""Keras 3.15 semantics that keras.io examples rely on (found by replaying them; observed on Keras 3.15 + TF 2.21)."""
import numpy as np

import tapeflow as tf
from tapeflow import keras


def test_dense_activation_set_to_none_is_skipped():
    # grad_cam: `model.layers[-1].activation = None` to read the logits
    inp = keras.Input((3,))
    dense = keras.layers.Dense(2, activation="softmax")
    model = keras.Model(inp, dense(inp))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    dense.activation = None
    logits = model.predict(x, verbose=0)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(logits, x @ kernel + bias, rtol=1e-6)

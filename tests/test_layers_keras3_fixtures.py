"""Models saved by real Keras 3.15.1 (tests/fixtures/keras3/make_fixtures.py) load and predict as Keras did."""
import os

import numpy as np
import pytest

import tapeflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3")


@pytest.mark.parametrize("name", ["convnet", "sequence", "images", "volumes"])
def test_keras_file_predicts_as_keras(name):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    x = np.load(os.path.join(FIXTURES, f"{name}_x.npy"))
    expected = np.load(os.path.join(FIXTURES, f"{name}_pred.npy"))
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)

"""Dropout masks equal Keras 3.15's on TensorFlow 2.21 (tests/fixtures/keras3_dropout, written by real Keras):
the layer's SeedGenerator, Keras's seed reduction modulo 2**31 - 2 and TensorFlow's stateless_dropout."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import keras_scenarios as S  # noqa: E402

keras = tf.keras
REF = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "keras3_dropout", "dropout.json")))
X = np.arange(1, 21, dtype=np.float32).reshape(4, 5) / 4


def test_default_seed_after_set_random_seed_gives_keras_masks_call_after_call():
    keras.utils.set_random_seed(42)
    layer = keras.layers.Dropout(0.5)
    for expected in REF["global_seed_42"]:
        np.testing.assert_array_equal(layer(X, training=True).numpy(), expected)


@pytest.mark.parametrize("seed, rate", [(7, 0.3), (2 ** 33 + 5, 0.5), (2 ** 31 - 1, 0.25)])
def test_seeded_layers_give_keras_masks(seed, rate):
    layer = keras.layers.Dropout(rate, seed=seed)
    for expected in REF[f"seed_{seed}_rate_{rate}"]:
        np.testing.assert_array_equal(layer(X, training=True).numpy(), expected)


def test_noise_shape_and_traced_calls_give_keras_masks():
    layer = keras.layers.Dropout(0.5, noise_shape=(None, 1), seed=5)
    np.testing.assert_array_equal(layer(X, training=True).numpy(), REF["noise_shape"])
    layer = keras.layers.Dropout(0.5, seed=3)
    step = tf.function(lambda v: layer(v, training=True))
    for expected in REF["tf_function"]:        # the generator's state advances inside the graph too
        np.testing.assert_array_equal(step(tf.constant(X)).numpy(), expected)


def test_inference_is_the_identity_and_the_state_is_not_a_weight():
    layer = keras.layers.Dropout(0.5, seed=1)
    np.testing.assert_array_equal(layer(X, training=False).numpy(), X)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2), layer])
    assert len(model.weights) == 2 and layer.weights == []


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_stateless_dropout_equals_tensorflows(dtype):
    out = tf.nn.experimental.stateless_dropout(tf.constant(X.astype(dtype)), 0.4, seed=[11, 12])
    assert out.dtype == dtype
    expected = np.asarray(REF["stateless_dropout"][dtype], dtype)    # float16 stored as its float32 values
    np.testing.assert_array_equal(out.numpy(), expected)
    shaped = tf.nn.experimental.stateless_dropout(tf.constant(X), 0.5, seed=[1, 2], noise_shape=[1, 5])
    np.testing.assert_array_equal(shaped.numpy(), REF["stateless_dropout"]["noise_shape"])


def test_noise_layers_draw_kerass_noise():
    assert S.noise_layer_outputs(keras) == REF["noise_layers"]


@pytest.mark.parametrize("kind, name", [("rnn", n) for n in sorted(S.RNN_LAYERS)] +
                         [("conv_lstm", n) for n in sorted(S.CONV_LSTM_LAYERS)])
def test_recurrent_layers_draw_kerass_dropout_masks(kind, name):
    """Keras's seed order (initializers and the cell's SeedGenerator), masks drawn at every call, one per gate
    with recurrent dropout (ConvLSTM: always): weights, inference and training outputs equal Keras's to float32
    rounding."""
    scenario = S.rnn_layer_outputs if kind == "rnn" else S.conv_lstm_outputs
    ref, got = REF[kind][name], scenario(keras, name)
    for key in ("weights", "training"):
        for a, b in zip(got[key], ref[key]):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["inference"], ref["inference"], rtol=0, atol=1e-6)

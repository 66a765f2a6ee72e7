"""Shuffles and categorical samples equal TensorFlow's and Keras's for the same seeds
(tests/fixtures/tf_random_orders, written by TF 2.21 / Keras 3.15)."""
import json
import os

import numpy as np

import tapeflow as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "tf_random_orders", "orders.json")))
LOGITS = np.array([[0.0, -np.inf, 1.0, 2.0], [5.0, 1.0, -1.0, 0.0], [0.3, 0.3, 0.3, 0.3]], np.float32)
CALLS = [(2, 6), (2, 6), (3, 5), (1, 1), (2, 300)]


def test_stateless_shuffle_gives_tensorflows_orders():
    got = [tf.random.experimental.stateless_shuffle(tf.range(n), seed=seed).numpy().tolist()
           for n, seed in [(6, [3, 0]), (10, [1, 2]), (1000, [7, 9]), (1, [1, 1])]]
    assert got == REF["stateless_shuffle"]
    rows = tf.random.experimental.stateless_shuffle(tf.reshape(tf.range(12), (6, 2)), seed=[4, 5])
    assert rows.numpy().tolist() == REF["stateless_shuffle_rows"]


def test_stateless_categorical_gives_tensorflows_samples():
    got = [tf.random.stateless_categorical(tf.zeros((3, 4)), n, seed=[1, 2]).numpy().tolist() for n in (5, 7, 1)]
    assert got == REF["stateless_categorical"]
    samples = tf.random.stateless_categorical(LOGITS, 10, seed=[3, 4])
    assert samples.dtype == tf.int64 and samples.numpy().tolist() == REF["stateless_categorical_logits"]


def test_stateful_categorical_follows_tensorflows_stream_from_call_to_call():
    tf.random.set_seed(1)
    assert [tf.random.categorical(tf.zeros((2, 4)), 6).numpy().tolist() for _ in range(2)] == \
        REF["categorical_unseeded"]
    assert [tf.random.categorical(tf.zeros((rows, 4)), n, seed=5).numpy().tolist() for rows, n in CALLS] == \
        REF["categorical_op_seed_5"]


def test_keras_random_shuffle_and_categorical_give_kerass_values():
    keras = tf.keras
    assert np.asarray(keras.random.shuffle(np.arange(10), seed=3)).tolist() == REF["keras_shuffle"][0]
    assert np.asarray(keras.random.shuffle(np.arange(12).reshape(3, 4), axis=1, seed=3)).tolist() == \
        REF["keras_shuffle"][1]
    assert np.asarray(keras.random.categorical(LOGITS, 6, seed=2)).tolist() == REF["keras_categorical"]

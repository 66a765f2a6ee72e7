"""Dataset.shuffle gives TensorFlow's orders, and a Keras fit on a shuffled dataset gives Keras's numbers
(tests/fixtures/tf_data_shuffle, written by TF 2.21 / Keras 3.15)."""
import json
import os
import sys

import numpy as np

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import keras_scenarios as S  # noqa: E402

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
    fit = REF["fit"]
    loss, weights = S.dataset_fit(tf.keras, tf, np.asarray(fit["x"], np.float32), np.asarray(fit["y"], np.float32))
    np.testing.assert_allclose(loss, fit["loss"], rtol=1e-6)
    for w, expected in zip(weights, fit["weights"]):
        np.testing.assert_allclose(w, expected, rtol=0, atol=1e-6)


def test_each_keras_loop_over_a_dataset_takes_kerass_shuffle_seeds():
    assert S.loop_passes(tf.keras, tf) == REF["keras_passes"]

"""Seeded Keras code gives Keras's numbers: initializers, a model's initial weights after
keras.utils.set_random_seed, and a short fit with Dropout (tests/fixtures/keras3_seeding, written by Keras 3.15
on TensorFlow 2.21)."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import keras_scenarios as S  # noqa: E402

keras = tf.keras
I = keras.initializers
REF = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "keras3_seeding", "seeding.json")))
INITIALIZERS = S.seeded_initializers(keras)
EXACT = sorted(set(INITIALIZERS) - {"Orthogonal"})


@pytest.mark.parametrize("name", EXACT)
def test_seeded_initializers_give_keras_values(name):
    np.testing.assert_array_equal(INITIALIZERS[name]()((5, 6)), np.asarray(REF["initializers"][name], np.float32))


def test_orthogonal_equals_keras_to_float32_rounding():
    # the QR factorisation is LAPACK's here and Eigen's in TensorFlow: equal up to rounding
    np.testing.assert_allclose(I.Orthogonal(gain=1.5, seed=17)((5, 6)), REF["initializers"]["Orthogonal"],
                               rtol=0, atol=1e-6)


def test_an_unseeded_initializer_takes_its_seed_when_made_and_repeats_its_values():
    keras.utils.set_random_seed(3)
    unseeded = I.GlorotUniform()
    assert unseeded.get_config()["seed"] is None
    for expected in REF["unseeded_twice"]:
        np.testing.assert_array_equal(unseeded((3, 4)), np.asarray(expected, np.float32))


def test_set_random_seed_gives_kerass_initial_weights_and_fit():
    keras.utils.set_random_seed(1)
    model = S.dropout_model(keras)
    for w, expected in zip(model.get_weights(), REF["initial_weights"]):
        np.testing.assert_array_equal(w, np.asarray(expected, np.float32))
    fit = REF["fit"]
    model.compile("adam", "mse")
    history = model.fit(np.asarray(fit["x"], np.float32), np.asarray(fit["y"], np.float32), batch_size=16,
                        epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], fit["loss"], rtol=1e-6)
    for w, expected in zip(model.get_weights(), fit["weights"]):
        np.testing.assert_allclose(w, np.asarray(expected, np.float32), rtol=0, atol=1e-6)


def test_tf_random_set_seed_alone_does_not_fix_keras_initial_weights_python_random_does():
    import random

    def initial(seed_fn):
        seed_fn(42)
        return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)]).get_weights()[0]
    # as in Keras 3: its initializers take their seeds from Python's random module
    assert np.array_equal(initial(random.seed), initial(random.seed))
    assert np.array_equal(initial(keras.utils.set_random_seed), initial(keras.utils.set_random_seed))


def test_unseeded_keras_random_draws_follow_kerass_global_seed_generator():
    import random
    keras.utils.set_random_seed(5)
    draws = [keras.random.normal((3,)), keras.random.uniform((3,)), keras.random.normal((2, 2))]
    random.seed(5)
    keras.backend.clear_session()
    draws.append(keras.random.normal((3,)))
    for draw, expected in zip(draws, REF["global_draws"]):
        np.testing.assert_array_equal(np.asarray(draw), np.asarray(expected, np.float32))


def test_shuffled_fit_trains_on_kerass_batches_and_gives_its_numbers():
    assert S.fit_batches(keras) == REF["fit_batches"]      # Keras 3.15 on TF: the same order in every epoch

    keras.utils.set_random_seed(1)
    model = S.dropout_model(keras)
    model.compile("adam", "mse")
    fit = REF["fit"]
    history = model.fit(np.asarray(fit["x"], np.float32), np.asarray(fit["y"], np.float32), batch_size=16,
                        epochs=3, verbose=0)
    np.testing.assert_allclose(history.history["loss"], REF["fit_shuffled"]["loss"], rtol=1e-6)
    for w, expected in zip(model.get_weights(), REF["fit_shuffled"]["weights"]):
        np.testing.assert_allclose(w, np.asarray(expected, np.float32), rtol=0, atol=1e-6)


def test_tf_random_shuffle_gives_tensorflows_orders():
    ref = REF["shuffle"]
    tf.random.set_seed(1)
    assert tf.random.shuffle(tf.range(10)).numpy().tolist() == ref["unseeded"][0]
    assert tf.random.uniform([2]).numpy().tolist() == ref["unseeded"][1]
    assert tf.random.shuffle(tf.range(10)).numpy().tolist() == ref["unseeded"][2]
    assert [tf.random.shuffle(tf.range(n), seed=4).numpy().tolist() for n in (10, 10, 7, 1000)] == ref["op_seed_4"]
    assert tf.random.shuffle(tf.reshape(tf.range(12), (6, 2)), seed=9).numpy().tolist() == ref["rows"]

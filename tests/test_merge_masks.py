"""Merging layers combine and apply masks as Keras 3 does: outputs and output masks written by real Keras 3
(tests/fixtures/keras3_masks/make_fixtures.py, merge_masks.npz) on inputs masked by Embedding(mask_zero=True)."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.layers.layer import get_keras_mask, set_keras_mask
from gradcheck import check_gradients

L = tf.keras.layers
DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras3_masks", "merge_masks.npz"))
CASES = [k for k in DATA.files if k[0].isupper() and not k.endswith("_mask")]


def _model(layer, sources):
    id_inputs = [tf.keras.Input((7,), dtype="int32") for _ in range(3)]
    dense_input = tf.keras.Input((7, 2))
    embedded = []
    for k, i in enumerate(id_inputs):
        embedding = L.Embedding(6, 2, mask_zero=True)
        embedded.append(embedding(i))
        embedding.set_weights([DATA["table"] * (k + 1)])
    everything = embedded + [dense_input]
    return tf.keras.Model(id_inputs + [dense_input], layer([everything[s] for s in sources]))


def _feed():
    return [DATA["ids_0"], DATA["ids_1"], DATA["ids_2"], DATA["dense"]]


@pytest.mark.parametrize("key", CASES)
def test_merge_output_and_mask_match_keras(key):
    parts = key.split("_")
    name, sources = parts[0], [int(p) for p in parts[1:] if p.isdigit()]
    layer = L.Concatenate(axis=int(parts[-1][4:])) if name == "Concatenate" else getattr(L, name)()
    out = _model(layer, sources)(_feed())
    np.testing.assert_allclose(out.numpy(), DATA[key], rtol=1e-6)
    expected_mask = DATA[key + "_mask"]
    mask = get_keras_mask(out)
    if expected_mask.ndim == 0:
        assert mask is None
    else:
        np.testing.assert_array_equal(mask.numpy().astype("int8"), expected_mask)


def test_the_fixture_discriminates():
    """Maximum, Minimum and Multiply with masks differ from the plain elementwise op; Add does not."""
    embedded = [DATA["table"][DATA[f"ids_{k}"]] * (k + 1) for k in range(3)]
    assert not np.allclose(DATA["Maximum_0_1_2"], np.maximum(np.maximum(*embedded[:2]), embedded[2]))
    assert not np.allclose(DATA["Multiply_0_1"], embedded[0] * embedded[1])
    np.testing.assert_allclose(DATA["Add_0_1"], embedded[0] + embedded[1])


def _masked(values, mask):
    values = tf.constant(values)
    set_keras_mask(values, tf.constant(mask))
    return values


@pytest.mark.parametrize("cls", [L.Maximum, L.Minimum, L.Multiply])
def test_masked_merge_gradients(cls):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    mask_a = np.array([[1, 0, 1, 0], [0, 1, 1, 0]], bool)
    mask_b = np.array([[1, 1, 0, 0], [0, 1, 0, 1]], bool)
    layer = cls(dtype="float64")   # float64 throughout, for the finite differences
    check_gradients(lambda x, y: layer([x, y], mask=[tf.constant(mask_a), tf.constant(mask_b)]), a, b)


def test_merge_of_integer_inputs_with_masks():
    out = L.Maximum()([tf.constant([[3, -1]]), tf.constant([[1, 5]])],
                      mask=[tf.constant([[True, False]]), tf.constant([[False, False]])])
    np.testing.assert_array_equal(out.numpy(), [[3, -1]])


def test_a_mask_list_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="one entry per input"):
        L.Add().compute_mask([tf.ones((1, 2)), tf.ones((1, 2))], [tf.constant([[True, False]])])

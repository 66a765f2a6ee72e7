"""Text preprocessing layers saved by real Keras 3.15.1 (tests/fixtures/keras3_attention/make_text_fixtures.py):
tapeflow reads their vocabularies (assets) and tf_idf weights, gives the same outputs, and writes the same
file layout back."""
import io
import os
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_attention")
CASES = ["tv_int", "tv_int_ragged", "tv_chars_count", "tv_multi_hot", "tv_tf_idf", "tv_tokens",
         "tv_given_vocabulary", "sl_int_mask", "sl_one_hot", "sl_multi_hot", "sl_count_padded", "sl_tf_idf",
         "sl_tf_idf_given", "sl_oov3", "sl_no_oov", "il_int", "il_oov3_mask", "il_count", "il_invert", "sl_invert"]


def _load(name, kind):
    return np.load(os.path.join(FIXTURES, f"{name}_{kind}.npz"), allow_pickle=False)


def _as_numpy(tensor):
    value = tensor.numpy()
    if value.dtype == object:
        return np.array([v.decode("utf-8") for v in value.ravel()]).reshape(value.shape)
    return value


def _layout(path):
    """(asset member names and contents, {h5 dataset: values}) of a .keras file."""
    with zipfile.ZipFile(path) as archive:
        assets = {n: archive.read(n) for n in archive.namelist() if n.startswith("assets/")}
        weights = archive.read("model.weights.h5")
    datasets = {}
    with h5py.File(io.BytesIO(weights), "r") as h5:
        h5.visititems(lambda n, o: datasets.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return assets, datasets


@pytest.mark.parametrize("name", CASES)
def test_keras_text_layer_file_loads_and_encodes_as_keras(name, tmp_path):
    path = os.path.join(FIXTURES, f"{name}.keras")
    layer = tf.keras.models.load_model(path).layers[-1]
    x, expected = _load(name, "x")["x"], _load(name, "pred")
    assert [str(v) for v in layer.get_vocabulary()] == list(expected["vocabulary"])
    got = _as_numpy(layer(x))
    assert got.shape == expected["y"].shape
    if got.dtype.kind == "U":
        np.testing.assert_array_equal(got, expected["y"])
    else:
        np.testing.assert_allclose(got, expected["y"], rtol=1e-6, atol=1e-7)

    # Written back by tapeflow: the same vocabulary files and variables, in the same places.
    model = tf.keras.models.load_model(path)
    resaved = str(tmp_path / f"{name}.keras")
    model.save(resaved)
    ours, theirs = _layout(resaved), _layout(path)
    assert ours[0] == theirs[0]
    assert sorted(ours[1]) == sorted(theirs[1])
    for key, value in theirs[1].items():
        np.testing.assert_array_equal(ours[1][key], value)


def test_keras_text_vectorization_into_embedding_predicts_as_keras():
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "tv_embedding.keras"))
    x, expected = _load("tv_embedding", "x")["x"], _load("tv_embedding", "pred")
    np.testing.assert_array_equal(model.layers[1](x).numpy(), expected["tokens"])
    np.testing.assert_allclose(model.predict(x, verbose=0), expected["y"], rtol=1e-5, atol=1e-6)


def test_fingerprint64_buckets_as_tensorflow():
    from tapeflow.layers.preprocessing.farmhash import fingerprint64
    reference = _load("farmhash", "tf")   # tf.strings.to_hash_bucket_fast(data, 2**63 - 1)
    for data, bucket in zip(reference["data"], reference["buckets"]):
        assert fingerprint64(bytes.fromhex(str(data))) % (2 ** 63 - 1) == int(bucket), len(data) // 2

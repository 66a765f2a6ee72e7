"""StringLookup, IntegerLookup and TextVectorization: adapt sources, vocabularies, shapes, errors, training a text
model with fit, saving and reloading, and files with bad vocabulary data."""
import json
import os
import shutil
import zipfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError

L = tf.keras.layers
TEXTS = ["The cat sat.", "the dog, ran!", "a cat ran", "Dogs and cats"]


def _strings(tensor):
    return [v.decode("utf-8") for v in tensor.numpy().ravel()]


# ------------------------------------------------------------------------ adapt ---
def test_adapt_reads_lists_arrays_tensors_and_datasets_alike():
    expected = None
    sources = [TEXTS, np.array(TEXTS), tf.constant(TEXTS), tf.data.Dataset.from_tensor_slices(TEXTS).batch(3),
               tf.data.Dataset.from_tensor_slices(TEXTS)]
    for source in sources:
        layer = L.TextVectorization()
        layer.adapt(source)
        vocabulary = layer.get_vocabulary()
        expected = expected or vocabulary
        assert vocabulary == expected
    # Counts first, ties in descending order of the term; the mask and OOV tokens lead.
    assert expected == ["", "[UNK]", "the", "ran", "cat", "sat", "dogs", "dog", "cats", "and", "a"]
    for source, kwargs in ((np.array(TEXTS), dict(batch_size=1, steps=2)),
                           (tf.data.Dataset.from_tensor_slices(TEXTS).batch(1), dict(steps=2))):
        layer = L.TextVectorization()
        layer.adapt(source, **kwargs)   # the first two texts only
        assert layer.get_vocabulary(include_special_tokens=False) == ["the", "sat", "ran", "dog", "cat"]


def test_adapt_replaces_the_vocabulary_and_respects_max_tokens():
    layer = L.StringLookup(max_tokens=4)
    layer.adapt([["a", "b", "b", "c", "c", "c"]])
    assert layer.get_vocabulary() == ["[UNK]", "c", "b", "a"]
    layer.adapt([["x", "y", "y"]])
    assert layer.get_vocabulary() == ["[UNK]", "y", "x"]
    assert layer.vocabulary_size() == 3


# ------------------------------------------------------------------- vocabulary ---
def test_set_vocabulary_accepts_leading_special_tokens_and_rejects_bad_ones():
    layer = L.StringLookup(mask_token="[M]")
    layer.set_vocabulary(["[M]", "[UNK]", "x", "y"])
    assert layer.get_vocabulary() == ["[M]", "[UNK]", "x", "y"]
    layer.set_vocabulary(["x", "y"])
    assert layer.get_vocabulary() == ["[M]", "[UNK]", "x", "y"]
    with pytest.raises(ValueError, match="repeated term"):
        layer.set_vocabulary(["x", "y", "x"])
    with pytest.raises(ValueError, match="reserved mask token"):
        layer.set_vocabulary(["x", "[M]"])
    with pytest.raises(ValueError, match="reserved OOV token"):
        layer.set_vocabulary(["x", "[UNK]"])
    with pytest.raises(ValueError, match="larger than the maximum vocab size"):
        L.StringLookup(max_tokens=3).set_vocabulary(["a", "b", "c"])
    with pytest.raises(ValueError, match="idf_weights` must be set"):
        L.StringLookup(output_mode="tf_idf").set_vocabulary(["a"])
    with pytest.raises(ValueError, match="same length"):
        L.StringLookup(output_mode="tf_idf").set_vocabulary(["a", "b"], idf_weights=[1.0])


def test_lookup_and_invert_round_trip():
    vocabulary = ["apple", "pear", "plum"]
    forward = L.StringLookup(vocabulary=vocabulary, mask_token="")
    backward = L.StringLookup(vocabulary=vocabulary, mask_token="", invert=True)
    words = np.array([["pear", "fig", ""], ["plum", "apple", "kiwi"]])
    indices = forward(words)
    assert indices.dtype == tf.int64 and indices.numpy().tolist() == [[3, 1, 0], [4, 2, 1]]
    assert _strings(backward(indices)) == ["pear", "[UNK]", "", "plum", "apple", "[UNK]"]
    numbers = L.IntegerLookup(vocabulary=[10, 20], num_oov_indices=2)
    # Out-of-vocabulary values go to OOV index value mod 2.
    assert numbers(np.array([10, 20, 7, 8])).numpy().tolist() == [2, 3, 1, 0]


def test_text_vectorization_modes_and_symbolic_shapes():
    layer = L.TextVectorization(max_tokens=6, output_mode="multi_hot", pad_to_max_tokens=True)
    layer.adapt(TEXTS)
    out = layer(["cat cat zebra", "the"])
    assert out.shape == (2, 6) and out.dtype == tf.float32
    assert out.numpy().tolist() == [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0]]
    text = tf.keras.Input((), dtype="string")
    ints = L.TextVectorization(output_sequence_length=5)
    ints.adapt(TEXTS)
    symbolic = ints(text)
    assert tuple(symbolic.shape) == (None, 5) and symbolic.dtype == "int64"
    assert tuple(layer(tf.keras.Input((1,), dtype="string")).shape) == (None, 6)
    chars = L.TextVectorization(split="character", standardize=None)
    chars.adapt(["abca"])
    assert chars(["cab"]).numpy().tolist() == [[3, 2, 4]]


def test_callable_standardize_and_split_run_but_are_not_saved():
    # As in Keras, the callables get the batch as a string tensor (tf.strings functions work on it).
    layer = L.TextVectorization(standardize=tf.strings.upper, split=lambda s: tf.strings.split(s, "-"))
    layer.adapt(["a-b-b"])
    assert layer.get_vocabulary() == ["", "[UNK]", "B", "A"]
    assert layer(["b-a-c"]).numpy().tolist() == [[2, 3, 1]]
    with pytest.raises(ValueError, match="callable"):
        layer.get_config()


@pytest.mark.parametrize("make, message", [
    (lambda: L.TextVectorization(output_mode="one_hot"), "output_mode"),
    (lambda: L.TextVectorization(output_mode="count", output_sequence_length=3), "output_sequence_length"),
    (lambda: L.TextVectorization(standardize="upper"), "standardize"),
    (lambda: L.TextVectorization(ngrams=0), "ngrams"),
    (lambda: L.TextVectorization(ragged=True), "ragged"),
    (lambda: L.StringLookup(sparse=True), "sparse"),
    (lambda: L.StringLookup(output_mode="count", invert=True), "invert"),
    (lambda: L.IntegerLookup(oov_token="x"), "oov_token"),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_text_vectorization_rejects_rank_2_text_with_split():
    layer = L.TextVectorization()
    with pytest.raises(ValueError, match="input rank must be 1"):
        layer(np.array([["a b", "c"]]))


# ------------------------------------------------------------ training and files ---
def _sentiment_model():
    texts = np.array(["good movie great", "bad film awful", "great great good", "awful bad", "good", "bad"] * 8)
    labels = np.array([1, 0, 1, 0, 1, 0] * 8, dtype="float32")
    vectorize = L.TextVectorization(max_tokens=10, output_sequence_length=4)
    vectorize.adapt(texts)
    text = tf.keras.Input((), dtype="string")
    h = L.GlobalAveragePooling1D()(L.Embedding(10, 4)(vectorize(text)))
    model = tf.keras.Model(text, L.Dense(1, activation="sigmoid")(h))
    return model, texts, labels


def test_text_model_trains_with_fit_and_reloads_zipped_and_unzipped(tmp_path):
    tf.keras.utils.set_random_seed(3)
    model, texts, labels = _sentiment_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(texts, labels, epochs=15, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] == 1.0
    probe = np.array(["good great", "awful", "unknown words"])
    expected = model.predict(probe, verbose=0)
    for zipped in (True, False):
        path = str(tmp_path / f"sentiment_{zipped}.keras")
        model.save(path, zipped=zipped)
        restored = tf.keras.models.load_model(path)
        assert restored.layers[1].get_vocabulary() == model.layers[1].get_vocabulary()
        np.testing.assert_array_equal(restored.predict(probe, verbose=0), expected)


def _rewrite(src, dst, replace):
    """Copies the .keras archive ``src`` to ``dst`` with members replaced by ``replace`` ({name: bytes or None})."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = replace.get(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)


VOCAB = "assets/layers/string_lookup/vocabulary.txt"


def _lookup_file(tmp_path, output_mode="int", layer_class=L.StringLookup, data=None):
    layer = layer_class(output_mode=output_mode)
    layer.adapt(data if data is not None else [["a", "b", "b"]])
    model = tf.keras.Sequential([tf.keras.Input((3,), dtype="string" if layer_class is L.StringLookup else "int64"),
                                 layer])
    path = str(tmp_path / "lookup.keras")
    model.save(path)
    return path


@pytest.mark.parametrize("vocabulary, message", [
    (b"[UNK]\nb\nb", "repeated term"),
    (b"[UNK]\nb\n\xff\xfe", "not UTF-8"),
    (b"b\n[UNK]", "reserved OOV token"),
])
def test_bad_vocabulary_data_is_a_file_format_error(tmp_path, vocabulary, message):
    path = _lookup_file(tmp_path)
    bad = str(tmp_path / "bad.keras")
    _rewrite(path, bad, {VOCAB: vocabulary})
    with pytest.raises(FileFormatError, match=message) as info:
        tf.keras.models.load_model(bad)
    assert "bad.keras" in str(info.value) and "vocabulary.txt" in str(info.value)


def test_bad_integer_vocabulary_and_idf_weights_are_file_format_errors(tmp_path):
    path = _lookup_file(tmp_path, layer_class=L.IntegerLookup, data=np.array([[4, 5, 5]]))
    bad = str(tmp_path / "bad_int.keras")
    _rewrite(path, bad, {"assets/layers/integer_lookup/vocabulary.txt": b"-1\n5\nfive"})
    with pytest.raises(FileFormatError, match="not an integer"):
        tf.keras.models.load_model(bad)

    path = _lookup_file(tmp_path, output_mode="tf_idf")
    bad = str(tmp_path / "bad_idf.keras")
    _rewrite(path, bad, {VOCAB: b"[UNK]\nb\na\nc"})   # one more term than the file has idf weights
    with pytest.raises(FileFormatError, match="same length"):
        tf.keras.models.load_model(bad)


def test_a_config_naming_a_vocabulary_file_is_refused(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\nwords")
    path = str(tmp_path / "lookup.keras")
    tf.keras.Sequential([tf.keras.Input((2,), dtype="string"), L.StringLookup(vocabulary=["a", "b"])]).save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    config["config"]["layers"][1]["config"]["vocabulary"] = str(outside)
    bad = str(tmp_path / "bad.keras")
    _rewrite(path, bad, {"config.json": json.dumps(config).encode()})
    with pytest.raises(FileFormatError, match="never read"):
        tf.keras.models.load_model(bad)


def test_asset_links_in_an_unzipped_model_are_refused(tmp_path):
    model, _, _ = _sentiment_model()
    path = str(tmp_path / "model.keras")
    model.save(path, zipped=False)
    target = os.path.join(path, "assets", "layers", "text_vectorization", "_lookup_layer", "vocabulary.txt")
    outside = tmp_path / "outside.txt"
    shutil.copy(target, outside)
    os.remove(target)
    os.symlink(outside, target)
    with pytest.raises(FileFormatError, match="symbolic link"):
        tf.keras.models.load_model(path)


def test_a_term_with_a_line_break_cannot_be_saved(tmp_path):
    layer = L.StringLookup(vocabulary=None)
    layer.adapt([["two\nlines", "x"]])
    model = tf.keras.Sequential([tf.keras.Input((2,), dtype="string"), layer])
    with pytest.raises(ValueError, match="line break"):
        model.save(str(tmp_path / "m.keras"))
    assert not os.path.exists(tmp_path / "m.keras")


def test_lookup_adapts_rows_of_any_lengths_and_its_idf_weights_travel_in_a_weights_file(tmp_path):
    source = L.StringLookup(output_mode="tf_idf")
    source.adapt([["a", "b"], ["a", "c", "c"], ["c"]])
    # 3 documents: a and c are in 2 of them, b in 1; the OOV weight is the mean.
    idf = np.log1p(3 / (1 + np.array([2.0, 2.0, 1.0])))
    assert source.get_vocabulary() == ["[UNK]", "c", "a", "b"]
    np.testing.assert_allclose(source(np.array([["c", "c", "x"]])).numpy(),
                               [[idf.mean(), 2 * idf[0], 0, 0]], rtol=1e-6)
    model = tf.keras.Sequential([tf.keras.Input((3,), dtype="string"), source])
    model.save_weights(str(tmp_path / "lookup.weights.h5"))
    target = L.StringLookup(output_mode="tf_idf", vocabulary=["c", "a", "b"], idf_weights=[1.0, 1.0, 1.0])
    tf.keras.Sequential([tf.keras.Input((3,), dtype="string"), target]).load_weights(
        str(tmp_path / "lookup.weights.h5"))
    np.testing.assert_array_equal(target(np.array([["a", "b", "q"]])).numpy(),
                                  source(np.array([["a", "b", "q"]])).numpy())

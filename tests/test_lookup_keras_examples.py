"""Lookup and text layers as keras.io examples use them; expected shapes/values were printed by Keras 3.15
(TF 2.21) for the same calls."""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
STRINGS = np.array([["a"], ["b"], ["c"]])
INTS = np.array([[1], [2], [3]])
LOOKUPS = [(keras.layers.StringLookup, STRINGS, "string"), (keras.layers.IntegerLookup, INTS, "int64")]


@pytest.mark.parametrize("cls, data, dtype", LOOKUPS)
def test_binary_is_keras_2s_name_for_multi_hot(cls, data, dtype):
    layer = cls(output_mode="binary")
    assert layer.output_mode == "multi_hot" and layer.get_config()["output_mode"] == "multi_hot"
    layer.adapt(data)
    np.testing.assert_array_equal(layer(data[:2]).numpy(), [[0, 0, 0, 1], [0, 0, 1, 0]])
    assert layer(keras.Input((1,), dtype=dtype)).shape == (None, 4)


def test_binary_alias_in_text_vectorization_and_category_encoding():
    vectorize = keras.layers.TextVectorization(output_mode="binary")
    assert vectorize.get_config()["output_mode"] == "multi_hot"
    vectorize.adapt(["a b", "c"])
    np.testing.assert_array_equal(vectorize(["a c"]).numpy(), [[0, 1, 0, 1]])
    assert vectorize(keras.Input((), dtype="string")).shape == (None, 4)
    assert keras.layers.CategoryEncoding(num_tokens=3, output_mode="binary").get_config()["output_mode"] == "multi_hot"
    for layer in (lambda: keras.layers.Hashing(num_bins=3, output_mode="binary"),
                  lambda: keras.layers.Discretization(num_bins=3, output_mode="binary")):
        with pytest.raises(ValueError, match="binary"):   # Keras 3 rejects it there
            layer()


@pytest.mark.parametrize("cls, data, dtype", LOOKUPS)
@pytest.mark.parametrize("mode", ["multi_hot", "count", "one_hot", "tf_idf"])
def test_encoded_width_is_known_once_there_is_a_vocabulary(cls, data, dtype, mode):
    adapted = cls(output_mode=mode)
    adapted.adapt(data)
    assert adapted(keras.Input((1,), dtype=dtype)).shape == (None, 4)
    assert adapted(keras.Input((3,), dtype=dtype)).shape == ((None, 3, 4) if mode == "one_hot" else (None, 4))
    padded = cls(output_mode=mode, max_tokens=10, pad_to_max_tokens=True)
    padded.adapt(data)
    assert padded(keras.Input((1,), dtype=dtype)).shape == (None, 10)
    if mode != "tf_idf":
        assert cls(output_mode=mode)(keras.Input((1,), dtype=dtype)).shape == (None, None)
        given = cls(output_mode=mode, vocabulary=data[:, 0].tolist())
        assert given(keras.Input((1,), dtype=dtype)).shape == (None, 4)


def test_adapted_multi_hot_feeds_a_dense_layer():
    # structured_data_classification_from_scratch: lookup -> concatenate -> Dense
    lookup = keras.layers.StringLookup(output_mode="multi_hot")
    lookup.adapt(STRINGS)
    inputs = keras.Input(shape=(1,), dtype="string")
    model = keras.Model(inputs, keras.layers.Dense(2)(lookup(inputs)))
    assert model.output_shape == (None, 2)
    kernel, bias = model.layers[-1].get_weights()
    np.testing.assert_allclose(model.predict(np.array([["b"], ["z"]]), verbose=0),
                               np.stack([kernel[2], kernel[0]]) + bias, rtol=1e-6)


def test_text_vectorization_multi_hot_width_is_the_vocabulary_size():
    vectorize = keras.layers.TextVectorization(output_mode="multi_hot")
    assert vectorize(keras.Input((), dtype="string")).shape == (None, None)
    vectorize.adapt(["a b", "c"])
    assert vectorize(keras.Input((), dtype="string")).shape == (None, 4)


def custom_standardization(input_data):   # text_classification_from_scratch's standardize
    lowercase = tf.strings.lower(input_data)
    return tf.strings.regex_replace(lowercase, "<br />", " ")


def test_text_vectorization_calls_a_custom_standardize_on_the_batch():
    seen = []

    def standardize(batch):
        seen.append(tuple(batch.shape))
        return custom_standardization(batch)
    vectorize = keras.layers.TextVectorization(standardize=standardize, output_sequence_length=4)
    vectorize.adapt(tf.data.Dataset.from_tensor_slices(["Hello<br />World", "hello there"]).batch(2))
    assert vectorize.get_vocabulary() == ["", "[UNK]", "hello", "world", "there"]   # Keras 3.15's
    np.testing.assert_array_equal(vectorize(tf.constant(["hello world"])).numpy(), [[2, 3, 0, 0]])
    np.testing.assert_array_equal(vectorize(np.array([["hello world"], ["x there"]])).numpy(),
                                  [[2, 3, 0, 0], [1, 4, 0, 0]])
    assert seen == [(2,), (1,), (2, 1)]   # the shapes Keras passes for these calls
    with pytest.raises(ValueError, match="same shape|shape it"):
        keras.layers.TextVectorization(standardize=lambda batch: tf.constant(["a"])).adapt(["x", "y"])


def test_end_to_end_string_model_with_custom_standardize_predicts_and_trains():
    vectorize = keras.layers.TextVectorization(standardize=custom_standardization, output_mode="multi_hot")
    texts = np.array(["Good<br />movie", "bad film", "good good", "BAD"])
    vectorize.adapt(texts)
    inputs = keras.Input((1,), dtype="string")
    dense = keras.layers.Dense(1, kernel_initializer="ones")
    model = keras.Model(inputs, dense(vectorize(inputs)))
    expected = vectorize(texts[:, None]).numpy().sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict(texts[:, None], verbose=0), expected)
    model.compile("sgd", "mse")
    history = model.fit(texts[:, None], np.array([1.0, 0.0, 1.0, 0.0]), epochs=2, batch_size=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_text_vectorization_split_callable_gets_the_batch_and_may_return_ragged_rows():
    vectorize = keras.layers.TextVectorization(split=tf.strings.split, output_sequence_length=3)
    vectorize.adapt(["a b", "c a"])
    assert vectorize.get_vocabulary() == ["", "[UNK]", "a", "c", "b"]   # Keras 3.15's
    np.testing.assert_array_equal(vectorize(np.array(["a c", "b"])).numpy(), [[2, 3, 0], [4, 0, 0]])


def test_string_lookup_maps_a_ragged_tensor_and_inverts_it_back():
    # The text-generation tutorial: ids_from_chars(tf.strings.unicode_split(...)) and chars_from_ids(ids).
    chars = tf.strings.unicode_split(["abc", "xy", ""], input_encoding="UTF-8")
    ids_from_chars = keras.layers.StringLookup(vocabulary=list("abcxyz"), mask_token=None)
    ids = ids_from_chars(chars)
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == "int64"
    assert ids.to_list() == [[1, 2, 3], [4, 5], []]   # TF 2.21's
    chars_from_ids = keras.layers.StringLookup(vocabulary=ids_from_chars.get_vocabulary(), invert=True,
                                               mask_token=None)
    back = chars_from_ids(ids)
    assert isinstance(back, tf.RaggedTensor) and back.to_list() == [[b"a", b"b", b"c"], [b"x", b"y"], []]
    assert tf.strings.reduce_join(back, axis=-1).numpy().tolist() == [b"abc", b"xy", b""]
    nested = ids_from_chars(tf.ragged.constant([[["a", "b"], ["c"]], [["x"]]]))
    assert nested.to_list() == [[[1, 2], [3]], [[4]]]
    masked = keras.layers.StringLookup(vocabulary=list("abc"), mask_token="")(tf.ragged.constant([["a", ""], ["zz"]]))
    assert masked.to_list() == [[2, 0], [1]]
    assert keras.layers.IntegerLookup(vocabulary=[1, 2])(tf.ragged.constant([[1, 5], [2]])).to_list() == [[1, 0], [2]]


def test_encoded_lookup_of_ragged_rows_matches_tensorflow():
    chars = tf.strings.unicode_split(["abc", "aa", ""], input_encoding="UTF-8")
    layer = lambda mode: keras.layers.StringLookup(vocabulary=list("abc"), output_mode=mode)  # noqa: E731
    np.testing.assert_array_equal(layer("multi_hot")(chars).numpy(), [[0, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(layer("count")(chars).numpy(), [[0, 1, 1, 1], [0, 2, 0, 0], [0, 0, 0, 0]])
    one_hot = layer("one_hot")(chars)
    assert one_hot.to_list() == [[[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], [[0, 1, 0, 0], [0, 1, 0, 0]], []]
    with pytest.raises(ValueError, match="ragged rank 1"):
        layer("multi_hot")(tf.ragged.constant([[["a"]], [["b"], ["c"]]]))


@pytest.mark.parametrize("mode, expected", [("multi_hot", [0, 1, 1, 0]), ("count", [0, 1, 2, 0]),
                                            ("tf_idf", [0.0, 1.0, 4.0, 0.0])])
def test_a_rank_1_input_is_one_sample_as_in_keras(mode, expected):
    kwargs = {"idf_weights": [1.0, 2.0, 3.0]} if mode == "tf_idf" else {}
    strings = keras.layers.StringLookup(vocabulary=list("abc"), output_mode=mode, **kwargs)
    np.testing.assert_array_equal(strings(np.array(["a", "b", "b"])).numpy(), expected)   # Keras 3.15's
    np.testing.assert_array_equal(strings(np.array("a")).numpy(), [0, 1, 0, 0])
    integers = keras.layers.IntegerLookup(vocabulary=[1, 2, 3], output_mode=mode, **kwargs)
    np.testing.assert_array_equal(integers(np.array([1, 2, 2])).numpy(), expected)
    assert strings(keras.Input((), dtype="string")).shape == (4,)
    with pytest.raises(ValueError, match="rank 0, 1 or 2"):
        strings(np.array([[["a"], ["b"]]]))

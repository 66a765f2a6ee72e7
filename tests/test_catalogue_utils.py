"""keras.utils additions: split_dataset (arrays, structures and tf.data datasets; int/float sizes; shuffle with a
seed) and the registry helpers (get_custom_objects, get_registered_name/object, CustomObjectScope)."""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
utils = keras.utils


def _rows(dataset):
    return list(dataset.as_numpy_iterator())


@pytest.mark.parametrize("left_size,right_size,expected", [
    (0.8, None, (8, 2)), (None, 0.25, (8, 2)), (3, None, (3, 7)), (None, 4, (6, 4)), (0.5, 2, (5, 2)),
    (0.26, 0.5, (3, 5)),
])
def test_split_sizes(left_size, right_size, expected):
    left, right = utils.split_dataset(np.arange(10), left_size=left_size, right_size=right_size)
    assert (int(left.cardinality()), int(right.cardinality())) == expected
    assert [int(v) for v in _rows(left)] == list(range(expected[0]))
    assert [int(v) for v in _rows(right)] == list(range(expected[0], expected[0] + expected[1]))


def test_split_structures_and_datasets_keep_pairs_together():
    x = np.arange(20, dtype="float32").reshape(10, 2)
    y = np.arange(10) * 10
    left, right = utils.split_dataset((x, y), left_size=0.7, shuffle=True, seed=3)
    pairs = _rows(left) + _rows(right)
    assert len(pairs) == 10
    for features, label in pairs:
        assert features[0] * 5 == label                 # each x row still with its own label
    assert sorted(int(label) for _, label in pairs) == list(y)
    assert [int(l) for _, l in pairs] != list(y)        # shuffled
    again_left, _ = utils.split_dataset((x, y), left_size=0.7, shuffle=True, seed=3)
    assert [int(l) for _, l in _rows(again_left)] == [int(l) for _, l in _rows(left)]

    dataset = tf.data.Dataset.from_tensor_slices({"a": x, "b": y})
    left, right = utils.split_dataset(dataset, right_size=3)
    assert [int(e["b"]) for e in _rows(right)] == [70, 80, 90]
    assert set(_rows(left)[0]) == {"a", "b"}


def test_split_dataset_errors():
    with pytest.raises(ValueError, match="at least one"):
        utils.split_dataset(np.arange(4))
    with pytest.raises(ValueError, match="add up to more"):
        utils.split_dataset(np.arange(4), left_size=3, right_size=2)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        utils.split_dataset(np.arange(4), left_size=1.5)
    with pytest.raises(ValueError, match=r"must be in \[1, 4\]"):
        utils.split_dataset(np.arange(4), left_size=5)
    with pytest.raises(ValueError, match="empty split"):
        utils.split_dataset(np.arange(4), left_size=0.1)
    with pytest.raises(ValueError, match="same length"):
        utils.split_dataset((np.arange(4), np.arange(5)), left_size=2)
    with pytest.raises(ValueError, match="infinite"):
        utils.split_dataset(tf.data.Dataset.range(3).repeat(), left_size=1)
    with pytest.raises(TypeError, match="`dataset` must be"):
        utils.split_dataset("abc", left_size=1)


def test_split_then_fit():
    x = np.random.default_rng(0).normal(size=(40, 3)).astype("float32")
    y = x.sum(1, keepdims=True)
    train, test = utils.split_dataset((x, y), left_size=0.75, shuffle=True, seed=0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(train.batch(10), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert np.isfinite(model.evaluate(test.batch(10), verbose=0))


def test_registry_helpers():
    @utils.register_keras_serializable(package="CatalogueUtils")
    def twice(x):
        return 2 * x
    assert utils.get_registered_name(twice) == "CatalogueUtils>twice"
    assert utils.get_registered_object("CatalogueUtils>twice") is twice
    assert utils.get_custom_objects()["CatalogueUtils>twice"] is twice
    with utils.CustomObjectScope({"thrice": len}):
        assert utils.get_registered_object("thrice") is len
    assert utils.get_registered_object("thrice") is None
    x, y, w = utils.unpack_x_y_sample_weight(utils.pack_x_y_sample_weight(1, 2))
    assert (x, y, w) == (1, 2, None)

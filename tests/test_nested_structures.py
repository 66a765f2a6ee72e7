"""One nested-structure helper (issue 12): the layers' tree is the engine's nest, so flattening, mapping and
packing agree on one leaf order (dict values by sorted key), and dict outputs keep their keys' values."""
import collections

import numpy as np

import tapeflow as tf
from tapeflow.layers.utils import tree


def test_map_structure_visits_leaves_in_the_order_flatten_lists_them():
    structure = {"zeta": [1, {"b": 2, "a": 3}], "alpha": (4, 5), "mid": 6}
    visited = []
    mapped = tree.map_structure(lambda v: visited.append(v) or v * 10, structure)
    assert visited == tree.flatten(structure) == tf.nest.flatten(structure) == [4, 5, 6, 1, 3, 2]
    assert mapped == {"zeta": [10, {"b": 20, "a": 30}], "alpha": (40, 50), "mid": 60}
    assert list(mapped) == ["zeta", "alpha", "mid"] and list(mapped["zeta"][1]) == ["b", "a"]
    leaves = iter(tree.flatten(structure))
    assert tree.map_structure(lambda _: next(leaves), structure) == structure


def test_map_structure_keeps_namedtuples_and_maps_several_structures():
    Point = collections.namedtuple("Point", ["y", "x"])
    assert tree.map_structure(lambda a, b: a + b, Point(1, {"k": 2}), Point(10, {"k": 20})) == Point(11, {"k": 22})


def test_map_shape_structure_keeps_shapes_whole():
    assert tree.map_shape_structure(len, {"b": (None, 3), "a": [(2, 4, 5), (7,)]}) == {"b": 2, "a": [3, 1]}


def _dict_output_model():
    inputs = tf.keras.Input((2,))
    wide = tf.keras.layers.Dense(3, name="wide")(inputs)
    narrow = tf.keras.layers.Dense(1, name="narrow")(inputs)
    return tf.keras.Model(inputs, {"zeta": wide, "alpha": narrow})   # keys not in sorted order


def test_a_functional_model_returns_each_dict_output_under_its_own_key():
    model = _dict_output_model()
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    wide, narrow = model.get_layer("wide"), model.get_layer("narrow")
    expected = {"zeta": wide(x).numpy(), "alpha": narrow(x).numpy()}
    called = model(x)
    assert list(called) == ["zeta", "alpha"]
    for key, value in expected.items():
        np.testing.assert_array_equal(called[key].numpy(), value)
    predicted = model.predict(x, batch_size=3, verbose=0)
    for key, value in expected.items():
        np.testing.assert_allclose(predicted[key], value, rtol=1e-6)
    spec = model.compute_output_spec(tf.keras.KerasTensor((None, 2)))
    assert (tuple(spec["zeta"].shape), tuple(spec["alpha"].shape)) == ((None, 3), (None, 1))

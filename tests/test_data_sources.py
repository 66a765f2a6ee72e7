"""tf.data sources, element_spec, cardinality, iteration: the outputs printed in TensorFlow's docs."""
import itertools

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework import nest

Dataset = tf.data.Dataset


def values(dataset):
    """The elements as Python values (lists, ints, floats, bytes) in their structure."""
    return [nest.map_structure(lambda v: np.asarray(v).tolist(), e) for e in dataset.as_numpy_iterator()]


def test_import_tapeflow_does_not_load_tf_data():
    import subprocess
    import sys
    code = ("import sys, tapeflow; print('tapeflow.data' in sys.modules); tapeflow.data; "
            "print('tapeflow.data' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_range_as_documented():
    assert values(Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(2, 5)) == [2, 3, 4]
    assert values(Dataset.range(1, 5, 2)) == [1, 3]
    assert values(Dataset.range(1, 5, -2)) == []
    assert values(Dataset.range(5, 1)) == []
    assert values(Dataset.range(5, 1, -2)) == [5, 3]
    ints = list(Dataset.range(2, 5, output_type=tf.int32).as_numpy_iterator())
    assert ints == [2, 3, 4] and all(v.dtype == np.int32 for v in ints)
    floats = list(Dataset.range(1, 5, 2, output_type=tf.float32).as_numpy_iterator())
    assert floats == [1.0, 3.0] and all(v.dtype == np.float32 for v in floats)
    assert repr(Dataset.range(5)) == "<_RangeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"


def test_from_tensor_slices_as_documented():
    assert values(Dataset.from_tensor_slices([1, 2, 3])) == [1, 2, 3]
    rows = list(Dataset.from_tensor_slices([[1, 2], [3, 4]]).as_numpy_iterator())
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]] and rows[0].dtype == np.int32
    assert values(Dataset.from_tensor_slices(([1, 2], [3, 4], [5, 6]))) == [(1, 3, 5), (2, 4, 6)]
    assert values(Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]})) == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    nested = Dataset.from_tensor_slices({"a": ([1, 2], [3, 4]), "b": [5, 6]})
    assert values(nested) == [{"a": (1, 3), "b": 5}, {"a": (2, 4), "b": 6}]
    features = tf.constant([[[1, 3], [2, 3]], [[2, 1], [1, 2]], [[3, 3], [3, 2]]], shape=(3, 2, 2))
    labels = tf.constant([["A", "A"], ["B", "B"], ["A", "B"]], shape=(3, 2, 1))
    first = next(Dataset.from_tensor_slices((features, labels)).as_numpy_iterator())
    assert first[0].tolist() == [[1, 3], [2, 3]] and first[0].dtype == np.int32
    assert first[1].tolist() == [[b"A"], [b"A"]] and first[1].dtype == object


def test_from_tensor_slices_element_spec_and_repr():
    ds = Dataset.from_tensor_slices([1, 2, 3])
    assert repr(ds) == "<_TensorSliceDataset element_spec=TensorSpec(shape=(), dtype=tf.int32, name=None)>"
    first = Dataset.from_tensor_slices(tf.random.uniform([4, 10]))
    assert repr(first.element_spec) == "TensorSpec(shape=(10,), dtype=tf.float32, name=None)"
    second = Dataset.from_tensor_slices((tf.random.uniform([4]),
                                         tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))
    assert repr(second.element_spec) == ("(TensorSpec(shape=(), dtype=tf.float32, name=None), "
                                         "TensorSpec(shape=(100,), dtype=tf.int32, name=None))")
    third = Dataset.zip((first, second))
    assert repr(third.element_spec) == (
        "(TensorSpec(shape=(10,), dtype=tf.float32, name=None), (TensorSpec(shape=(), dtype=tf.float32, "
        "name=None), TensorSpec(shape=(100,), dtype=tf.int32, name=None)))")
    floats = Dataset.from_tensor_slices(np.zeros((3, 2)))
    assert floats.element_spec.dtype == tf.float64   # numpy arrays keep their dtype, as in TensorFlow


def test_from_tensor_slices_snapshots_its_input_and_checks_sizes():
    array = np.arange(4)
    ds = Dataset.from_tensor_slices(array)
    array[:] = 0
    assert values(ds) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="Dimension 0 in all tensors must be equal"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="rank >= 1"):
        Dataset.from_tensor_slices(5)


def test_from_tensors_as_documented():
    (only,) = list(Dataset.from_tensors([1, 2, 3]).as_numpy_iterator())
    assert only.tolist() == [1, 2, 3] and only.dtype == np.int32
    assert values(Dataset.from_tensors(([1, 2, 3], "A"))) == [([1, 2, 3], b"A")]
    assert Dataset.from_tensors([1, 2, 3]).cardinality().numpy() == 1
    assert repr(Dataset.from_tensors(([1, 2], {"k": 3.0}))) == (
        "<_TensorDataset element_spec=(TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
        "{'k': TensorSpec(shape=(), dtype=tf.float32, name=None)})>")


def test_elements_are_tensors_and_strings_are_string_tensors():
    element = next(iter(Dataset.from_tensor_slices((["hello", "world"], [1.5, 2.5]))))
    text, number = element
    assert isinstance(text, tf.Tensor) and text.dtype == tf.string and text.numpy() == b"hello"
    assert isinstance(number, tf.Tensor) and number.dtype == tf.float32 and float(number) == 1.5


def test_guide_iteration_and_reduce():
    dataset = Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
    assert [elem.numpy() for elem in dataset] == [8, 3, 0, 8, 2, 1]
    it = iter(dataset)
    assert next(it).numpy() == 8
    assert dataset.reduce(0, lambda state, value: state + value).numpy() == 22
    assert Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy() == 5
    assert Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y).numpy() == 10


def test_end_of_iteration_next_and_get_next():
    iterator = iter(Dataset.range(2))
    assert next(iterator).numpy() == 0
    assert iterator.get_next().numpy() == 1
    with pytest.raises(tf.errors.OutOfRangeError):
        iterator.get_next()
    with pytest.raises(StopIteration):
        next(iterator)
    with pytest.raises(StopIteration):    # stays exhausted
        next(iterator)
    assert issubclass(tf.errors.OutOfRangeError, tf.errors.OpError)
    numpy_iterator = Dataset.range(1).as_numpy_iterator()
    assert next(numpy_iterator) == 0
    with pytest.raises(StopIteration):
        next(numpy_iterator)


def test_every_iteration_starts_over():
    ds = Dataset.range(3)
    assert values(ds) == values(ds) == [0, 1, 2]
    first, second = iter(ds), iter(ds)
    assert [next(first).numpy(), next(first).numpy(), next(second).numpy()] == [0, 1, 0]


def test_cardinality_and_len_as_documented():
    dataset = Dataset.range(42)
    assert dataset.cardinality().numpy() == 42 and dataset.cardinality().dtype == tf.int64
    assert len(dataset) == 42
    repeated = dataset.repeat()
    assert (repeated.cardinality() == tf.data.INFINITE_CARDINALITY).numpy()
    filtered = repeated.filter(lambda x: True)
    assert (filtered.cardinality() == tf.data.UNKNOWN_CARDINALITY).numpy()
    assert tf.data.experimental.cardinality(dataset).numpy() == 42
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)
    assert tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE == -1
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(repeated)
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(Dataset.range(5).filter(lambda x: True))
    assert bool(Dataset.range(0)) is True


@pytest.mark.parametrize("make, expected", [
    (lambda: Dataset.range(10).batch(3), 4),
    (lambda: Dataset.range(10).batch(3, drop_remainder=True), 3),
    (lambda: Dataset.range(10).take(4), 4),
    (lambda: Dataset.range(10).take(-1), 10),
    (lambda: Dataset.range(10).skip(7), 3),
    (lambda: Dataset.range(10).skip(20), 0),
    (lambda: Dataset.range(10).skip(-1), 0),
    (lambda: Dataset.range(10).repeat(3), 30),
    (lambda: Dataset.range(10).repeat(0), 0),
    (lambda: Dataset.range(0).repeat(), 0),
    (lambda: Dataset.range(10).repeat().take(5), 5),
    (lambda: Dataset.range(10).repeat().skip(5), -1),
    (lambda: Dataset.range(10).repeat().batch(2), -1),
    (lambda: Dataset.range(10).map(lambda x: x).shuffle(3).prefetch(1).cache(), 10),
    (lambda: Dataset.range(10).concatenate(Dataset.range(5)), 15),
    (lambda: Dataset.range(10).concatenate(Dataset.range(5).repeat()), -1),
    (lambda: Dataset.range(10).concatenate(Dataset.range(5).filter(lambda x: True)), -2),
    (lambda: Dataset.zip((Dataset.range(10), Dataset.range(4))), 4),
    (lambda: Dataset.zip((Dataset.range(10).repeat(), Dataset.range(4))), 4),
    (lambda: Dataset.zip((Dataset.range(10), Dataset.range(4).filter(lambda x: True))), -2),
    (lambda: Dataset.range(7).window(3), 3),
    (lambda: Dataset.range(7).window(3, shift=2, drop_remainder=True), 3),
    (lambda: Dataset.range(7).window(3, shift=1, stride=2, drop_remainder=True), 3),
    (lambda: Dataset.range(12).batch(4, drop_remainder=True).unbatch(), 12),
    (lambda: Dataset.range(3).flat_map(lambda x: Dataset.range(x)), -2),
    (lambda: Dataset.from_generator(lambda: iter([1]), tf.int32), -2),
])
def test_cardinality_matches_the_elements(make, expected):
    dataset = make()
    assert dataset.cardinality().numpy() == expected
    if expected >= 0:
        assert len(list(dataset)) == expected


def test_from_generator_with_output_signature_as_documented():
    def gen():
        for i in itertools.count(1):
            yield (i, [1] * i)
    dataset = Dataset.from_generator(gen, output_signature=(tf.TensorSpec(shape=(), dtype=tf.int32),
                                                            tf.TensorSpec(shape=(None,), dtype=tf.int32)))
    taken = list(dataset.take(3).as_numpy_iterator())
    assert [(int(a), b.tolist()) for a, b in taken] == [(1, [1]), (2, [1, 1]), (3, [1, 1, 1])]
    assert all(b.dtype == np.int32 for _, b in taken)
    assert repr(dataset) == ("<_FlatMapDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                             "TensorSpec(shape=(None,), dtype=tf.int32, name=None))>")


def test_from_generator_with_output_types_and_shapes():
    elements = [(1, "foo"), (2, "bar"), (3, "baz")]
    dataset = Dataset.from_generator(lambda: elements, (tf.int32, tf.string))
    assert repr(dataset.element_spec) == ("(TensorSpec(shape=<unknown>, dtype=tf.int32, name=None), "
                                          "TensorSpec(shape=<unknown>, dtype=tf.string, name=None))")
    assert values(dataset.map(lambda x_int, y_str: x_int)) == [1, 2, 3]
    shaped = Dataset.from_generator(lambda: iter([[1, 2], [3, 4]]), tf.float32, output_shapes=[2])
    assert repr(shaped.element_spec) == "TensorSpec(shape=(2,), dtype=tf.float32, name=None)"
    assert values(shaped) == [[1.0, 2.0], [3.0, 4.0]]
    dicts = Dataset.from_generator(lambda: iter([{"a": 1, "b": "x"}]), {"a": tf.int32, "b": tf.string})
    assert values(dicts) == [{"a": 1, "b": b"x"}]


def test_from_generator_calls_the_generator_anew_each_iteration_with_args():
    calls = []

    def gen(stop, label):
        calls.append((int(stop), label))
        yield from range(int(stop))
    dataset = Dataset.from_generator(gen, args=(3, "run"), output_signature=tf.TensorSpec((), tf.int64))
    assert values(dataset) == [0, 1, 2] and values(dataset) == [0, 1, 2]
    assert calls == [(3, b"run"), (3, b"run")]     # args arrive as numpy values, strings as bytes


def test_from_generator_rejects_elements_that_do_not_match():
    bad_shape = Dataset.from_generator(lambda: iter([[1, 2, 3]]), output_signature=tf.TensorSpec((2,), tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(3,\) where an element of shape \(2,\)"):
        list(bad_shape)
    bad_type = Dataset.from_generator(lambda: iter(["a"]), output_signature=tf.TensorSpec((), tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not be converted to the expected type"):
        list(bad_type)
    bad_structure = Dataset.from_generator(lambda: iter([1]), output_signature=(tf.TensorSpec((), tf.int32),
                                                                               tf.TensorSpec((), tf.int32)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not match the expected structure"):
        list(bad_structure)
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(lambda: iter([1]))
    with pytest.raises(TypeError, match="can not be used together"):
        Dataset.from_generator(lambda: iter([1]), tf.int32, output_signature=tf.TensorSpec((), tf.int32))


def test_generator_errors_surface_at_the_element():
    def gen():
        yield 1
        raise KeyError("broken source")
    iterator = iter(Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32)))
    assert next(iterator).numpy() == 1
    with pytest.raises(KeyError, match="broken source"):
        next(iterator)

"""tf.data transformations against the outputs printed in TensorFlow's API docs and tf.data guide."""
import os
import threading
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework import nest

Dataset = tf.data.Dataset


def values(dataset):
    return [nest.map_structure(lambda v: np.asarray(v).tolist(), e) for e in dataset.as_numpy_iterator()]


def windows(dataset):
    return [values(w) for w in dataset]


# -- batching ------------------------------------------------------------------
def test_batch_as_documented():
    assert values(Dataset.range(8).batch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert values(Dataset.range(8).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]


def test_guide_batching_zip_of_two_ranges():
    dataset = Dataset.zip((Dataset.range(100), Dataset.range(0, -100, -1)))
    batched = dataset.batch(4)
    assert [[a.numpy().tolist(), b.numpy().tolist()] for a, b in batched.take(2)] == [
        [[0, 1, 2, 3], [0, -1, -2, -3]], [[4, 5, 6, 7], [-4, -5, -6, -7]]]
    assert repr(batched) == ("<_BatchDataset element_spec=(TensorSpec(shape=(None,), dtype=tf.int64, name=None), "
                             "TensorSpec(shape=(None,), dtype=tf.int64, name=None))>")
    assert repr(dataset.batch(7, drop_remainder=True)) == (
        "<_BatchDataset element_spec=(TensorSpec(shape=(7,), dtype=tf.int64, name=None), "
        "TensorSpec(shape=(7,), dtype=tf.int64, name=None))>")


def test_batch_rejects_mismatched_shapes_and_bad_sizes():
    ragged = Dataset.from_generator(lambda: iter([[1, 2], [3]]), tf.int32).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with different shapes in "
                                                             "component 0"):
        list(ragged)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater than zero"):
        Dataset.range(3).batch(0)


def test_guide_padded_batch():
    dataset = Dataset.range(100).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    batches = values(dataset.padded_batch(4, padded_shapes=(None,)).take(2))
    assert batches == [[[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]],
                       [[4, 4, 4, 4, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0], [6, 6, 6, 6, 6, 6, 0],
                        [7, 7, 7, 7, 7, 7, 7]]]


def test_padded_batch_as_documented():
    a = Dataset.range(1, 5, output_type=tf.int32).map(lambda x: tf.fill([x], x))
    assert repr(a.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int32, name=None)"
    assert values(a.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert values(a.padded_batch(2, padded_shapes=5)) == [[[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]],
                                                          [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]
    assert values(a.padded_batch(2, padded_shapes=5, padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    elements = [([1, 2, 3], [10]), ([4, 5], [11, 12])]
    dataset = Dataset.from_generator(lambda: iter(elements), (tf.int32, tf.int32))
    padded = list(dataset.padded_batch(2, padded_shapes=([4], [None]), padding_values=(-1, 100))
                  .as_numpy_iterator())
    assert [(x.tolist(), y.tolist()) for x, y in padded] == [([[1, 2, 3, -1], [4, 5, -1, -1]], [[10, 100], [11, 12]])]
    assert padded[0][0].dtype == np.int32
    both = Dataset.zip((a, a)).padded_batch(2, padding_values=-1)
    assert values(both) == [([[1, -1], [2, 2]], [[1, -1], [2, 2]]),
                            ([[3, 3, 3, -1], [4, 4, 4, 4]], [[3, 3, 3, -1], [4, 4, 4, 4]])]


def test_padded_batch_errors_and_strings():
    a = Dataset.range(1, 5, output_type=tf.int32).map(lambda x: tf.fill([x], x))
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad to a smaller size"):
        list(a.padded_batch(2, padded_shapes=[2]))
    with pytest.raises(ValueError, match="not compatible"):
        Dataset.from_tensor_slices(np.zeros((2, 3))).padded_batch(2, padded_shapes=[2])
    words = Dataset.from_tensor_slices([["a"], ["b"]]).map(lambda w: tf.concat([w, w], 0) if False else w)
    assert values(words.padded_batch(2, padded_shapes=[3])) == [[[b"a", b"", b""], [b"b", b"", b""]]]


def test_unbatch_as_documented():
    elements = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    dataset = Dataset.from_generator(lambda: elements, tf.int64).unbatch()
    assert values(dataset) == [1, 2, 3, 1, 2, 1, 2, 3, 4]
    assert values(Dataset.from_tensor_slices([[1, 2], [3, 4]]).unbatch()) == [1, 2, 3, 4]
    mismatched = Dataset.from_tensors((np.zeros(2), np.zeros(3))).unbatch()
    with pytest.raises(tf.errors.InvalidArgumentError, match="same batch size in each component"):
        list(mismatched)


def test_rebatch_as_documented():
    assert values(Dataset.range(8).batch(4).rebatch(batch_size=2)) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert values(Dataset.range(16).batch(4).rebatch(batch_size=[2, 1, 1])) == [
        [0, 1], [2], [3], [4, 5], [6], [7], [8, 9], [10], [11], [12, 13], [14], [15]]
    assert values(Dataset.range(7).batch(4).rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(Dataset.range(7).batch(4).rebatch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]


def test_window_as_documented():
    dataset = Dataset.range(7).window(3)
    assert repr(next(iter(dataset))) == "<_VariantDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert windows(dataset) == [[0, 1, 2], [3, 4, 5], [6]]
    assert windows(Dataset.range(7).window(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert windows(Dataset.range(7).window(3, 2, 1, True)) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert windows(Dataset.range(7).window(3, 1, 2, True)) == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert windows(Dataset.range(7).window(3, 1, 2)) == [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5], [6]]
    assert windows(Dataset.range(10).window(2, shift=4)) == [[0, 1], [4, 5], [8, 9]]
    pairs = Dataset.from_tensor_slices(([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).window(2)
    assert [(values(a), values(b)) for a, b in pairs] == [([1, 2], [6, 7]), ([3, 4], [8, 9]), ([5], [10])]
    dicts = Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [4, 5, 6]}).window(2)
    assert [{k: values(v) for k, v in w.items()} for w in dicts] == [{"a": [1, 2], "b": [4, 5]},
                                                                     {"a": [3], "b": [6]}]
    assert repr(dataset.element_spec) == ("DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                                          "TensorShape([]))")
    assert values(Dataset.range(7).window(3, 1, 1, True).flat_map(lambda w: w.batch(3))) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]


# -- combining and ordering -------------------------------------------------------
def test_zip_as_documented():
    a, b = Dataset.range(1, 4), Dataset.range(4, 7)
    assert values(Dataset.zip(a, b)) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip((b, a))) == [(4, 1), (5, 2), (6, 3)]
    c = Dataset.range(7, 13).batch(2)
    assert values(Dataset.zip(a, b, c)) == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]
    assert values(Dataset.zip(a, Dataset.range(13, 15))) == [(1, 13), (2, 14)]
    assert values(Dataset.zip(datasets={"x": a, "y": b})) == [{"x": 1, "y": 4}, {"x": 2, "y": 5}, {"x": 3, "y": 6}]
    with pytest.raises(TypeError, match="Python `list` is not supported"):
        Dataset.zip([a, b])


def test_concatenate_as_documented():
    a, b = Dataset.range(1, 4), Dataset.range(4, 8)
    assert values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(TypeError, match="Incompatible"):
        a.concatenate(Dataset.zip((a, b)))
    with pytest.raises(TypeError, match="Incompatible"):
        a.concatenate(Dataset.from_tensor_slices(["a", "b", "c"]))
    mixed = Dataset.from_tensors(np.zeros(2)).concatenate(Dataset.from_tensors(np.zeros(3)))
    assert repr(mixed.element_spec) == "TensorSpec(shape=(None,), dtype=tf.float64, name=None)"


def test_enumerate_as_documented():
    assert values(Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5)) == [(5, 1), (6, 2), (7, 3)]
    pairs = list(Dataset.from_tensor_slices([(7, 8), (9, 10)]).enumerate().as_numpy_iterator())
    assert [(i, v.tolist()) for i, v in pairs] == [(0, [7, 8]), (1, [9, 10])]
    assert pairs[0][0].dtype == np.int64 and pairs[0][1].dtype == np.int32


def test_repeat_take_skip_as_documented():
    assert values(Dataset.from_tensor_slices([1, 2, 3]).repeat(3)) == [1, 2, 3] * 3
    assert values(Dataset.range(10).take(3)) == [0, 1, 2]
    assert values(Dataset.range(10).skip(7)) == [7, 8, 9]
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(Dataset.range(0).repeat()) == []   # an empty dataset repeated forever ends


# -- user functions ---------------------------------------------------------------------
def test_map_as_documented():
    assert values(Dataset.range(1, 6).map(lambda x: x + 1)) == [2, 3, 4, 5, 6]
    elements = [{"a": 1, "b": "foo"}, {"a": 2, "b": "bar"}]
    dicts = Dataset.from_generator(lambda: elements, {"a": tf.int32, "b": tf.string})
    assert values(dicts.map(lambda d: d["a"] * 10)) == [10, 20]
    pairs = Dataset.range(3).map(lambda x: [x, x * 2])     # a returned list becomes a tuple
    assert values(pairs) == [(0, 0), (1, 2), (2, 4)]
    assert repr(pairs.element_spec) == ("(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                                        "TensorSpec(shape=(), dtype=tf.int64, name=None))")
    assert repr(Dataset.range(3).map(lambda x: x)) == \
        "<_MapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    parallel = Dataset.range(3).map(lambda x: x, num_parallel_calls=tf.data.AUTOTUNE)
    assert repr(parallel).startswith("<_ParallelMapDataset")
    images = Dataset.from_tensor_slices(np.zeros((4, 28, 28))).map(lambda x: tf.cast(x, tf.float32) / 255.0)
    assert repr(images.element_spec) == "TensorSpec(shape=(28, 28), dtype=tf.float32, name=None)"


def test_map_receives_tensors_and_runs_lazily_once_per_element():
    seen = []

    def record(x):
        seen.append(x)
        return x * 2
    dataset = Dataset.range(5).map(record)
    assert seen == []                          # nothing runs until iteration
    assert values(dataset.take(3)) == [0, 2, 4]
    assert len(seen) == 3 and all(isinstance(x, tf.Tensor) for x in seen)
    assert [int(x) for x in seen] == [0, 1, 2]


def test_map_side_effects_on_variables_happen_per_element():
    counter = tf.Variable(0, dtype=tf.int64)

    def count(x):
        counter.assign_add(1)
        return x
    dataset = Dataset.range(4).map(count)
    assert values(dataset) == [0, 1, 2, 3]
    assert int(counter.numpy()) == 4
    assert values(dataset) == [0, 1, 2, 3]
    assert int(counter.numpy()) == 8


def test_parallel_map_keeps_order_and_values():
    def slow_square(x):
        value = int(x)
        threading.Event().wait(0.002 * ((7 - value) % 3))    # finish out of order
        return x * x
    for calls in (2, 4, tf.data.AUTOTUNE):
        assert values(Dataset.range(12).map(slow_square, num_parallel_calls=calls)) == [i * i for i in range(12)]


def test_map_errors_surface_at_the_element():
    def fail_on_two(x):
        if int(x) == 2:
            raise ValueError("bad element 2")
        return x
    for calls in (None, 3):
        iterator = iter(Dataset.range(5).map(fail_on_two, num_parallel_calls=calls))
        assert [int(next(iterator)), int(next(iterator))] == [0, 1]
        with pytest.raises(ValueError, match="bad element 2"):
            next(iterator)


def test_filter_as_documented():
    dataset = Dataset.from_tensor_slices([1, 2, 3])
    assert values(dataset.filter(lambda x: x < 3)) == [1, 2]
    assert values(dataset.filter(lambda x: tf.math.equal(x, 1))) == [1]
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
        list(dataset.filter(lambda x: x))


def test_flat_map_and_interleave_as_documented():
    dataset = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert values(dataset.flat_map(Dataset.from_tensor_slices)) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    interleaved = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2,
                                                 block_length=4)
    assert values(interleaved) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
                                   5, 5, 5, 5, 5, 5]
    assert values(Dataset.range(1, 4).interleave(lambda x: Dataset.range(x), cycle_length=3)) == [0, 0, 0, 1, 1, 2]
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        list(Dataset.range(2).flat_map(lambda x: x))


def test_apply_and_reduce_state_checks():
    assert values(Dataset.range(100).apply(lambda ds: ds.filter(lambda x: x < 5))) == [0, 1, 2, 3, 4]
    with pytest.raises(TypeError, match="must match the initial state"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: tf.cast(s, tf.float32))


# -- performance transformations ---------------------------------------------------------
def test_prefetch_keeps_elements_and_propagates_errors():
    assert values(Dataset.range(3).prefetch(2)) == [0, 1, 2]
    assert values(Dataset.range(50).map(lambda x: x + 1).prefetch(tf.data.AUTOTUNE)) == list(range(1, 51))

    def gen():
        yield 1
        raise RuntimeError("source failed")
    iterator = iter(Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32)).prefetch(4))
    assert int(next(iterator)) == 1
    with pytest.raises(RuntimeError, match="source failed"):
        next(iterator)


def test_prefetch_thread_stops_when_the_iterator_is_dropped():
    # The prefetch thread itself, not a thread count: other tests' worker threads come and go.
    before = set(threading.enumerate())
    iterator = iter(Dataset.range(10 ** 9).map(lambda x: x).prefetch(2))
    next(iterator)
    started = [t for t in threading.enumerate() if t not in before]
    assert len(started) == 1
    del iterator
    started[0].join(timeout=30)
    assert not started[0].is_alive()


def test_memory_cache_replays_the_first_complete_iteration():
    calls = []
    dataset = Dataset.range(5).map(lambda x: (calls.append(1), x ** 2)[1]).cache()
    assert values(dataset) == [0, 1, 4, 9, 16]
    assert values(dataset) == [0, 1, 4, 9, 16]
    assert len(calls) == 5
    partial = Dataset.range(5).map(lambda x: (calls.append(1), x)[1]).cache()
    calls.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert values(partial.take(2)) == [0, 1]
    assert any("partially cached contents" in str(w.message) for w in caught)
    assert values(partial) == [0, 1, 2, 3, 4] and len(calls) == 7    # the partial read was not kept


def test_options_merge_and_report():
    options = tf.data.Options()
    options.deterministic = False
    options.threading.private_threadpool_size = 4
    dataset = Dataset.range(3).with_options(options).map(lambda x: x)
    assert dataset.options().deterministic is False
    assert dataset.options().threading.private_threadpool_size == 4
    later = tf.data.Options()
    later.deterministic = True
    assert dataset.with_options(later).options().deterministic is True
    assert dataset.with_options(later).options().threading.private_threadpool_size == 4
    assert Dataset.range(3).options().deterministic is None
    with pytest.raises(AttributeError):
        options.not_an_option = 1
    assert values(dataset) == [0, 1, 2]


# -- file cache ------------------------------------------------------------------------
def test_file_cache_writes_data_only_and_is_read_back(tmp_path):
    import h5py
    reads = []
    rows = [("a", [0.0, 1.0]), ("bb", [2.0, 3.0]), ("c", [4.0, 5.0])]

    def source():
        reads.append(1)
        yield from rows
    signature = (tf.TensorSpec((), tf.string), tf.TensorSpec((2,), tf.float32))
    path = str(tmp_path / "train")
    dataset = Dataset.from_generator(source, output_signature=signature).cache(path)
    expected = [(b"a", [0.0, 1.0]), (b"bb", [2.0, 3.0]), (b"c", [4.0, 5.0])]
    assert values(dataset) == expected
    assert os.listdir(tmp_path) == ["train.cache.h5"]
    with h5py.File(tmp_path / "train.cache.h5", "r") as f:
        assert f.attrs["num_elements"] == 3 and sorted(f) == ["component_0", "component_1"]
        assert f["component_0/values"][()].tolist() == [b"a", b"bb", b"c"]
    assert values(dataset) == expected and len(reads) == 1
    again = Dataset.from_generator(source, output_signature=signature).cache(path)   # a new pipeline, same file
    assert values(again) == expected and len(reads) == 1


def test_file_cache_partial_iteration_leaves_no_file(tmp_path):
    dataset = Dataset.range(10).map(lambda x: x * 2).cache(str(tmp_path / "c"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert values(dataset.take(3)) == [0, 2, 4]
    assert os.listdir(tmp_path) == []
    assert values(dataset) == [2 * i for i in range(10)]
    assert os.listdir(tmp_path) == ["c.cache.h5"]


def test_file_cache_of_varying_shapes_and_empty_datasets(tmp_path):
    ragged = Dataset.range(4).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x)).cache(str(tmp_path / "r"))
    assert values(ragged) == values(ragged) == [[], [1], [2, 2], [3, 3, 3]]
    empty = Dataset.range(0).cache(str(tmp_path / "e"))
    assert values(empty) == values(empty) == []


def test_file_cache_rejects_a_file_that_does_not_match(tmp_path):
    from tapeflow.saving import FileFormatError
    path = str(tmp_path / "c")
    assert values(Dataset.range(3).cache(path)) == [0, 1, 2]
    with pytest.raises(FileFormatError, match=r"c\.cache\.h5.*component_0.*dtype 'int64'.*float32"):
        list(Dataset.range(3).map(lambda x: tf.cast(x, tf.float32)).cache(path))
    with pytest.raises(FileFormatError, match="component"):
        list(Dataset.zip((Dataset.range(3), Dataset.range(3))).cache(path))
    (tmp_path / "junk.cache.h5").write_bytes(b"not hdf5 at all")
    with pytest.raises(FileFormatError, match="not an HDF5 file"):
        list(Dataset.range(3).cache(str(tmp_path / "junk")))
    import h5py
    with h5py.File(path + ".cache.h5", "r+") as f:
        f["component_0/shapes"].resize((2, 0))
    with pytest.raises(FileFormatError, match="component_0/shapes"):
        list(Dataset.range(3).cache(path))


def test_building_counting_and_iterating_never_call_functions_beyond_the_elements():
    calls = []

    def triple(x):
        calls.append(int(x))
        return tf.fill([3], x)
    dataset = (Dataset.range(4).map(triple).unbatch().window(2).flat_map(lambda w: w).batch(2)
               .shuffle(3, seed=1).prefetch(1))
    assert dataset.cardinality().numpy() == tf.data.UNKNOWN_CARDINALITY
    assert calls == []
    assert sorted(v for batch in values(dataset) for v in batch) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert calls == [0, 1, 2, 3]
    known = Dataset.from_tensor_slices(np.zeros((5, 4))).batch(2, drop_remainder=True).unbatch()
    assert known.cardinality().numpy() == 4 == len(list(known))   # 2 batches of 2 rows
    with pytest.raises(ValueError, match="Cannot unbatch an input with scalar components"):
        Dataset.range(3).unbatch()
    with pytest.raises(ValueError, match="Cannot unbatch an input with scalar components"):
        list(Dataset.range(3).map(lambda x: x).unbatch())

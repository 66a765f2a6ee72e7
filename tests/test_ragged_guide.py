"""RaggedTensors against TensorFlow 2.21: every case of tests/fixtures/tf_ragged/ragged_cases.json (written by
make_ragged_fixture.py there with real TensorFlow) prints the same here, or raises the same error type; gradients
through the flat values of the new ops (slicing, concat, stack, tile, where, dispatched math) against finite
differences."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "tf_ragged", "ragged_cases.json")) as _f:
    FIXTURE = json.load(_f)
sys.path.insert(0, os.path.join(HERE, "fixtures", "tf_ragged"))
from make_ragged_fixture import run  # noqa: E402  (the same runner that wrote the fixture, here with tapeflow)

RT = tf.RaggedTensor
DIGITS = [[3, 1, 4, 1], [], [5, 9, 2], [6], []]


@pytest.mark.parametrize("name", sorted(FIXTURE["cases"]))
def test_prints_what_tensorflow_prints(name):
    case = FIXTURE["cases"][name]
    expected = {k: v for k, v in case.items() if k != "code"}
    assert run(tf, case["code"]) == expected


def test_mixed_types_message_and_uniform_bools():
    with pytest.raises(ValueError, match="mixed types"):
        tf.ragged.constant([["one", "two"], [3, 4]])
    with pytest.raises(ValueError, match="mixed types"):
        tf.ragged.constant([[1, 2], ["3"]])
    assert tf.ragged.constant([[1.5, 2], [3]]).dtype == tf.float32


def test_dispatch_leaves_dense_calls_alone():
    assert tf.add(tf.constant([1, 2]), 3).numpy().tolist() == [4, 5]
    assert tf.concat([tf.constant([[1]]), tf.constant([[2]])], axis=0).numpy().tolist() == [[1], [2]]
    assert tf.math.add is tf.add and hasattr(tf.add, "_ragged_dispatch")
    # activations keep their identity, which Keras uses to serialize them by name
    assert not hasattr(tf.nn.relu, "_ragged_dispatch") and not hasattr(tf.tanh, "_ragged_dispatch")
    assert tf.keras.layers.Dense(2, activation=tf.nn.relu).get_config()["activation"] == "relu"
    with pytest.raises(tf.errors.InvalidArgumentError, match="same row partitions"):
        tf.add(tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[1], [2, 3]]))
    with pytest.raises(NotImplementedError, match="shape"):
        tf.add(tf.ragged.constant([[1, 2], [3]]), tf.constant([1, 2, 3]))


def test_errors_name_the_problem():
    d = tf.ragged.constant(DIGITS)
    # TensorFlow raises ValueError here; tapeflow's conversion reports TypeError, never a string tensor
    for convert in (tf.convert_to_tensor, tf.shape, tf.boolean_mask):
        with pytest.raises(TypeError, match="to_tensor"):
            convert(d) if convert is not tf.boolean_mask else convert(d, [True] * 5)
    with pytest.raises(ValueError, match="inner ragged dimension"):
        d[:, 0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="do not make"):
        RT.from_uniform_row_length([1, 2, 3], 2, nrows=2)
    with pytest.raises(ValueError, match="merge_dims"):
        d.merge_dims(1, 0)
    with pytest.raises(ValueError, match="deltas"):
        tf.ragged.range([1, 2], [3, 4], 0)


def test_uniform_row_length_indexing_and_merge():
    rt = RT.from_uniform_row_length(RT.from_row_splits(np.arange(10), [0, 3, 5, 9, 10]), 2)
    assert rt.shape.as_list() == [2, 2, None] and rt.uniform_row_length.numpy() == 2
    assert rt[:, 1].to_list() == [[3, 4], [9]]
    assert rt.merge_dims(0, 1).to_list() == [[0, 1, 2], [3, 4], [5, 6, 7, 8], [9]]
    assert rt.merge_dims(1, 2).to_list() == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert rt.merge_dims(0, 2).numpy().tolist() == list(range(10))
    dense = RT.from_tensor(tf.reshape(tf.range(12), [2, 3, 2]), ragged_rank=2)
    assert dense.ragged_rank == 2 and dense.to_list() == np.arange(12).reshape(2, 3, 2).tolist()


VALUES = np.array([0.3, -1.2, 0.7, 2.0, 0.1, -0.4])
LENGTHS = [3, 0, 2, 1]


def _rt(v):
    return RT.from_row_lengths(v, LENGTHS)


@pytest.mark.parametrize("fn", [
    lambda v: _rt(v)[:, :2].flat_values,
    lambda v: _rt(v)[1:, -1:].flat_values,
    lambda v: tf.concat([_rt(v), _rt(v * v)], axis=1).flat_values,
    lambda v: tf.concat([_rt(v), _rt(v)[::-1]], axis=0).flat_values,
    lambda v: tf.stack([_rt(v), _rt(tf.sin(v))], axis=1).flat_values,
    lambda v: tf.tile(_rt(v), [2, 3]).flat_values,
    lambda v: tf.where(_rt(v) > 0.0, _rt(v) * 3.0, tf.math.square(_rt(v))).flat_values,
    lambda v: tf.add(_rt(v), tf.reshape(tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64), [4, 1]) * v[0]).flat_values,
    lambda v: tf.map_fn(tf.math.exp, _rt(v)).flat_values,
    lambda v: tf.ragged.boolean_mask(_rt(v), _rt(v) > 0.2).flat_values,
    lambda v: RT.from_uniform_row_length(v, 3).merge_dims(0, 1),
    lambda v: tf.reduce_sum(RT.from_nested_row_lengths(v, ([2, 0, 1], [1, 3, 2])), axis=1).flat_values,
    lambda v: tf.reduce_max(RT.from_nested_row_lengths(v, ([2, 0, 1], [1, 3, 2])), axis=2).flat_values,
    lambda v: tf.reduce_prod(_rt(v), axis=1),
    lambda v: tf.reduce_mean(_rt(v), axis=1, keepdims=True)[::2],
])
def test_gradients_through_flat_values(fn):
    check_gradients(fn, VALUES)


def test_dataset_rows_and_batches_keep_working_downstream():
    d = tf.ragged.constant(DIGITS)
    ds = tf.data.Dataset.from_tensor_slices(d)
    assert len(ds) == 5 and [e.numpy().sum() for e in ds.map(lambda r: tf.reduce_sum(r))] == [9, 0, 16, 6, 0]
    batches = list(ds.batch(3))
    assert [b.to_list() for b in batches] == [DIGITS[:3], DIGITS[3:]]
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]], []])
    assert [r.to_list() for r in tf.data.Dataset.from_tensor_slices(nested)] == [[[1], [2, 3]], [[4]], []]
    rb = tf.data.Dataset.from_tensor_slices(tf.range(5)).map(lambda x: tf.range(x)).ragged_batch(2, True)
    assert len(rb) == 2 and str(rb.element_spec) == "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"
    assert [b.to_list() for b in rb] == [[[], [0]], [[0, 1], [0, 1, 2]]]

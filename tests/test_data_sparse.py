"""SparseTensors as dataset elements, against what TensorFlow 2.21 prints for the same pipelines."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.errors import InvalidArgumentError


def parts(st):
    return st.indices.numpy().tolist(), st.values.numpy().tolist(), st.dense_shape.numpy().tolist()


@pytest.fixture
def st():
    return tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])


def test_from_tensors_keeps_the_sparse_tensor_and_numpy_gives_it_dense(st):
    ds = tf.data.Dataset.from_tensors(st)
    assert ds.element_spec == tf.SparseTensorSpec([3, 4], tf.int32)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([3, 4]), tf.int32)"
    assert ds.element_spec.value_type is tf.SparseTensor
    (element,) = list(ds)
    assert isinstance(element, tf.SparseTensor) and parts(element) == parts(st)
    (array,) = list(ds.as_numpy_iterator())
    np.testing.assert_array_equal(array, [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])


def test_slices_are_rows_and_batching_and_unbatching_round_trip(st):
    rows = tf.data.Dataset.from_tensor_slices(st)
    assert rows.element_spec == tf.SparseTensorSpec([4], tf.int32)
    assert [parts(r) for r in rows] == [([[0]], [1], [4]), ([[2]], [2], [4]), ([], [], [4])]
    batches = rows.batch(2)
    assert batches.element_spec == tf.SparseTensorSpec([None, 4], tf.int32)
    assert [parts(b) for b in batches] == [([[0, 0], [1, 2]], [1, 2], [2, 4]), ([], [], [1, 4])]
    again = batches.unbatch()
    assert again.element_spec == tf.SparseTensorSpec([4], tf.int32)
    assert [parts(r) for r in again] == [parts(r) for r in rows]


def test_batching_takes_the_largest_dense_shape_and_refuses_mixed_ranks():
    ds = tf.data.Dataset.from_tensors(tf.SparseTensor([[0]], [5], [2])).concatenate(
        tf.data.Dataset.from_tensors(tf.SparseTensor([[3]], [6], [4])))
    assert ds.element_spec == tf.SparseTensorSpec([None], tf.int32)
    assert [parts(b) for b in ds.batch(2)] == [([[0, 0], [1, 3]], [5, 6], [2, 4])]
    mixed = tf.data.Dataset.from_tensors(tf.SparseTensor([[0]], [5], [2])).concatenate(
        tf.data.Dataset.from_tensors(tf.SparseTensor([[0, 0]], [6], [1, 1])))
    with pytest.raises((InvalidArgumentError, TypeError)):
        list(mixed.batch(2))


def test_map_receives_and_returns_sparse_tensors(st):
    rows = tf.data.Dataset.from_tensor_slices(st)
    dense = rows.map(tf.sparse.to_dense)
    assert dense.element_spec == tf.TensorSpec([4], tf.int32)
    assert [a.tolist() for a in dense.as_numpy_iterator()] == [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    pairs = rows.map(lambda x: (x * 10, 1))
    assert pairs.element_spec == (tf.SparseTensorSpec([4], tf.int32), tf.TensorSpec([], tf.int32))
    assert [parts(x)[1] for x, _ in pairs] == [[10], [20], []]


def test_sparse_and_dense_components_slice_together(st):
    ds = tf.data.Dataset.from_tensor_slices({"a": st, "b": tf.constant([7, 8, 9])})
    assert ds.element_spec == {"a": tf.SparseTensorSpec([4], tf.int32), "b": tf.TensorSpec([], tf.int32)}
    assert [(parts(e["a"])[1], int(e["b"])) for e in ds] == [([1], 7), ([2], 8), ([], 9)]
    with pytest.raises(ValueError, match="Dimension 0"):
        tf.data.Dataset.from_tensor_slices((st, tf.constant([1, 2])))


def test_shuffled_sparse_rows_are_the_same_rows(st):
    rows = [tuple(map(str, parts(r))) for r in tf.data.Dataset.from_tensor_slices(st).shuffle(3, seed=4)]
    assert sorted(rows) == sorted(tuple(map(str, parts(r))) for r in tf.data.Dataset.from_tensor_slices(st))

"""tf.ragged basics: the ragged tensor guide's printed outputs, the factories against each other and
Python lists, dense conversion, reductions, and gradients through the flat values."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients

RT = tf.RaggedTensor
DIGITS = [[3, 1, 4, 1], [], [5, 9, 2], [6], []]


def test_the_guides_outputs():
    ragged_tensor = tf.ragged.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
    assert isinstance(ragged_tensor, tf.RaggedTensor)
    assert repr(ragged_tensor) == "<tf.RaggedTensor [[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]]>"
    assert str(ragged_tensor.shape) == "(4, None)"
    digits = tf.ragged.constant(DIGITS)
    assert str(digits + 3) == "<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>"
    mean = tf.reduce_mean(digits, axis=1)
    assert mean.dtype == tf.float64
    np.testing.assert_array_equal(mean.numpy(), [2.25, np.nan, 16 / 3, 6.0, np.nan])
    assert str(tf.ragged.map_flat_values(lambda x: x * 2, digits)) == \
        "<tf.RaggedTensor [[6, 2, 8, 2], [], [10, 18, 4], [12], []]>"
    assert digits[0].numpy().tolist() == [3, 1, 4, 1]
    assert str(digits[1:3]) == "<tf.RaggedTensor [[], [5, 9, 2]]>"
    assert digits.dtype == tf.int32 and digits.ragged_rank == 1


def test_factories_agree_and_validate():
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    by_splits = RT.from_row_splits(values, [0, 4, 4, 7, 8, 8])
    by_lengths = RT.from_row_lengths(values, [4, 0, 3, 1, 0])
    by_rowids = RT.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 2, 3], nrows=5)
    for rt in (by_splits, by_lengths, by_rowids):
        assert rt.to_list() == DIGITS
        assert rt.row_splits.numpy().tolist() == [0, 4, 4, 7, 8, 8]
        assert rt.row_lengths().numpy().tolist() == [4, 0, 3, 1, 0]
        assert rt.value_rowids().numpy().tolist() == [0, 0, 0, 0, 2, 2, 2, 3]
        assert rt.values.numpy().tolist() == values
    assert RT.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 2, 3]).nrows_static() == 4
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_splits"):
        RT.from_row_splits(values, [0, 4, 3, 8])
    with pytest.raises(tf.errors.InvalidArgumentError):
        RT.from_row_splits(values, [0, 4, 7])
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        RT.from_row_lengths(values, [9, -1])
    with pytest.raises(ValueError, match="private"):
        RT(values, [0, 8])


def test_constant_nesting_and_round_trips():
    rng = np.random.default_rng(0)
    for _ in range(10):
        pylist = [[[float(rng.integers(9)) for _ in range(rng.integers(3))] for _ in range(rng.integers(4))]
                  for _ in range(rng.integers(1, 5))] + [[[1.0]]]
        rt = tf.ragged.constant(pylist)
        assert rt.to_list() == pylist and rt.ragged_rank == 2 and rt.dtype == tf.float32
        assert tf.RaggedTensor.from_nested_row_splits(rt.flat_values, rt.nested_row_splits).to_list() == pylist
        assert rt.row_lengths(axis=2).to_list() == [[len(inner) for inner in row] for row in pylist]
        assert rt[1:].to_list() == pylist[1:] and rt[-2:-1].to_list() == pylist[-2:-1] and rt[3:1].to_list() == []
    uniform_inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert uniform_inner.shape.as_list() == [2, None, 2] and uniform_inner.values.shape == (3, 2)
    assert isinstance(tf.ragged.constant([1, 2, 3]), tf.Tensor)
    with pytest.raises(ValueError, match="nesting depth"):
        tf.ragged.constant([[1, [2]]])


def test_to_tensor_pads_and_fits_a_shape():
    digits = tf.ragged.constant(DIGITS)
    dense = np.array([[3, 1, 4, 1], [0, 0, 0, 0], [5, 9, 2, 0], [6, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(digits.to_tensor().numpy(), dense)
    np.testing.assert_array_equal(digits.to_tensor(default_value=-1).numpy(),
                                  np.where([[1, 1, 1, 1], [0] * 4, [1, 1, 1, 0], [1, 0, 0, 0], [0] * 4], dense, -1))
    np.testing.assert_array_equal(digits.to_tensor(shape=[3, 6]).numpy(),
                                  np.pad(dense[:3], [(0, 0), (0, 2)]))
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    np.testing.assert_array_equal(nested.to_tensor(default_value=9).numpy(),
                                  [[[1, 2], [3, 9]], [[4, 9], [9, 9]]])
    back = RT.from_tensor(digits.to_tensor(), lengths=[4, 0, 3, 1, 0])
    assert back.to_list() == DIGITS
    assert RT.from_tensor([[1, 2, 0], [3, 0, 0]], padding=0).to_list() == [[1, 2], [3]]


def test_reductions_over_ragged_axes():
    digits = tf.ragged.constant(DIGITS)
    assert tf.reduce_sum(digits, axis=1).numpy().tolist() == [9, 0, 16, 6, 0]
    assert tf.reduce_sum(digits, axis=0).numpy().tolist() == [14, 10, 6, 1]
    assert tf.reduce_mean(digits, axis=0).numpy().tolist() == [14 / 3, 5.0, 3.0, 1.0]
    assert tf.reduce_sum(digits).numpy() == 31
    lowest = np.iinfo(np.int32).min
    assert tf.reduce_max(digits, axis=1).numpy().tolist() == [4, lowest, 9, 6, lowest]
    assert tf.reduce_min(digits, axis=-1).numpy().tolist()[2] == 2


def test_gradients_flow_through_the_flat_values():
    lengths = [3, 0, 2, 1]
    values = np.random.default_rng(1).normal(size=6)

    check_gradients(lambda v: RT.from_row_lengths(v, lengths).to_tensor(default_value=0.5), values)
    check_gradients(lambda v: tf.reduce_mean(RT.from_row_lengths(v * v, lengths), axis=1)[0::2], values)
    check_gradients(lambda v: tf.reduce_max(RT.from_row_lengths(v, lengths), axis=1)[0::2], values)
    check_gradients(lambda v: (RT.from_row_lengths(v, lengths) * 3.0 + 1.0)[2], values)
    check_gradients(lambda v: tf.ragged.map_flat_values(tf.sin, RT.from_row_lengths(v, lengths)).flat_values, values)
    w = tf.Variable(values)
    with tf.GradientTape() as tape:
        rt = RT.from_row_lengths(w * 2.0, lengths)
        loss = tf.reduce_sum(tf.reduce_sum(rt, axis=1) ** 2)
    row_sums = np.array([values[:3].sum(), 0, values[3:5].sum(), values[5]]) * 2
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), 4 * np.repeat(row_sums, lengths), rtol=1e-12)


def test_elementwise_needs_matching_partitions():
    a = RT.from_row_lengths([1.0, 2.0, 3.0], [2, 1])
    assert (a + a).to_list() == [[2.0, 4.0], [6.0]]
    assert (-a).to_list() == [[-1.0, -2.0], [-3.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="row partitions"):
        a + RT.from_row_lengths([1.0, 2.0, 3.0], [1, 2])
    with pytest.raises(ValueError, match="different row partitions"):
        tf.ragged.map_flat_values(tf.add, a, RT.from_row_lengths([1.0, 2.0, 3.0], [1, 2]))

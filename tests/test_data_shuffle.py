"""shuffle: TensorFlow's buffer semantics, seeds, reshuffling, and the index fast path giving exactly the
element-wise results."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.data import batching
from tapeflow.framework import nest

Dataset = tf.data.Dataset


def order(dataset):
    return [int(v) for v in dataset.as_numpy_iterator()]


def test_buffer_size_one_keeps_the_input_order():
    assert order(Dataset.range(20).shuffle(1)) == list(range(20))
    assert order(Dataset.range(20).shuffle(1, seed=3).repeat(2)) == list(range(20)) * 2


def test_each_element_exactly_once_per_epoch():
    for buffer_size in (2, 7, 50, 1000):
        dataset = Dataset.range(50).shuffle(buffer_size, seed=1).repeat(3)
        out = order(dataset)
        assert [sorted(out[i * 50:(i + 1) * 50]) for i in range(3)] == [list(range(50))] * 3


def test_each_output_is_drawn_from_the_buffer_of_the_next_inputs():
    """Output k comes from inputs 0 .. k + buffer_size - 1 (the buffer after k refills)."""
    for seed in range(5):
        out = order(Dataset.range(300).shuffle(10, seed=seed))
        assert all(v < k + 10 for k, v in enumerate(out))
        assert out != list(range(300))


def test_guide_first_batch_comes_from_the_first_buffer_plus_batch():
    dataset = Dataset.zip((Dataset.range(1000), Dataset.range(1000))).shuffle(buffer_size=100).batch(20)
    n, _ = next(iter(dataset))
    assert n.shape == (20,) and int(tf.reduce_max(n)) < 120


def test_draws_are_uniform_over_the_buffer():
    dataset = Dataset.range(4).shuffle(4, seed=11).batch(4)
    iterator_count = 2000
    firsts = np.array([next(iter(dataset)).numpy()[0] for _ in range(iterator_count)])   # a new order each time
    frequencies = np.bincount(firsts, minlength=4) / iterator_count
    assert np.all(np.abs(frequencies - 0.25) < 0.04), frequencies


def test_a_seed_makes_the_order_reproducible_and_reshuffles_each_iteration():
    first = Dataset.range(50).shuffle(50, seed=7)
    second = Dataset.range(50).shuffle(50, seed=7)
    epochs_a = [order(first) for _ in range(3)]
    epochs_b = [order(second) for _ in range(3)]
    assert epochs_a == epochs_b
    assert epochs_a[0] != epochs_a[1] != epochs_a[2]
    assert order(Dataset.range(50).shuffle(50, seed=8)) != epochs_a[0]


def test_no_reshuffle_gives_the_same_order_every_iteration():
    dataset = Dataset.range(50).shuffle(50, seed=7, reshuffle_each_iteration=False)
    orders = [order(dataset) for _ in range(3)]
    assert orders[0] == orders[1] == orders[2] != list(range(50))
    repeated = order(dataset.repeat(2))
    assert repeated[:50] == repeated[50:] == orders[0]
    reshuffled = order(Dataset.range(50).shuffle(50, seed=7).repeat(2))
    assert sorted(reshuffled[:50]) == sorted(reshuffled[50:]) and reshuffled[:50] != reshuffled[50:]


def test_global_seed_makes_unseeded_shuffles_reproducible():
    tf.random.set_seed(123)
    a = order(Dataset.range(40).shuffle(40))
    tf.random.set_seed(123)
    b = order(Dataset.range(40).shuffle(40))
    tf.random.set_seed(124)
    c = order(Dataset.range(40).shuffle(40))
    tf.random.set_seed(None)
    assert a == b != c


def test_buffer_size_must_be_positive():
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size must be greater than zero"):
        Dataset.range(3).shuffle(0)


PIPELINES = {
    "slices": lambda x, y: Dataset.from_tensor_slices((x, y)).shuffle(37, seed=5).batch(16),
    "dict": lambda x, y: Dataset.from_tensor_slices({"x": x, "y": y}).shuffle(1000, seed=5).batch(32, True),
    "range": lambda x, y: Dataset.range(500).shuffle(64, seed=2).batch(10),
    "repeat_after": lambda x, y: Dataset.from_tensor_slices(x).shuffle(100, seed=1).repeat(3).batch(64),
    "repeat_before": lambda x, y: Dataset.from_tensor_slices(y).repeat(2).shuffle(150, seed=4).batch(33),
    "take_skip": lambda x, y: Dataset.from_tensor_slices(x).skip(13).shuffle(20, seed=9).take(200).batch(7),
    "take_zero": lambda x, y: Dataset.from_tensor_slices(x).shuffle(20, seed=9).take(0).batch(7),
    "two_shuffles": lambda x, y: Dataset.from_tensor_slices(y).shuffle(5, seed=1).shuffle(50, seed=2).batch(9),
    "fixed_order": lambda x, y: Dataset.from_tensor_slices(y).shuffle(10, seed=3, reshuffle_each_iteration=False)
    .prefetch(2).batch(25),
    "big_buffer": lambda x, y: Dataset.from_tensor_slices(x).shuffle(10_000, seed=3).batch(128),
    "strings": lambda x, y: Dataset.from_tensor_slices(np.array([str(i) for i in range(300)])).shuffle(30, seed=6)
    .batch(8),
}


def _epochs(make, x, y, epochs=2):
    dataset = make(x, y)
    return [[nest.flatten(b) for b in dataset.as_numpy_iterator()] for _ in range(epochs)]


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_batch_after_shuffle_gathers_exactly_what_element_wise_batching_gives(name, monkeypatch):
    rng = np.random.RandomState(0)
    x = rng.randn(500, 3).astype(np.float32)
    y = np.arange(500)
    make = PIPELINES[name]
    assert make(x, y)._input._index_plan() is not None          # the fast path applies to this pipeline
    fast = _epochs(make, x, y)
    monkeypatch.setattr(batching, "USE_INDEX_PLANS", False)
    slow = _epochs(make, x, y)
    assert len(fast) == len(slow)
    for epoch_fast, epoch_slow in zip(fast, slow):
        assert len(epoch_fast) == len(epoch_slow)
        for a, b in zip(epoch_fast, epoch_slow):
            assert all(u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u, v) for u, v in zip(a, b))


def test_a_function_before_batch_takes_the_element_wise_path():
    dataset = Dataset.range(10).shuffle(4, seed=1).map(lambda x: x * 2).batch(3)
    assert dataset._input._index_plan() is None
    assert sorted(np.concatenate([b for b in dataset.as_numpy_iterator()]).tolist()) == list(range(0, 20, 2))


def test_fast_path_batches_are_private_copies():
    x = np.arange(12).reshape(6, 2)
    dataset = Dataset.from_tensor_slices(x).batch(3)
    first = next(dataset.as_numpy_iterator())
    first[:] = -1
    assert next(dataset.as_numpy_iterator()).tolist() == [[0, 1], [2, 3], [4, 5]]

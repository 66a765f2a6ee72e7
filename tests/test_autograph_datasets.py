"""Datasets inside tf.function: ``for x in ds``, ``iter(ds)`` and ``next(it)`` become graph ops that pull
elements at each call (tapeflow/data/graph_iteration.py), as TensorFlow's guides describe; what cannot be
done (saving the capture, differentiating through the loop, a size-dependent body) fails clearly."""
import itertools
import os

import numpy as np
import pytest

import tapeflow as tf


def _all_operations(graph):
    """Op types of a graph and of its control-flow sub-graphs."""
    types = []
    for op_type, _, attrs, _ in graph.nodes:
        types.append(op_type)
        for value in attrs.values():
            if hasattr(value, "graph") and hasattr(value.graph, "nodes"):
                types.extend(_all_operations(value.graph))
    return types


def test_guide_tf_data_iterator_consumed_at_each_call(capfd):
    # "Better performance with tf.function", Using Python iterators and generators.
    @tf.function
    def buggy_consume_next(iterator):
        tf.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    for _ in range(3):
        buggy_consume_next(iterator)

    @tf.function
    def good_consume_next(iterator):
        tf.print("Value:", next(iterator))

    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
    iterator = iter(ds)
    for _ in range(3):
        good_consume_next(iterator)
    assert capfd.readouterr().err.splitlines() == ["Value: 1"] * 3 + ["Value: 1", "Value: 2", "Value: 3"]
    assert good_consume_next.experimental_get_tracing_count() == 1
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        good_consume_next(iterator)


def test_graph_size_does_not_grow_with_the_dataset():
    # The guide's "Looping over Python data": a Python list unrolls, a dataset becomes one graph loop.
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss

    def size(*args):
        return len(_all_operations(train.get_concrete_function(*args).graph))
    small, big = [(1, 3)] * 3, [(1, 3)] * 10
    assert size(small) < size(big)
    datasets = [tf.data.Dataset.from_generator(lambda data=data: data, output_signature=(
        tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int32))) for data in (small, big)]
    assert size(datasets[0]) == size(datasets[1])
    assert [int(train(d)) for d in datasets] == [6, 20]
    assert [int(train(d)) for d in datasets] == [6, 20]   # iterated again at each call
    assert train.experimental_get_tracing_count() == 4    # two lists, two dataset objects


def test_each_call_iterates_afresh_and_reshuffles():
    def make():
        return tf.data.Dataset.from_tensor_slices(np.arange(8, dtype=np.float32)).shuffle(8, seed=3)

    @tf.function
    def order(ds):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = 0
        for x in ds:
            ta = ta.write(i, x)
            i += 1
        return ta.stack()
    traced_ds, eager_ds = make(), make()
    orders = [order(traced_ds).numpy() for _ in range(3)]
    assert order.experimental_get_tracing_count() == 1
    for got in orders:   # the same permutations, pass after pass, as iterating the twin dataset eagerly
        np.testing.assert_array_equal(got, np.array([float(x) for x in eager_ds]))
    assert not all(np.array_equal(orders[0], o) for o in orders[1:])
    ops = [op.type for op in order.get_concrete_function(traced_ds).graph.get_operations()]
    assert "DatasetIterator" in ops and "While" in ops


def test_iter_inside_the_function_restarts_at_each_call():
    ds = tf.data.Dataset.range(5).map(lambda x: x * 10)

    @tf.function
    def first_two():
        it = iter(ds)
        a = next(it)
        return a, next(it)
    assert [int(v) for v in first_two()] == [0, 10]
    assert [int(v) for v in first_two()] == [0, 10]

    @tf.function
    def third():
        it = iter(ds.take(2))
        next(it)
        next(it)
        return next(it)
    with pytest.raises(tf.errors.OutOfRangeError):
        third()

    @tf.function
    def rest_after_first():
        it = iter(ds)
        first = next(it)
        total = tf.constant(0, tf.int64)
        for x in it:      # a for loop over an iterator continues it
            total += x
        return first, total
    assert [int(v) for v in rest_after_first()] == [0, 100]


def test_nested_elements_and_break():
    ds = tf.data.Dataset.from_tensor_slices({"a": np.arange(6.0, dtype=np.float32),
                                             "b": np.arange(6, dtype=np.int32)})

    @tf.function
    def until(limit):
        total = tf.constant(0.0)
        count = 0
        for element in ds:
            if total >= limit:
                break
            total += element["a"] * tf.cast(element["b"], tf.float32)
            count += 1
        return total, count

    def eager(limit):
        total, count = 0.0, 0
        for a, b in zip(range(6), range(6)):
            if total >= limit:
                break
            total += a * b
            count += 1
        return total, count
    for limit in (0.0, 4.0, 13.0, 100.0):
        got = until(tf.constant(limit))
        assert (float(got[0]), int(got[1])) == eager(limit)
    assert until.experimental_get_tracing_count() == 1


def _model(seed):
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.get_weights()])
    return model


def test_training_loop_over_a_dataset_matches_eager():
    # The custom-training-loop pattern with the loop itself in the tf.function: `for x, y in train_ds`.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(44, 4)).astype("float32")
    y = rng.integers(0, 3, size=44).astype("int32")

    def run(decorate):
        model = _model(1)
        optimizer = tf.keras.optimizers.Adam(0.01)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(44, seed=5).batch(8)   # the last batch has 4

        def train_epoch(dataset, max_steps):
            total = 0.0
            steps = 0
            for xb, yb in dataset:
                if steps >= max_steps:
                    break
                with tf.GradientTape() as tape:
                    logits = model(xb, training=True)
                    loss = loss_fn(yb, logits)
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
                accuracy.update_state(yb, logits)
                total += loss
                steps += 1
            return total / tf.cast(steps, tf.float32), steps
        step = tf.function(train_epoch) if decorate else train_epoch
        history = [(float(m), int(s)) for m, s in (step(ds, tf.constant(n)) for n in (100, 3, 100))]
        return history, model.get_weights(), float(accuracy.result()), step
    traced, weights, accuracy, function = run(True)
    eager, eager_weights, eager_accuracy, _ = run(False)
    assert [s for _, s in traced] == [6, 3, 6]
    np.testing.assert_allclose([m for m, _ in traced], [m for m, _ in eager], rtol=1e-5)
    for a, b in zip(weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert accuracy == eager_accuracy
    assert function.experimental_get_tracing_count() == 1


def test_dataset_built_inside_the_function_with_tf_print(capfd):
    # The AutoGraph guide's loop: the dataset is made in the function; the step counter is a tensor.
    def make_dataset():   # map's function is probed for its output spec: eagerly, not into the trace
        return tf.data.Dataset.from_tensor_slices(np.arange(25, dtype=np.float32)).map(lambda v: v * 1.0).batch(5)

    @tf.function
    def train():
        step = 0
        loss = 0.0
        for x in make_dataset():
            step += 1
            loss = tf.reduce_sum(x)
            if step % 2 == 0:
                tf.print("Step", step, ": loss", loss)
        return step, loss
    for _ in range(2):
        step, loss = train()
        assert (int(step), float(loss)) == (5, 110.0)
    assert capfd.readouterr().err.splitlines() == ["Step 2 : loss 35", "Step 4 : loss 85"] * 2
    assert [op.type for op in train.get_concrete_function().graph.get_operations()] == ["DatasetIterator", "While"]


def test_unknown_batch_dimension():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32).reshape(5, 2)).batch(2)
    assert ds.element_spec.shape.as_list() == [None, 2]

    @tf.function
    def total(dataset):
        s = tf.constant(0.0)
        for x in dataset:
            s += tf.reduce_sum(x * x)
        return s
    assert float(total(ds)) == float(np.sum(np.arange(10.0) ** 2))
    ops = [op for op in _all_operations(total.get_concrete_function(ds).graph)]
    assert "If" in ops and "DatasetLoopBody" not in ops     # one graph serves every batch size

    w = tf.Variable(1.5)

    def mean_gradients(dataset):    # the mean's gradient divides by the batch size: a body per size
        s = tf.constant(0.0)
        for x in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w * w)
            s += tape.gradient(loss, w)
        return s
    traced = tf.function(mean_gradients)
    expected = float(mean_gradients(ds))
    assert expected == pytest.approx(2 * 1.5 * (np.mean([0, 1, 2, 3]) + np.mean([4, 5, 6, 7]) + np.mean([8, 9])))
    assert [float(traced(ds)) for _ in range(2)] == [expected] * 2
    assert "DatasetLoopBody" in _all_operations(traced.get_concrete_function(ds).graph)
    assert traced.experimental_get_tracing_count() == 1

    @tf.function
    def last_row_sums(dataset):
        last = tf.zeros([2])
        for x in dataset:
            last = tf.reduce_sum(x, axis=1) * tf.cast(tf.shape(x)[0], tf.float32)
        return last
    with pytest.raises(ValueError, match="leaves an iteration with shape \(1,\); a loop variable keeps its shape"):
        last_row_sums(ds)


def test_what_cannot_be_done_fails_clearly(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32))

    class Trainer(tf.Module):
        def __init__(self):
            self.w = tf.Variable(2.0)

        @tf.function
        def weighted_sum(self):
            s = tf.constant(0.0)
            for x in ds:
                s += x * self.w
            return s
    trainer = Trainer()
    with tf.GradientTape() as tape:
        value = trainer.weighted_sum()
    assert float(value) == 12.0
    with pytest.raises(NotImplementedError, match="pulls the next element of a dataset iterator"):
        tape.gradient(value, trainer.w)
    target = os.path.join(tmp_path, "saved")
    with pytest.raises(ValueError, match=r"'weighted_sum'.*captures the tf.data dataset <_TensorSliceDataset"):
        tf.saved_model.save(trainer, target)
    assert not os.path.exists(target)

    @tf.function(autograph=False)
    def unconverted():
        s = tf.constant(0.0)
        for x in ds:
            s += x
        return s
    with pytest.raises(NotImplementedError, match="Python for loop over a tf.data dataset"):
        unconverted()

    @tf.function
    def comprehension():
        return tf.add_n([x for x in ds])
    with pytest.raises(NotImplementedError, match="a comprehension"):
        comprehension()


def test_reduce_enumerate_zip_and_strings_in_a_function():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32)).shuffle(6)

    @tf.function
    def folds():
        total = ds.reduce(tf.constant(0.0), lambda s, x: s + x)
        squares, count = ds.take(4).reduce((0.0, 0), lambda s, x: (s[0] + x * x, s[1] + 1))
        return total, squares, count
    for _ in range(2):   # folded at each call, whatever the shuffled order
        total, squares, count = folds()
        assert float(total) == 15.0 and int(count) == 4
        assert float(squares) in {float(sum(c * c for c in combo)) for combo in itertools.combinations(range(6), 4)}
    assert "While" in _all_operations(folds.get_concrete_function().graph)

    @tf.function
    def enumerate_and_zip():
        index_sum = tf.constant(0, tf.int64)
        for i, x in enumerate(ds):
            index_sum += i
        doubled_minus = tf.constant(0.0)
        for a, b in zip(ds, ds.map(lambda v: v * 2.0)):    # each shuffled on its own: the sum is 15
            doubled_minus += b - a
        return index_sum, doubled_minus
    assert [float(v) for v in enumerate_and_zip()] == [15.0, 15.0]

    words = tf.data.Dataset.from_tensor_slices(["a", "bc", "def"])

    @tf.function
    def last_word():
        count, last = 0, tf.constant("")
        for w in words:
            count += 1
            last = w
        return count, last
    count, last = last_word()
    assert int(count) == 3 and last.numpy() == b"def"

    @tf.function
    def numpy_values():
        return next(ds.as_numpy_iterator())
    with pytest.raises(RuntimeError, match="only supported in eager mode"):
        numpy_values()


def test_a_for_loop_over_a_dataset_with_a_return_is_refused_clearly():
    ds = tf.data.Dataset.range(5)

    @tf.function
    def find(limit):
        for x in ds:
            if x > limit:
                return x
        return tf.constant(-1, tf.int64)
    with pytest.raises(NotImplementedError, match="a for loop with a return statement or an else clause over a "
                                                   "dataset"):
        find(tf.constant(2, tf.int64))

    @tf.function
    def find_with_break(limit):
        found = tf.constant(-1, tf.int64)
        for x in ds:
            if x > limit:
                found = x
                break
        return found
    assert [int(find_with_break(tf.constant(v, tf.int64))) for v in (2, 7)] == [3, -1]


def test_nested_dataset_loops_with_a_size_dependent_body_and_break_match_eager():
    outer = tf.data.Dataset.range(3)
    inner = tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.float32)).batch(2)
    w = tf.Variable(1.0)

    def weighted_mean_gradients(limit):
        s = tf.constant(0.0)
        for i in outer:
            for x in inner:     # a new iterator of inner for each element of outer
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(x * w)
                s += tape.gradient(loss, w) * tf.cast(i + 1, tf.float32)
                if s > limit:
                    break
        return s
    traced = tf.function(weighted_mean_gradients)
    for limit in (5.0, 20.0, 100.0):
        assert float(traced(tf.constant(limit))) == float(weighted_mean_gradients(tf.constant(limit)))
    assert float(traced(tf.constant(100.0))) == (0.5 + 2.5 + 4.0) * 6
    assert traced.experimental_get_tracing_count() == 1

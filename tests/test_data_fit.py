"""model.fit / evaluate / predict on tf.data datasets and PyDatasets."""
import warnings

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
Dataset = tf.data.Dataset


def data(n=40):
    rng = np.random.RandomState(0)
    x = rng.randn(n, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.1).astype(np.float32)
    return x, y


def model(seed=1):
    K.utils.set_random_seed(seed)
    m = K.Sequential([K.Input((3,)), K.layers.Dense(4, activation="tanh"), K.layers.Dense(1)])
    m.compile(K.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return m


def same_weights(a, b):
    return all(np.array_equal(u, v) for u, v in zip(a.get_weights(), b.get_weights()))


def test_fit_on_a_dataset_equals_fit_on_the_same_batches_of_arrays():
    x, y = data()
    on_arrays, on_dataset = model(), model()
    h_arrays = on_arrays.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    h_dataset = on_dataset.fit(Dataset.from_tensor_slices((x, y)).batch(8), epochs=3, verbose=0)
    assert same_weights(on_arrays, on_dataset)
    assert h_dataset.history == h_arrays.history
    assert h_dataset.params["steps"] == 5            # from the dataset's cardinality
    dataset = Dataset.from_tensor_slices((x, y)).batch(16)
    assert on_dataset.evaluate(dataset, verbose=0) == on_arrays.evaluate(x, y, batch_size=16, verbose=0)
    predicted = on_dataset.predict(Dataset.from_tensor_slices(x).batch(7), verbose=0)
    np.testing.assert_array_equal(predicted, on_arrays.predict(x, batch_size=7, verbose=0))
    # (x, y) elements: x is used (same batches as the arrays': BLAS may round rows of other batch sizes apart)
    np.testing.assert_array_equal(on_dataset.predict(dataset, verbose=0),
                                  on_arrays.predict(x, batch_size=16, verbose=0))


def test_validation_data_as_a_dataset():
    x, y = data()
    m = model()
    history = m.fit(Dataset.from_tensor_slices((x[:30], y[:30])).batch(10), epochs=1, verbose=0,
                    validation_data=Dataset.from_tensor_slices((x[30:], y[30:])).batch(4))
    val_loss, val_mae = m.evaluate(x[30:], y[30:], batch_size=4, verbose=0)
    assert np.isclose(history.history["val_loss"][0], val_loss, rtol=1e-6)
    assert np.isclose(history.history["val_mae"][0], val_mae, rtol=1e-6)


def test_steps_per_epoch_on_an_infinite_dataset_carries_on_across_epochs():
    x, y = data()
    seen = []

    def record(xb, yb, row):
        seen.append(int(row[0]))
        return xb, yb
    dataset = Dataset.from_tensor_slices((x, y, np.arange(40))).batch(8).map(record).repeat()
    m = model()
    history = m.fit(dataset, steps_per_epoch=3, epochs=3, verbose=0)
    assert history.params["steps"] == 3 and len(history.history["loss"]) == 3
    assert seen == [0, 8, 16, 24, 32, 0, 8, 16, 24]
    with pytest.raises(ValueError, match="infinite dataset, you must specify the number of steps"):
        m.fit(dataset, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="infinite dataset"):
        m.evaluate(dataset, verbose=0)
    assert np.isfinite(m.evaluate(dataset, steps=2, verbose=0)[0])


def test_steps_beyond_a_finite_dataset_end_the_epoch_with_a_warning():
    x, y = data()
    m = model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = m.fit(Dataset.from_tensor_slices((x, y)).batch(10), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert sum("ran out of data" in str(w.message) for w in caught) == 1   # epoch 2: batch 4 of 4, then out


def test_shuffled_dataset_trains_and_the_order_follows_the_seed():
    x, y = data()
    a, b = model(), model()
    a.fit(Dataset.from_tensor_slices((x, y)).shuffle(40, seed=3).batch(8), epochs=2, verbose=0)
    b.fit(Dataset.from_tensor_slices((x, y)).shuffle(40, seed=3).batch(8), epochs=2, verbose=0)
    assert same_weights(a, b)


def test_dataset_arguments_checked_like_keras():
    x, y = data()
    m = model()
    with pytest.raises(ValueError, match="`y` should not be passed"):
        m.fit(Dataset.from_tensor_slices(x).batch(8), y, verbose=0)
    with pytest.raises(ValueError, match="`validation_split` is only supported for Tensors or NumPy arrays"):
        m.fit(Dataset.from_tensor_slices((x, y)).batch(8), validation_split=0.2, verbose=0)


def test_class_weight_with_a_dataset_equals_arrays():
    rng = np.random.RandomState(1)
    x = rng.randn(24, 3).astype(np.float32)
    labels = rng.randint(0, 3, size=24)
    weights = {0: 1.0, 1: 2.0, 2: 0.5}

    def classifier():
        K.utils.set_random_seed(2)
        m = K.Sequential([K.Input((3,)), K.layers.Dense(3, activation="softmax")])
        m.compile(K.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
        return m
    a, b = classifier(), classifier()
    a.fit(x, labels, batch_size=6, shuffle=False, class_weight=weights, epochs=2, verbose=0)
    b.fit(Dataset.from_tensor_slices((x, labels)).batch(6), class_weight=weights, epochs=2, verbose=0)
    assert same_weights(a, b)


class Batches(K.utils.PyDataset):
    def __init__(self, x, y, size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.size = x, y, size
        self.begins = self.ends = 0

    def __len__(self):
        return -(-len(self.x) // self.size)

    def __getitem__(self, index):
        return self.x[index * self.size:(index + 1) * self.size], self.y[index * self.size:(index + 1) * self.size]

    def on_epoch_begin(self):
        self.begins += 1

    def on_epoch_end(self):
        self.ends += 1


def test_fit_on_a_pydataset_equals_arrays():
    x, y = data()
    a, b = model(), model()
    batches = Batches(x, y, 8, workers=1)
    history = b.fit(batches, epochs=2, verbose=0)
    a.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert same_weights(a, b) and history.params["steps"] == 5
    assert (batches.begins, batches.ends) == (2, 2)
    assert K.utils.Sequence is K.utils.PyDataset


def test_endless_pydataset_needs_steps():
    x, y = data()

    class Endless(K.utils.PyDataset):
        num_batches = None

        def __getitem__(self, index):
            start = (index * 8) % 40
            return x[start:start + 8], y[start:start + 8]
    m = model()
    with pytest.raises(ValueError, match="must specify the number of steps"):
        m.fit(Endless(), epochs=1, verbose=0)
    history = m.fit(Endless(), steps_per_epoch=4, epochs=2, verbose=0)
    assert history.params["steps"] == 4 and len(history.history["loss"]) == 2

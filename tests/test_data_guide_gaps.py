"""tf.data features from TensorFlow's tf.data guide: unknown-rank generator elements in a tf.function,
counter, sample/choose_from_datasets, text and CSV files, py_function, iterator checkpoints."""
import numpy as np
import pytest

import tapeflow as tf


def test_function_loops_over_generator_of_unknown_shapes():
    @tf.function
    def total(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss
    ds = tf.data.Dataset.from_generator(lambda: [(1, 5), (2, 2), (7, 3)], (tf.int32, tf.int32))
    assert ds.element_spec[0].shape.rank is None
    assert int(total(ds)) == 8
    assert int(total(ds)) == 8     # a second call pulls a fresh pass


# ---------------------------------------------------------------- timeseries_dataset_from_array ---
import json  # noqa: E402
import os  # noqa: E402

_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "timeseries", "timeseries_expected.json")
_DATA = np.arange(30, dtype="float32").reshape(15, 2)
_TARGETS = np.arange(100, 115)


def _timeseries(case):
    kw = dict(case)
    targets = {None: None, "all": _TARGETS, "first5": _TARGETS[:5]}[kw.pop("targets", None)]
    return tf.keras.utils.timeseries_dataset_from_array(_DATA, targets, **kw)


def _plain(element):
    if isinstance(element, tuple):
        return [e.numpy().tolist() for e in element]
    return element.numpy().tolist()


@pytest.mark.parametrize("result", json.load(open(_FIXTURE))["results"], ids=lambda r: str(r["case"]))
def test_timeseries_dataset_matches_keras(result):
    ds = _timeseries(result["case"])
    assert [_plain(e) for e in ds] == result["elements"]
    assert int(ds.cardinality()) == result["cardinality"]
    specs = ds.element_spec if isinstance(ds.element_spec, tuple) else (ds.element_spec,)
    assert [s.shape.as_list() for s in specs] == result["shapes"]
    assert [s.dtype.name for s in specs] == result["dtypes"]


def test_timeseries_shuffle_is_a_seeded_permutation_reshuffled_each_epoch():
    make = lambda: tf.keras.utils.timeseries_dataset_from_array(  # noqa: E731
        _DATA, _TARGETS, sequence_length=3, shuffle=True, seed=5, batch_size=4)
    ds = make()
    epochs = [[(w.numpy(), t.numpy()) for w, t in ds] for _ in range(2)]
    for epoch in epochs:
        windows = np.concatenate([w for w, _ in epoch])
        targets = np.concatenate([t for _, t in epoch])
        assert sorted(targets.tolist()) == list(range(100, 113))
        for window, target in zip(windows, targets):       # each window still goes with its own target
            start = target - 100
            np.testing.assert_array_equal(window, _DATA[start:start + 3])
    order = lambda epoch: np.concatenate([t for _, t in epoch]).tolist()  # noqa: E731
    assert order(epochs[0]) != order(epochs[1])
    assert order(epochs[0]) == order([(w.numpy(), t.numpy()) for w, t in make()])


@pytest.mark.parametrize("kwargs, message", [
    (dict(sequence_length=3, sampling_rate=0), "`sampling_rate` must be higher than 0"),
    (dict(sequence_length=3, sequence_stride=0), "`sequence_stride` must be higher than 0"),
    (dict(sequence_length=3, start_index=20), "`start_index`"),
    (dict(sequence_length=3, end_index=20), "`end_index` must be lower than the length"),
    (dict(sequence_length=3, start_index=5, end_index=3), "`end_index` must be higher than `start_index`"),
])
def test_timeseries_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.keras.utils.timeseries_dataset_from_array(_DATA, None, **kwargs)


def test_timeseries_targets_too_short_for_start_index_is_a_clear_error():
    with pytest.raises(ValueError, match="has no target for the window"):
        tf.keras.utils.timeseries_dataset_from_array(_DATA, _TARGETS[:5], sequence_length=2, start_index=2)

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


# ---------------------------------------------------------------- counter, sampling ---
def test_counter_counts_forever_from_start_by_step():
    ds = tf.data.Dataset.counter(start=5, step=-2, dtype=tf.int32)
    assert ds.element_spec == tf.TensorSpec((), tf.int32)
    assert int(ds.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert list(ds.take(4).as_numpy_iterator()) == [5, 3, 1, -1]
    pairs = tf.data.Dataset.zip((tf.data.Dataset.counter(), tf.data.Dataset.range(100, 103)))
    assert list(pairs.as_numpy_iterator()) == [(0, 100), (1, 101), (2, 102)]


def test_sample_from_datasets_follows_the_weights_and_drops_empty_inputs():
    a = tf.data.Dataset.from_tensors(np.int64(0)).repeat()
    b = tf.data.Dataset.from_tensors(np.int64(1)).repeat()
    mixed = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.8, 0.2], seed=4)
    draws = np.array(list(mixed.take(4000).as_numpy_iterator()))
    # binomial(4000, 0.2): sd 25, so 0.2 +- 0.03 is a 4.8 sd band
    assert abs(draws.mean() - 0.2) < 0.03
    assert draws.tolist() == list(mixed.take(4000).as_numpy_iterator())    # seeded: the same each pass
    finite = tf.data.experimental.sample_from_datasets([tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)],
                                                       seed=1)
    assert sorted(finite.as_numpy_iterator()) == [0, 1, 2, 10, 11, 12, 13, 14]
    stopping = tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(10, 13), b], seed=1,
                                                    stop_on_empty_dataset=True)
    out = list(stopping.as_numpy_iterator())          # ends (b is infinite) once range(10, 13) runs dry
    assert [x for x in out if x != 1] == [10, 11, 12]
    with pytest.raises(ValueError, match="shape of `weights`"):
        tf.data.Dataset.sample_from_datasets([a, b], weights=[1.0])


def test_choose_from_datasets_takes_the_chosen_input_in_turn():
    datasets = [tf.data.Dataset.from_tensors("foo").repeat(), tf.data.Dataset.from_tensors("bar").repeat(),
                tf.data.Dataset.from_tensors("baz").repeat()]
    choice = tf.data.Dataset.range(3).repeat(2)
    out = list(tf.data.Dataset.choose_from_datasets(datasets, choice).as_numpy_iterator())
    assert out == [b"foo", b"bar", b"baz"] * 2
    short = [tf.data.Dataset.range(2), tf.data.Dataset.range(10, 20)]
    picks = tf.data.Dataset.from_tensor_slices(np.array([0, 1, 0, 0, 1], np.int64))
    assert list(tf.data.experimental.choose_from_datasets(short, picks).as_numpy_iterator()) == [0, 10, 1]
    assert list(tf.data.Dataset.choose_from_datasets(short, picks, stop_on_empty_dataset=False)
                .as_numpy_iterator()) == [0, 10, 1, 11]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        list(tf.data.Dataset.choose_from_datasets(short, tf.data.Dataset.range(5, 6)))
    with pytest.raises(TypeError, match="scalar `tf.int64`"):
        tf.data.Dataset.choose_from_datasets(short, tf.data.Dataset.range(2, output_type=tf.int32))


def test_rejection_resample_moves_the_class_balance_to_the_target():
    labels = (np.arange(4000) % 10 == 0).astype(np.int64)          # 10% positives
    ds = tf.data.Dataset.from_tensor_slices((np.arange(4000), labels))
    resampled = ds.rejection_resample(lambda x, y: y, target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1], seed=2)
    assert resampled.element_spec[0] == tf.TensorSpec((), tf.int64)       # class_func's dtype, as in TF
    out = list(resampled.as_numpy_iterator())
    classes = np.array([c for c, _ in out])
    assert all(c == y for c, (_, y) in out)                      # the class is the element's own label
    assert (classes == 1).sum() == 400                           # the rare class is always kept
    assert abs((classes == 0).mean() - 0.5) < 0.05               # negatives kept with probability 1/9
    via_apply = ds.apply(tf.data.experimental.rejection_resample(lambda x, y: y, [0.5, 0.5], seed=2))
    assert (np.array([c for c, _ in via_apply.as_numpy_iterator()]) == 1).sum() == 400


# ---------------------------------------------------------------- text files ---
def test_text_line_dataset_reads_the_lines_of_each_file(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"line one\r\nline two\n\nlast")
    b.write_bytes("caf\u00e9\n".encode())
    ds = tf.data.TextLineDataset([str(a), str(b)])
    assert ds.element_spec == tf.TensorSpec((), tf.string)
    assert list(ds.as_numpy_iterator()) == [b"line one", b"line two", b"", b"last", "caf\u00e9".encode()]
    survivors = tf.data.TextLineDataset(str(a)).skip(1).filter(lambda line: tf.not_equal(line, b""))
    assert list(survivors.as_numpy_iterator()) == [b"line two", b"last"]
    import gzip
    (tmp_path / "c.gz").write_bytes(gzip.compress(b"x\ny\n"))
    assert list(tf.data.TextLineDataset(str(tmp_path / "c.gz"), compression_type="GZIP").as_numpy_iterator()) \
        == [b"x", b"y"]
    with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
        list(tf.data.TextLineDataset(str(tmp_path / "missing.txt")))


_CSV = "survived,sex,age,n\n0,male,22.0,3\n1,female,38.0,4\n1,,,5\n"


def test_csv_dataset_parses_typed_columns_with_defaults(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_CSV)
    ds = tf.data.experimental.CsvDataset(str(path), [tf.int32, "unknown", 1.5, tf.int64], header=True)
    assert [s.dtype for s in ds.element_spec] == [tf.int32, tf.string, tf.float32, tf.int64]
    rows = list(ds.as_numpy_iterator())
    assert rows == [(0, b"male", 22.0, 3), (1, b"female", 38.0, 4), (1, b"unknown", 1.5, 5)]
    selected = tf.data.experimental.CsvDataset(str(path), [tf.int32, tf.int32], header=True, select_cols=[0, 3])
    assert list(selected.as_numpy_iterator()) == [(0, 3), (1, 4), (1, 5)]
    required = tf.data.experimental.CsvDataset(str(path), [tf.int32, tf.string, tf.float32, tf.int32], header=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record 2"):
        list(required)
    wrong = tf.data.experimental.CsvDataset(str(path), [tf.int32, tf.int32, tf.float32, tf.int32], header=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32: 'male'"):
        list(wrong)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 3 fields but have 4"):
        list(tf.data.experimental.CsvDataset(str(path), [tf.int32] * 3, header=True))


def test_make_csv_dataset_infers_types_and_splits_the_label(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_CSV)
    ds = tf.data.experimental.make_csv_dataset(str(path), batch_size=2, label_name="survived", shuffle=False,
                                               num_epochs=1)
    features_spec, label_spec = ds.element_spec
    assert list(features_spec) == ["sex", "age", "n"]
    assert [s.dtype for s in features_spec.values()] == [tf.string, tf.float32, tf.int32]
    assert label_spec == tf.TensorSpec((None,), tf.int32)
    batches = [({k: v.numpy().tolist() for k, v in f.items()}, y.numpy().tolist()) for f, y in ds]
    # what TensorFlow 2.21 gives for this file (empty fields take 0 and b'')
    assert batches == [({"sex": [b"male", b"female"], "age": [22.0, 38.0], "n": [3, 4]}, [0, 1]),
                       ({"sex": [b""], "age": [0.0], "n": [5]}, [1])]
    endless = tf.data.experimental.make_csv_dataset(str(path), batch_size=2, shuffle=False, label_name="survived")
    assert [y.numpy().tolist() for _, y in endless.take(4)] == [[0, 1], [1, 0], [1, 1], [0, 1]]   # epochs run on


# ---------------------------------------------------------------- py_function / numpy_function ---
def test_py_function_in_dataset_map_runs_python_on_eager_tensors():
    d = tf.data.Dataset.from_tensor_slices(["hello", "world"])
    d = d.map(lambda x: tf.py_function(func=lambda t: t.numpy().decode().upper(), inp=[x], Tout=tf.string))
    assert list(d.as_numpy_iterator()) == [b"HELLO", b"WORLD"]


def test_py_function_in_tf_function_calls_python_at_every_run():
    calls = []

    def double(x):
        calls.append(float(x.numpy()))
        return x.numpy() * 2

    @tf.function
    def f(x):
        return tf.py_function(double, [x], tf.float32) + 1.0
    assert float(f(tf.constant(2.0))) == 5.0
    assert float(f(tf.constant(3.0))) == 7.0
    assert calls == [2.0, 3.0]                 # not called while tracing; called at each run

    @tf.function
    def g(a, b):
        return tf.numpy_function(lambda u, v: (u + v, u * v), [a, b], [tf.float32, tf.int64])
    total, product = g(tf.constant(2.0), tf.constant(3.0))
    assert total.dtype == tf.float32 and float(total) == 5.0
    assert product.dtype == tf.int64 and int(product) == 6


def test_py_function_is_differentiable_eagerly_and_checks_tout():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.py_function(lambda v: v * v, [x], tf.float32)
    assert float(tape.gradient(y, x)) == 6.0           # d(x^2)/dx at 3
    with pytest.raises(TypeError, match="returned a float32 tensor where Tout expects int32"):
        tf.py_function(lambda v: v * 2.0, [x], tf.int32)
    with pytest.raises(ValueError, match="returned 1 values where Tout expects 2"):
        tf.numpy_function(lambda v: v, [1.0], [tf.float32, tf.float32])


def test_saving_a_function_that_calls_py_function_names_it(tmp_path):
    def shout(x):
        return x

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec((), tf.float32)])
        def call(self, x):
            return tf.py_function(shout, [x], tf.float32)
    m = M()
    assert float(m.call(tf.constant(1.5))) == 1.5
    target = tmp_path / "saved"
    with pytest.raises(ValueError, match="the Python function shout of a tf.py_function"):
        tf.saved_model.save(m, str(target))
    assert not target.exists()


# ---------------------------------------------------------------- iterator checkpoints ---
def _take(iterator, n):
    return [next(iterator).numpy().tolist() for _ in range(n)]


def test_checkpoint_restores_the_iterator_position_in_place_and_in_a_new_iterator(tmp_path):
    range_ds = tf.data.Dataset.range(20)
    iterator = iter(range_ds)
    ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "ckpts"), max_to_keep=3)
    assert _take(iterator, 5) == [0, 1, 2, 3, 4]
    path = manager.save()
    assert _take(iterator, 5) == [5, 6, 7, 8, 9]
    ckpt.restore(manager.latest_checkpoint)
    assert _take(iterator, 5) == [5, 6, 7, 8, 9]               # the guide's output
    fresh = iter(range_ds)
    tf.train.Checkpoint(step=tf.Variable(0), iterator=fresh).restore(path)
    assert _take(fresh, 3) == [5, 6, 7]


def test_checkpointed_shuffle_continues_with_the_same_order(tmp_path):
    ds = tf.data.Dataset.range(10).shuffle(4, seed=3).repeat(3).batch(3).prefetch(2)
    other = iter(ds)                            # another iterator: a different order of its own
    next(other)
    it = iter(ds)
    ckpt = tf.train.Checkpoint(iterator=it)
    _take(it, 4)
    path = ckpt.save(str(tmp_path / "c"))
    rest = [b.numpy().tolist() for b in it]
    ckpt.restore(path)
    assert [b.numpy().tolist() for b in it] == rest
    again = iter(ds)
    tf.train.Checkpoint(iterator=again).restore(path)
    assert [b.numpy().tolist() for b in again] == rest
    flat = sum(rest, [])
    assert len(flat) == 30 - 12


def test_iterator_checkpoint_refuses_what_it_cannot_replay(tmp_path):
    it = iter(tf.data.Dataset.range(5).shuffle(5))      # unseeded: a new dataset draws another seed
    next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "u"))
    other = iter(tf.data.Dataset.range(5).shuffle(5))
    tf.train.Checkpoint(iterator=other).restore(path)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different seed"):
        next(other)
    from tapeflow.saving import FileFormatError
    plain = iter(tf.data.Dataset.range(5))
    next(plain)
    with pytest.raises(FileFormatError, match=r"iterator._iterator_state: the variable has shape \(2,\)"):
        tf.train.Checkpoint(iterator=plain).restore(path)      # saved with one random node, this has none
    assert _take(plain, 4) == [1, 2, 3, 4]                     # the failed restore changed nothing


def test_comparing_a_string_tensor_with_a_python_str_compares_the_utf8_bytes():
    # the guide's filter: tf.not_equal(<first character of a line>, "0")
    assert bool(tf.equal(tf.constant(b"0"), "0"))
    assert not bool(tf.not_equal(tf.constant(b"0"), "0"))
    assert tf.convert_to_tensor("\u00e9", dtype=tf.string).numpy() == "\u00e9".encode("utf-8")
    lines = tf.data.Dataset.from_tensor_slices([b"0,male", b"1,female"])
    kept = lines.filter(lambda line: tf.not_equal(
        tf.py_function(lambda t: t.numpy()[:1], [line], tf.string), "0"))
    assert list(kept.as_numpy_iterator()) == [b"1,female"]

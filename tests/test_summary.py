"""tf.summary and the Keras TensorBoard callback, read back with TensorBoard's own event reader."""
import glob
import io
import os
import sys
import threading

import numpy as np
import pytest
from PIL import Image
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

import tapeflow as tf

keras = tf.keras


def read_run(logdir):
    """{tag: [(step, value, plugin name)]} of every event file in ``logdir``, via TensorBoard's reader."""
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        out[tag] = [(e.step, tensor_util.make_ndarray(e.tensor_proto), plugin) for e in acc.Tensors(tag)]
    return out


def test_scalar_histogram_text_and_image_round_trip(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    data = np.random.default_rng(0).standard_normal(1000)
    pixels = np.random.default_rng(1).random((3, 4, 5, 3))
    with writer.as_default(step=7):
        assert tf.summary.scalar("loss", tf.constant(0.25)) is True
        assert tf.summary.scalar("count", 3, step=8)
        assert tf.summary.histogram("weights", tf.constant(data), step=9, buckets=12)
        assert tf.summary.text("note", "hello *markdown*")
        assert tf.summary.image("pictures", pixels, max_outputs=2)
        with tf.name_scope("outer"):
            tf.summary.scalar("inner", 1.5)
    writer.close()
    files = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert len(files) == 1 and files[0].endswith(".v2")

    run = read_run(tmp_path)
    assert sorted(run) == ["count", "loss", "note", "outer/inner", "pictures", "weights"]
    assert [(s, float(v), p) for s, v, p in run["loss"]] == [(7, 0.25, "scalars")]
    assert [(s, float(v)) for s, v, _ in run["count"]] == [(8, 3.0)]
    assert [(s, float(v)) for s, v, _ in run["outer/inner"]] == [(7, 1.5)]

    step, buckets, plugin = run["weights"][0]
    assert (step, plugin, buckets.shape) == (9, "histograms", (12, 3))
    np.testing.assert_allclose(buckets[0, 0], data.min())
    np.testing.assert_allclose(buckets[-1, 1], data.max())
    np.testing.assert_allclose(buckets[1:, 0], buckets[:-1, 1])
    edges = np.linspace(data.min(), data.max(), 13)
    expected = np.histogram(data, bins=edges)[0]  # equal-width buckets, the last one closed
    np.testing.assert_array_equal(buckets[:, 2], expected)

    step, text, plugin = run["note"][0]
    assert (step, text.item(), plugin) == (7, b"hello *markdown*", "text")

    step, encoded, plugin = run["pictures"][0]
    assert (step, plugin, encoded[0], encoded[1], len(encoded)) == (7, "images", b"5", b"4", 4)
    for png, original in zip(encoded[2:], pixels):
        decoded = np.asarray(Image.open(io.BytesIO(png)))
        np.testing.assert_array_equal(decoded, np.clip(original * 255.5, 0, 255).astype(np.uint8))


def test_steps_defaults_and_recording_rules(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    assert tf.summary.scalar("no_writer", 1.0, step=0) is False
    assert not tf.summary.should_record_summaries()
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("x", 1.0)
        counter = tf.Variable(3, dtype=tf.int64)
        tf.summary.experimental.set_step(counter)
        tf.summary.scalar("from_variable", 1.0)
        counter.assign(4)
        tf.summary.scalar("from_variable", 2.0)  # the step is read at each write
        with writer.as_default(step=100):
            tf.summary.scalar("scoped", 0.0)
        assert tf.summary.experimental.get_step() is counter  # restored after the block
        with tf.summary.record_if(False):
            assert tf.summary.scalar("skipped", 1.0) is False
        with tf.summary.record_if(lambda: int(counter.numpy()) % 2 == 0):
            assert tf.summary.scalar("even", 1.0) is True
            counter.assign(5)
            assert tf.summary.scalar("even", 1.0) is False
        with pytest.raises(ValueError, match="expects a scalar"):
            tf.summary.scalar("vector", [1.0, 2.0])
        with pytest.raises(ValueError, match="integer scalar"):
            tf.summary.scalar("bad_step", 1.0, step=1.5)
        with pytest.raises(ValueError, match=r"shape \[k, h, w, c\]"):
            tf.summary.image("bad_image", np.zeros((4, 4)))
    tf.summary.experimental.set_step(None)
    writer.close()
    with pytest.raises(RuntimeError, match="is closed"):
        with writer.as_default(step=0):
            tf.summary.scalar("late", 1.0)
    run = read_run(tmp_path)
    assert sorted(run) == ["even", "from_variable", "scoped"]
    assert [(s, float(v)) for s, v, _ in run["from_variable"]] == [(3, 1.0), (4, 2.0)]
    assert [s for s, _, _ in run["scoped"]] == [100]
    assert [s for s, _, _ in run["even"]] == [4]


def test_default_writer_belongs_to_the_thread(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    seen = []
    with writer.as_default(step=1):
        thread = threading.Thread(target=lambda: seen.append(tf.summary.scalar("other_thread", 1.0, step=1)))
        thread.start()
        thread.join()
        assert tf.summary.scalar("this_thread", 1.0)
    writer.close()
    assert seen == [False]
    assert sorted(read_run(tmp_path)) == ["this_thread"]


def test_missing_tensorboard_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.event_file_writer", None)
    with pytest.raises(ImportError, match=r"pip install tapeflow\[tensorboard\]"):
        tf.summary.create_file_writer(str(tmp_path))


def test_tensorboard_callback_writes_train_and_validation_runs(tmp_path):
    keras.utils.set_random_seed(2)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    callback = keras.callbacks.TensorBoard(str(tmp_path), histogram_freq=2, update_freq=3)
    history = model.fit(x, y, epochs=3, batch_size=8, validation_split=0.25, verbose=0, callbacks=[callback])
    assert sorted(os.listdir(tmp_path)) == ["train", "validation"]

    train = read_run(tmp_path / "train")
    assert sorted(train) == ["batch_loss", "batch_mae", "bias/histogram", "epoch_learning_rate", "epoch_loss",
                             "epoch_mae", "keras", "kernel/histogram"]
    for name in ("loss", "mae"):
        assert [s for s, _, _ in train["epoch_" + name]] == [0, 1, 2]
        np.testing.assert_allclose([float(v) for _, v, _ in train["epoch_" + name]], history.history[name],
                                   rtol=1e-6)
    np.testing.assert_allclose([float(v) for _, v, _ in train["epoch_learning_rate"]], [0.05] * 3, rtol=1e-6)
    # 4 batches per epoch, 12 in all: batch summaries every 3rd global batch.
    assert [s for s, _, _ in train["batch_loss"]] == [3, 6, 9, 12]
    # Histograms at epochs 0 and 2, one per weight of each layer (Keras tags them by the weight's name).
    assert [s for s, _, _ in train["kernel/histogram"]] == [0, 0, 2, 2]
    counts = sorted(int(v[:, 2].sum()) for s, v, _ in train["kernel/histogram"] if s == 2)
    assert counts == [2, 6]
    final_kernel = model.layers[0].kernel.numpy()
    assert any(np.isclose(v[0, 0], final_kernel.min()) and np.isclose(v[-1, 1], final_kernel.max())
               for s, v, _ in train["kernel/histogram"] if s == 2)
    assert b'"class_name": "Sequential"' in train["keras"][0][1].item()

    validation = read_run(tmp_path / "validation")
    assert sorted(validation) == ["epoch_loss", "epoch_mae", "evaluation_loss_vs_iterations",
                                  "evaluation_mae_vs_iterations"]
    np.testing.assert_allclose([float(v) for _, v, _ in validation["epoch_loss"]], history.history["val_loss"],
                               rtol=1e-6)
    assert [s for s, _, _ in validation["evaluation_loss_vs_iterations"]] == [4, 8, 12]


def test_tensorboard_callback_arguments():
    with pytest.raises(ValueError, match="Profiling is not available"):
        keras.callbacks.TensorBoard(profile_batch=2)
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(update_freq="sometimes")
    assert keras.callbacks.TensorBoard(update_freq="batch").update_freq == 1

"""ModelCheckpoint: Keras's file-name rules and formatting, save_best_only, weights only, save_freq."""
import os

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def regression_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def small_model():
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model


def test_filepath_rules():
    with pytest.raises(ValueError, match=r"must end in `\.keras`"):
        keras.callbacks.ModelCheckpoint("ckpt.h5")
    with pytest.raises(ValueError, match=r"save_weights_only=True.*`\.weights\.h5`"):
        keras.callbacks.ModelCheckpoint("ckpt.keras", save_weights_only=True)
    with pytest.raises(ValueError, match="save_freq"):
        keras.callbacks.ModelCheckpoint("ckpt.keras", save_freq="batch")


def test_every_epoch_with_formatted_names(tmp_path):
    x, y = regression_data()
    model = small_model()
    pattern = str(tmp_path / "ckpt-{epoch:02d}-{val_loss:.2f}.keras")
    history = model.fit(x, y, epochs=3, batch_size=8, validation_split=0.25, verbose=0,
                        callbacks=[keras.callbacks.ModelCheckpoint(pattern)])
    expected = sorted(f"ckpt-{e + 1:02d}-{v:.2f}.keras" for e, v in enumerate(history.history["val_loss"]))
    assert sorted(os.listdir(tmp_path)) == expected
    last = keras.models.load_model(tmp_path / expected[-1])
    np.testing.assert_array_equal(last.predict(x, verbose=0), model.predict(x, verbose=0))
    assert int(np.asarray(last.optimizer.iterations)) == int(np.asarray(model.optimizer.iterations))


def test_save_best_only_keeps_the_best_epoch(tmp_path, capsys):
    x, y = regression_data()
    model = small_model()
    path = str(tmp_path / "best.weights.h5")
    seen = {}

    class Recorder(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen[epoch] = ([w.copy() for w in self.model.get_weights()], logs["val_loss"])
    checkpoint = keras.callbacks.ModelCheckpoint(path, monitor="val_loss", save_best_only=True,
                                                 save_weights_only=True, verbose=1)
    # Validation targets of the opposite sign: the better the fit, the worse val_loss gets.
    model.fit(x, y, epochs=5, batch_size=8, validation_data=(x[:10], -y[:10]), verbose=0,
              callbacks=[Recorder(), checkpoint])
    best_epoch = min(seen, key=lambda e: seen[e][1])
    assert best_epoch < 4
    restored = small_model()
    restored.load_weights(path)
    for a, b in zip(restored.get_weights(), seen[best_epoch][0]):
        np.testing.assert_array_equal(a, b)
    assert checkpoint.best == pytest.approx(seen[best_epoch][1])
    out = capsys.readouterr().out
    assert f"Epoch 1: val_loss improved from None to {seen[0][1]:.5f}, saving model to {path}" in out
    assert f"Epoch 1: finished saving model to {path}" in out
    assert f"Epoch 5: val_loss did not improve from {seen[best_epoch][1]:.5f}" in out


def test_max_mode_from_metric_direction_and_initial_threshold(tmp_path):
    x, y = regression_data()
    model = small_model()
    path = tmp_path / "m.keras"
    checkpoint = keras.callbacks.ModelCheckpoint(str(path), monitor="loss", mode="max", save_best_only=True,
                                                 initial_value_threshold=1e9)
    model.fit(x, y, epochs=2, verbose=0, callbacks=[checkpoint])
    assert not path.exists()   # no loss is above the threshold in max mode


def test_missing_monitor_warns_and_skips(tmp_path):
    x, y = regression_data()
    path = tmp_path / "m.keras"
    with pytest.warns(UserWarning, match="val_loss available"):
        small_model().fit(x, y, epochs=1, verbose=0, callbacks=[
            keras.callbacks.ModelCheckpoint(str(path), save_best_only=True)])
    assert not path.exists()


def test_integer_save_freq_counts_batches(tmp_path):
    x, y = regression_data()
    pattern = str(tmp_path / "sub" / "e{epoch}-b{batch}.weights.h5")
    small_model().fit(x, y, epochs=2, batch_size=10, verbose=0, callbacks=[
        keras.callbacks.ModelCheckpoint(pattern, save_weights_only=True, save_freq=3)])
    # 4 batches per epoch, a save every 3 batches: after batches 3 (epoch 1), 2 and (epoch 2) ...
    assert sorted(os.listdir(tmp_path / "sub")) == ["e1-b3.weights.h5", "e2-b2.weights.h5"]


def test_unknown_format_field_names_the_filepath(tmp_path):
    x, y = regression_data()
    with pytest.raises(KeyError, match="Failed to format this callback filepath"):
        small_model().fit(x, y, epochs=1, verbose=0, callbacks=[
            keras.callbacks.ModelCheckpoint(str(tmp_path / "{nope}.keras"))])

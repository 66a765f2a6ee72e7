"""Callbacks: hook order, History, EarlyStopping (patience, baseline, restore_best_weights),
LearningRateScheduler, ReduceLROnPlateau, CSVLogger, LambdaCallback, TerminateOnNaN."""
import csv

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
C = K.callbacks
rng = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def fresh_session():
    K.backend.clear_session()
    yield


def data(n=16):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0], [-1.0], [2.0]], np.float32)).astype(np.float32)


def linear_model(lr=0.05):
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(lr), "mse")
    return model


class Scripted(C.Callback):
    """Replaces the monitored value at the end of every epoch with the next scripted one."""

    def __init__(self, key, values):
        super().__init__()
        self.key, self.values = key, list(values)

    def on_epoch_end(self, epoch, logs=None):
        logs[self.key] = self.values[epoch]


def test_hook_order_during_fit_with_validation():
    calls = []

    hooks = ["on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
             "on_train_batch_end", "on_batch_begin", "on_batch_end", "on_test_begin", "on_test_end",
             "on_test_batch_begin", "on_test_batch_end"]

    def recording(name, base):
        def hook(self, *args, **kwargs):
            calls.append(name)
            return base(self, *args, **kwargs)  # the base train-batch hooks call the on_batch_* aliases
        return hook
    Recorder = type("Recorder", (C.Callback,), {h: recording(h, getattr(C.Callback, h)) for h in hooks})
    x, y = data(8)
    recorder = Recorder()
    linear_model().fit(x, y, batch_size=4, epochs=1, validation_data=(x[:4], y[:4]), verbose=0,
                       callbacks=[recorder])
    assert calls == ["on_train_begin", "on_epoch_begin", "on_train_batch_begin", "on_batch_begin",
                     "on_train_batch_end", "on_batch_end", "on_train_batch_begin", "on_batch_begin",
                     "on_train_batch_end", "on_batch_end",
                     "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_end", "on_epoch_end",
                     "on_train_end"]
    assert recorder.params == {"verbose": 0, "epochs": 1, "steps": 2}
    assert isinstance(recorder.model, K.Sequential)


def test_early_stopping_counts_patience_and_prints_on_train_end(capsys):
    x, y = data()
    model = linear_model(0.0)
    stopper = C.EarlyStopping(monitor="loss", patience=2, verbose=1)
    history = model.fit(x, y, epochs=10, verbose=0,
                        callbacks=[Scripted("loss", [5, 4, 4.5, 4.2, 3, 1, 1, 1, 1, 1]), stopper])
    # best at epoch 2 (index 1); two epochs without improvement -> stops at epoch index 3
    assert history.epoch == [0, 1, 2, 3] and stopper.stopped_epoch == 3 and stopper.best == 4
    assert capsys.readouterr().out == "Epoch 4: early stopping\n"


def test_early_stopping_min_delta_mode_and_baseline():
    x, y = data()
    stopper = C.EarlyStopping(monitor="val_accuracy", patience=1, min_delta=0.05)
    values = [0.5, 0.52, 0.53, 0.9]
    history = linear_model(0.0).fit(x, y, epochs=4, verbose=0,
                                    callbacks=[Scripted("val_accuracy", values), stopper])
    assert history.epoch == [0, 1]  # accuracy is maximized; +0.02 is not an improvement of 0.05
    plateau = [3, 2, 1.5, 1.5, 1.5, 1.5, 1.5]
    baseline = C.EarlyStopping(monitor="loss", patience=2, baseline=1.0, mode="min")
    history = linear_model(0.0).fit(x, y, epochs=7, verbose=0, callbacks=[Scripted("loss", plateau), baseline])
    assert history.epoch == [0, 1, 2, 3]  # improvements above the baseline do not reset the wait
    no_baseline = C.EarlyStopping(monitor="loss", patience=2, mode="min")
    history = linear_model(0.0).fit(x, y, epochs=7, verbose=0, callbacks=[Scripted("loss", plateau), no_baseline])
    assert history.epoch == [0, 1, 2, 3, 4]
    unknown = C.EarlyStopping(monitor="custom_score")
    with pytest.raises(ValueError, match="isn't able to automatically determine"):
        linear_model().fit(x, y, epochs=1, verbose=0, callbacks=[Scripted("custom_score", [1.0]), unknown])


def test_early_stopping_restores_the_best_weights_even_without_stopping(capsys):
    x, y = data()
    model = linear_model(0.05)
    snapshots = []
    keeper = C.LambdaCallback(on_epoch_end=lambda epoch, logs: snapshots.append(model.get_weights()))
    stopper = C.EarlyStopping(monitor="val_loss", patience=10, restore_best_weights=True, verbose=1)
    model.fit(x, y, epochs=4, verbose=0, callbacks=[keeper, Scripted("val_loss", [3.0, 1.0, 2.0, 2.5]), stopper])
    for restored, best in zip(model.get_weights(), snapshots[1]):
        assert np.array_equal(restored, best)
    assert capsys.readouterr().out == "Restoring model weights from the end of the best epoch: 2.\n"


def test_learning_rate_scheduler_sets_logs_and_prints(capsys):
    x, y = data()
    model = linear_model(0.1)
    scheduler = C.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch > 0 else lr, verbose=1)
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[scheduler])
    assert np.allclose(history.history["learning_rate"], [0.1, 0.05, 0.025])
    assert np.isclose(float(model.optimizer.learning_rate.numpy()), 0.025)
    out = capsys.readouterr().out
    assert "\nEpoch 2: LearningRateScheduler setting learning rate to 0.05000000074505806.\n" in out
    one_arg = C.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))
    history = linear_model().fit(x, y, epochs=2, verbose=0, callbacks=[one_arg])
    assert np.allclose(history.history["learning_rate"], [0.01, 0.02])


def test_reduce_lr_on_plateau():
    x, y = data()
    model = linear_model(1.0)
    reducer = C.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=2, min_lr=0.2)
    history = model.fit(x, y, epochs=8, verbose=0,
                        callbacks=[Scripted("loss", [1, 1, 1, 1, 1, 1, 1, 1]), reducer])
    # no improvement after epoch 1: halve at epochs 3 and 5, then clamp at min_lr
    assert np.allclose(history.history["learning_rate"], [1, 1, 1, 0.5, 0.5, 0.25, 0.25, 0.2])
    with pytest.raises(ValueError, match="factor >= 1.0"):
        C.ReduceLROnPlateau(factor=2.0)


def test_csv_logger_writes_sorted_columns(tmp_path):
    x, y = data()
    path = tmp_path / "log.csv"
    model = linear_model()
    model.compile(K.optimizers.SGD(0.01), "mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=0, callbacks=[C.CSVLogger(str(path))])
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "loss", "mae", "val_loss", "val_mae"]
    assert [int(r[0]) for r in rows[1:]] == [0, 1]
    assert np.allclose([float(r[2]) for r in rows[1:]], history.history["mae"])
    model.fit(x, y, epochs=1, verbose=0, callbacks=[C.CSVLogger(str(path), append=True)])
    rows = list(csv.reader(open(path)))
    assert len(rows) == 4 and rows[3][0] == "0"


def test_lambda_callback_and_terminate_on_nan(capsys):
    x, y = data(8)
    counts = {"batches": 0, "epochs": 0}
    cb = C.LambdaCallback(on_train_batch_end=lambda b, logs: counts.__setitem__("batches", counts["batches"] + 1),
                          on_epoch_end=lambda e, logs: counts.__setitem__("epochs", counts["epochs"] + 1))
    linear_model().fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[cb])
    assert counts == {"batches": 6, "epochs": 3}
    with pytest.raises(ValueError, match="unknown hooks"):
        C.LambdaCallback(on_epoch_ends=print)
    bad = y.copy()
    bad[5] = np.nan
    history = linear_model().fit(x, bad, batch_size=4, epochs=3, shuffle=False, verbose=0,
                                 callbacks=[C.TerminateOnNaN()])
    assert history.epoch == [0]
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out


def test_history_is_returned_and_set_on_the_model():
    x, y = data()
    model = linear_model()
    history = model.fit(x, y, epochs=2, verbose=0)
    assert isinstance(history, C.History) and model.history is history
    assert history.epoch == [0, 1] and len(history.history["loss"]) == 2
    assert history.history["loss"][1] < history.history["loss"][0]

"""Callbacks (``keras.callbacks``): hooks into fit, evaluate and predict."""
import csv
import math
import os
import time
import warnings

import numpy as np

from ..utils.progbar import Progbar
from ..serialization_lib import keras_export


@keras_export("keras.callbacks.Callback")
class Callback:
    """Base class; ``self.model`` and ``self.params`` are set before training starts."""

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """Alias of on_train_batch_begin (kept for older callbacks)."""

    def on_batch_end(self, batch, logs=None):
        """Alias of on_train_batch_end (kept for older callbacks)."""

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass


def _overrides(callback, *names):
    return any(getattr(type(callback), n) is not getattr(Callback, n) for n in names)


_BATCH_HOOKS = {
    "on_train_batch_begin": ("on_train_batch_begin", "on_batch_begin"),
    "on_train_batch_end": ("on_train_batch_end", "on_batch_end"),
    "on_test_batch_begin": ("on_test_batch_begin",),
    "on_test_batch_end": ("on_test_batch_end",),
    "on_predict_batch_begin": ("on_predict_batch_begin",),
    "on_predict_batch_end": ("on_predict_batch_end",),
}


@keras_export("keras.callbacks.CallbackList")
class CallbackList(Callback):
    """Calls every callback in order; adds History and the progress bar when asked."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks) if callbacks else []
        for cb in self.callbacks:
            if not isinstance(cb, Callback) and not hasattr(cb, "on_epoch_end"):
                raise TypeError(f"Expected a Callback instance, got {cb!r} of type {type(cb).__name__}")
        history = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        progbar = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if history is None and add_history:
            self.callbacks.append(History())
        if progbar is None and add_progbar:
            self.callbacks.append(ProgbarLogger())
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)
        self._batch_callbacks = {hook: [cb for cb in self.callbacks if not isinstance(cb, Callback)
                                        or _overrides(cb, *names)] for hook, names in _BATCH_HOOKS.items()}

    def append(self, callback):
        self.callbacks.append(callback)
        for hook, names in _BATCH_HOOKS.items():
            if _overrides(callback, *names):
                self._batch_callbacks[hook].append(callback)

    def set_params(self, params):
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        for cb in self.callbacks:
            cb.set_model(model)

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def _call_batch(self, hook, batch, logs):
        for cb in self._batch_callbacks[hook]:
            getattr(cb, hook)(batch, logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch("on_predict_batch_end", batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)


@keras_export("keras.callbacks.History")
class History(Callback):
    """Records the logs of every epoch: ``history.history['loss']`` etc.; ``fit`` returns it."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


@keras_export("keras.callbacks.ProgbarLogger")
class ProgbarLogger(Callback):
    """Prints ``Epoch i/N`` and the progress bar (fit), or just the bar (evaluate, predict)."""

    def __init__(self):
        super().__init__()
        self.verbose = 1
        self.epochs = 1
        self.target = None
        self.progbar = None
        self._called_in_fit = False

    def set_params(self, params):
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def _reset(self):
        if self.progbar is not None:
            self.progbar.close()
        self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step")
        self._seen = 0

    def _update(self, batch, logs):
        self._seen = batch + 1
        if self.progbar is None:
            self._reset()
        self.progbar.update(self._seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        if self.progbar is None:
            self._reset()
        if self.target is None:
            self.target = self._seen
            self.progbar.target = self.target
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_train_end(self, logs=None):
        self._called_in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_predict_end(self, logs=None):
        self._finalize(None)


def _monitor_direction(model, monitor):
    """'min' or 'max' for a monitored quantity, from its name and the model's metrics."""
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if name.endswith("loss"):
        return "min"
    metrics = []
    for m in (getattr(model, "metrics", None) or []):
        metrics.extend(m.metrics if hasattr(m, "metrics") else [m])
    for m in metrics:
        if getattr(m, "name", None) == name and getattr(m, "_direction", None):
            return "max" if m._direction == "up" else "min"
    lowered = name.lower()
    if lowered in ("acc", "accuracy", "auc") or lowered.endswith(("accuracy", "_acc", "auc", "precision", "recall")):
        return "max"
    if lowered.endswith(("error", "mse", "mae", "mape", "msle", "crossentropy", "hinge", "divergence")):
        return "min"
    return None


class _MonitorMixin:
    def _resolve_mode(self, owner_name):
        if self.mode == "min":
            return "min"
        if self.mode == "max":
            return "max"
        direction = _monitor_direction(self.model, self.monitor)
        if direction is None:
            raise ValueError(f"{owner_name} callback received monitor={self.monitor}, but tapeflow isn't able to "
                             "automatically determine whether that metric should be maximized or minimized. Pass "
                             "`mode='max'` in order to monitor based on the highest metric value, or pass "
                             "`mode='min'` in order to use the lowest value.")
        return direction


@keras_export("keras.callbacks.EarlyStopping")
class EarlyStopping(_MonitorMixin, Callback):
    """Stops training when ``monitor`` has not improved for ``patience`` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0
        self._direction = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0
        self._direction = None

    def _improves(self, value, reference):
        if reference is None:
            return True
        if self._direction == "min":
            return value - self.min_delta < reference
        return value - self.min_delta > reference

    def on_epoch_end(self, epoch, logs=None):
        if self._direction is None:
            self._direction = self._resolve_mode("EarlyStopping")
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. Available "
                          f"metrics are: {','.join(logs or {})}", stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._improves(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


def _get_lr(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "learning_rate"):
        raise ValueError('The optimizer must have a "learning_rate" attribute.')
    return float(np.asarray(getattr(optimizer.learning_rate, "numpy", lambda: optimizer.learning_rate)()))


def _set_lr(model, value):
    model.optimizer.learning_rate = float(value)


@keras_export("keras.callbacks.LearningRateScheduler")
class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to ``schedule(epoch, lr)``."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = _get_lr(self.model)
        try:
            lr = self.schedule(epoch, lr)
        except TypeError:  # a schedule of the epoch only
            lr = self.schedule(epoch)
        lr = float(np.asarray(getattr(lr, "_value", lr)))
        if not math.isfinite(lr):
            raise ValueError(f'The output of the "schedule" function should be a float. Got: {lr}')
        _set_lr(self.model, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {_get_lr(self.model)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _get_lr(self.model)


@keras_export("keras.callbacks.ReduceLROnPlateau")
class ReduceLROnPlateau(_MonitorMixin, Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` stops improving for ``patience`` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to ReduceLROnPlateau: {kwargs}")
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self):
        self.wait = 0
        self.cooldown_counter = 0
        self.best = None
        self._direction = None

    def on_train_begin(self, logs=None):
        self._reset()

    def _improves(self, current):
        if self.best is None:
            return True
        if self._direction == "min":
            return current < self.best - self.min_delta
        return current > self.best + self.min_delta

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        if self._direction is None:
            self._direction = self._resolve_mode("ReduceLROnPlateau")
        logs["learning_rate"] = _get_lr(self.model)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", stacklevel=2)
            return
        in_cooldown = self.cooldown_counter > 0
        if in_cooldown:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improves(current):
            self.best = current
            self.wait = 0
        elif not in_cooldown:
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = _get_lr(self.model)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    _set_lr(self.model, new_lr)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


@keras_export("keras.callbacks.CSVLogger")
class CSVLogger(Callback):
    """Writes one CSV row per epoch: ``epoch`` then the log keys (sorted)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.writer = None
        self.csv_file = None

    def on_train_begin(self, logs=None):
        write_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                write_header = not bool(f.readline())
        self._write_header = write_header
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys = None
        self.writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}

        def handle(value):
            if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) > 0:
                return f'"[{", ".join(map(str, np.ravel(value)))}]"'
            return value
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend("val_" + k for k in list(self.keys))
        if self.writer is None:
            sep = self.sep

            class Dialect(csv.excel):
                delimiter = sep
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=Dialect)
            if self._write_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, handle(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
            self.csv_file = None
        self.writer = None


@keras_export("keras.callbacks.LambdaCallback")
class LambdaCallback(Callback):
    """A callback made of plain functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    _HOOKS = ("on_epoch_begin", "on_epoch_end", "on_train_begin", "on_train_end", "on_train_batch_begin",
              "on_train_batch_end", "on_batch_begin", "on_batch_end", "on_test_begin", "on_test_end",
              "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
              "on_predict_batch_begin", "on_predict_batch_end")

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(kwargs, on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        unknown = set(given) - set(self._HOOKS)
        if unknown:
            raise ValueError(f"LambdaCallback got unknown hooks: {sorted(unknown)}. Known hooks: {self._HOOKS}")
        self._functions = {k: v for k, v in given.items() if v is not None}

    def _dispatch(self, hook, *args):
        fn = self._functions.get(hook)
        if fn is not None:
            fn(*args)

    def on_epoch_begin(self, epoch, logs=None):
        self._dispatch("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._dispatch("on_epoch_end", epoch, logs)

    def on_train_begin(self, logs=None):
        self._dispatch("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._dispatch("on_train_end", logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._dispatch("on_train_batch_begin", batch, logs)
        self._dispatch("on_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._dispatch("on_train_batch_end", batch, logs)
        self._dispatch("on_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._dispatch("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._dispatch("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._dispatch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._dispatch("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._dispatch("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._dispatch("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._dispatch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._dispatch("on_predict_batch_end", batch, logs)


@keras_export("keras.callbacks.TerminateOnNaN")
class TerminateOnNaN(Callback):
    """Stops training as soon as the batch loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(np.asarray(loss))):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


@keras_export("keras.callbacks.ModelCheckpoint")
class ModelCheckpoint(_MonitorMixin, Callback):
    """Saves the model (``.keras``) or its weights (``.weights.h5``) during training.

    ``filepath`` may hold format fields filled from the epoch (1-based), the
    batch (with an integer ``save_freq``) and the logs: ``"ckpt-{epoch:02d}-
    {val_loss:.2f}.keras"``. With ``save_best_only`` the model is saved only
    when ``monitor`` improves on the best value so far (``mode`` 'min',
    'max' or 'auto', starting from ``initial_value_threshold``). Saving goes
    through ``model.save`` / ``model.save_weights`` (tapeflow.saving): each
    file is written beside its target and renamed into place.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath = os.fspath(filepath)
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
                             f"end in `.weights.h5` (Keras weights format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)
                                         and save_freq > 0):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or a positive "
                             "integer (a number of batches).")
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"ModelCheckpoint mode '{mode}' is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = mode
        self.save_freq = save_freq
        self.initial_value_threshold = initial_value_threshold
        self.best = initial_value_threshold
        self._direction = None
        self._batches_since_save = 0
        self._current_epoch = 0

    def on_train_begin(self, logs=None):
        self._batches_since_save = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs or {})
        fields["epoch"] = epoch + 1
        if batch is not None:
            fields["batch"] = batch + 1
        try:
            return self.filepath.format(**fields)
        except (KeyError, IndexError, ValueError) as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e!r}') from e

    def _improves(self, current):
        if self.best is None:
            return True
        return current < self.best if self._direction == "min" else current > self.best

    def _should_save(self, epoch, logs, filepath):
        if not self.save_best_only:
            return True
        if self._direction is None:
            self._direction = self._resolve_mode("ModelCheckpoint")
        current = (logs or {}).get(self.monitor)
        if current is None or np.ndim(current) > 0:
            warnings.warn(f"Can save best model only with {self.monitor} available (as a scalar), skipping.",
                          stacklevel=3)
            return False
        current = float(np.asarray(current))
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._improves(current):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, saving model "
                      f"to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save(self, epoch, batch, logs):
        filepath = self._file_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            from tapeflow.saving.atomic import make_directories   # created durably, like the file saved in it
            make_directories(directory)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")


@keras_export("keras.callbacks.BackupAndRestore")
class BackupAndRestore(Callback):
    """Backs up the training state so that an interrupted ``fit`` resumes where it stopped.

    At the end of every epoch (or every ``save_freq`` batches) the model's weights and optimizer state
    go to ``backup_dir/latest.weights.h5`` and the epoch reached to ``backup_dir/training_metadata.json``.
    A later ``fit`` with the same callback loads them in ``on_train_begin`` and starts at that epoch. With
    ``double_checkpoint=True`` the previous backup is kept as ``_latest.weights.h5`` and used when the
    latest cannot be read. With ``delete_checkpoint=True`` the directory is removed when training ends.
    Writes are atomic; a damaged backup raises ``tapeflow.saving.FileFormatError``.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. Expected "
                             "either 'epoch' or an integer value.")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._prev_weights_path = os.path.join(self.backup_dir, "_latest.weights.h5")
        self._prev_metadata_path = os.path.join(self.backup_dir, "_training_metadata.json")
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def on_train_begin(self, logs=None):
        from tapeflow.saving import FileFormatError
        if not self.model.built:
            raise ValueError("To use the BackupAndRestore callback, you model must be built before you call "
                             f"`fit()`. Model {self.model} is unbuilt. You can build it beforehand by calling it on "
                             "a batch of data.")
        try:
            self._load(self._weights_path, self._metadata_path)
        except (OSError, FileFormatError):
            if not (self.double_checkpoint and os.path.exists(self._prev_weights_path)):
                raise
            self._load(self._prev_weights_path, self._prev_metadata_path)

    def _load(self, weights_path, metadata_path):
        if os.path.exists(weights_path):
            self.model.load_weights(weights_path)
        if os.path.exists(metadata_path):
            self.model._initial_epoch = self._read_epoch(metadata_path)

    @staticmethod
    def _read_epoch(path):
        import json
        from tapeflow.saving import FileFormatError
        with open(path, "rb") as f:
            raw = f.read(1 << 16)
        try:
            metadata = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise FileFormatError(f"Cannot read the backup metadata '{path}': it is not JSON ({e}).") from e
        epoch = metadata.get("epoch") if isinstance(metadata, dict) else None
        if type(epoch) is not int or epoch < 0:
            raise FileFormatError(f"Cannot read the backup metadata '{path}': 'epoch' must be a non-negative "
                                  f"integer, got {epoch!r}.")
        return epoch

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save()

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_seen_since_last_saving += batch + 1 if batch <= self._last_batch_seen \
            else batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save()

    def _save(self):
        import json
        import shutil
        from tapeflow.saving.atomic import atomic_file
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for source, target in ((self._weights_path, self._prev_weights_path),
                                   (self._metadata_path, self._prev_metadata_path)):
                if os.path.exists(source):
                    with atomic_file(target) as tmp:
                        shutil.copyfile(source, tmp)
        self.model.save_weights(self._weights_path, overwrite=True)
        with atomic_file(self._metadata_path) as tmp:
            with open(tmp, "w") as f:
                json.dump({"epoch": self._current_epoch, "batch": self._last_batch_seen}, f)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            import shutil
            shutil.rmtree(self.backup_dir)


@keras_export("keras.callbacks.TensorBoard")
class TensorBoard(Callback):
    """Writes TensorBoard logs: ``log_dir/train`` and ``log_dir/validation`` event files.

    Every epoch: ``epoch_<metric>`` (and ``epoch_learning_rate``) at step ``epoch`` in ``train``, the
    ``val_`` metrics as ``epoch_<metric>`` in ``validation``, and after each evaluation
    ``evaluation_<metric>_vs_iterations`` at step ``optimizer.iterations`` in ``validation``. With an
    integer ``update_freq`` (or ``"batch"`` = 1), ``batch_<metric>`` every that many batches at the
    global batch number; ``tf.summary`` calls inside the model then go to ``train`` at that step too.
    ``histogram_freq``: weight histograms ``<weight name>/histogram`` every that many epochs (and
    ``<weight name>/image`` with ``write_images``). ``write_graph``: the model's JSON config as a
    ``keras`` summary for Sequential and functional models. Profiling and embeddings are not available.
    Needs the ``tensorboard`` package (``pip install tapeflow[tensorboard]``).
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        if profile_batch not in (0, None, "0", (0, 0)):
            raise ValueError(f"Profiling is not available in tapeflow. Received: profile_batch={profile_batch} "
                             "(must be 0)")
        if embeddings_freq:
            raise ValueError("Embedding visualisation (the TensorBoard projector) is not available in tapeflow. "
                             f"Received: embeddings_freq={embeddings_freq} (must be 0)")
        update_freq = 1 if update_freq == "batch" else update_freq
        if update_freq != "epoch" and (isinstance(update_freq, bool) or not isinstance(update_freq, int)
                                       or update_freq <= 0):
            raise ValueError(f"`update_freq` must be 'epoch', 'batch' or a positive integer. Received: "
                             f"update_freq={update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers = {}
        self._contexts = []
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._train_step = None
        self._batch_start_time = 0.0
        self._epoch_start_time = 0.0
        self._previous_epoch_iterations = 0

    @property
    def summary(self):
        from tapeflow import summary
        return summary

    def set_model(self, model):
        super().set_model(model)
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        if self.write_graph:
            self._write_keras_model_summary()

    def _writer(self, which):
        if which not in self._writers:
            self._writers[which] = self.summary.create_file_writer(
                self._train_dir if which == "train" else self._val_dir)
        return self._writers[which]

    def _write_keras_model_summary(self):
        if type(self.model).__name__ not in ("Functional", "Sequential"):
            return
        writer = self._writer("train")  # first: without tensorboard it raises the ImportError saying what to install
        from tensorboard.compat.proto import summary_pb2
        try:
            config = self.model.to_json()
        except Exception as e:  # noqa: BLE001 - a model that cannot be described still trains (Keras warns too)
            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {e}", stacklevel=3)
            return
        metadata = summary_pb2.SummaryMetadata()
        metadata.plugin_data.plugin_name = "graph_keras_model"
        metadata.plugin_data.content = b"1"
        with writer.as_default():
            self.summary.write("keras", config, step=0, metadata=metadata)

    # -- the default writer for batch-level summaries ----------------------------------------
    def _push_writer(self, writer, counter):
        if self.update_freq == "epoch":
            return
        step, freq = counter, self.update_freq
        contexts = (writer.as_default(step), self.summary.record_if(lambda: int(step.numpy()) % freq == 0))
        for context in contexts:
            context.__enter__()
        self._contexts.append(contexts)

    def _pop_writer(self):
        if self.update_freq == "epoch" or not self._contexts:
            return
        for context in reversed(self._contexts.pop()):
            context.__exit__(None, None, None)

    def _step_variable(self, value):
        from tapeflow.framework.variables import Variable
        return Variable(np.int64(value), trainable=False, name="tensorboard_step")

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._train_step = self._step_variable(0)
        self._push_writer(self._writer("train"), self._train_step)

    def on_train_end(self, logs=None):
        self._pop_writer()
        for writer in self._writers.values():
            writer.close()

    def on_test_begin(self, logs=None):
        self._test_step = self._step_variable(self._global_test_batch)
        self._push_writer(self._writer("val"), self._test_step)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations"):
            with self._writer("val").as_default(), self.summary.record_if(True):
                for name, value in (logs or {}).items():
                    self.summary.scalar(f"evaluation_{name}_vs_iterations", value, step=optimizer.iterations)
        self._pop_writer()

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if getattr(self, "_test_step", None) is not None:
            self._test_step.assign(self._global_test_batch)

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self._train_step is not None:
            self._train_step.assign(self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch":
            return
        if self.write_steps_per_second:
            elapsed = time.time() - self._batch_start_time
            self.summary.scalar("batch_steps_per_second", 1.0 / elapsed if elapsed > 0 else 0.0,
                                step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                self.summary.scalar("batch_" + name, value, step=self._global_train_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._previous_epoch_iterations = int(np.asarray(self.model.optimizer.iterations))
            self._epoch_start_time = time.time()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch_metrics(self, epoch, logs):
        if not logs:
            return
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "learning_rate"):
            train_logs["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        if self.write_steps_per_second:
            elapsed = time.time() - self._epoch_start_time
            steps = int(np.asarray(self.model.optimizer.iterations)) - self._previous_epoch_iterations
            train_logs["steps_per_second"] = steps / elapsed if elapsed > 0 else 0.0
        with self.summary.record_if(True):
            for which, entries in (("train", train_logs), ("val", val_logs)):
                if entries:
                    with self._writer(which).as_default():
                        for name, value in entries.items():
                            self.summary.scalar("epoch_" + name, value, step=epoch)

    def _log_weights(self, epoch):
        writer = self._writer("train")
        with writer.as_default(), self.summary.record_if(True):
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = weight.name.replace(":", "_")
                    self.summary.histogram(f"{name}/histogram", weight, step=epoch)
                    if self.write_images:
                        self._log_weight_as_image(weight, f"{name}/image", epoch)
        writer.flush()

    def _log_weight_as_image(self, weight, name, epoch):
        image = np.squeeze(np.asarray(weight))
        if image.ndim == 1:  # a bias: one row
            image = image.reshape(1, 1, image.shape[0], 1)
        elif image.ndim == 2:  # a dense kernel, wider than tall
            if image.shape[0] > image.shape[1]:
                image = image.T
            image = image.reshape(1, image.shape[0], image.shape[1], 1)
        elif image.ndim == 3:  # a conv kernel: one image per output channel (channels_last)
            image = np.transpose(image, (2, 0, 1))[..., np.newaxis]
        if image.ndim == 4 and image.shape[-1] in (1, 3, 4):
            self.summary.image(name, image, step=epoch)

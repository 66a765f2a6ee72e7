"""ReduceLROnPlateau: lowers the learning rate when a monitored quantity stops improving."""
import warnings

import numpy as np

from ..serialization_lib import keras_export
from .callback import Callback
from .learning_rate_scheduler import _get_lr, _set_lr
from .monitor_callback import _MonitorMixin


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

"""LearningRateScheduler, and reading/setting a model's learning rate."""
import math

import numpy as np

from tapeflow.framework.tensor import host_array

from ..serialization_lib import keras_export
from .callback import Callback


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
        lr = float(host_array(lr))
        if not math.isfinite(lr):
            raise ValueError(f'The output of the "schedule" function should be a float. Got: {lr}')
        _set_lr(self.model, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {_get_lr(self.model)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _get_lr(self.model)

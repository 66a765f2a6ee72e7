"""History: records the epoch logs of fit."""
from ..serialization_lib import keras_export
from .callback import Callback


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

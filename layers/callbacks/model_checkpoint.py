"""ModelCheckpoint: saves the model or its weights during training."""
import os
import warnings

import numpy as np

from tapeflow.distribute import distribute_lib

from ..serialization_lib import keras_export
from .callback import Callback
from .monitor_callback import _MonitorMixin


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
        if not distribute_lib.is_chief():  # under a multi-worker strategy, worker 0 writes the files
            return
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

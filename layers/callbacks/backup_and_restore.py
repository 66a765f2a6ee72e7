"""BackupAndRestore: resumes an interrupted fit from its last backup."""
import os

from tapeflow.distribute import distribute_lib

from ..serialization_lib import keras_export
from .callback import Callback


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
        distribute_lib.check_same_on_workers(self.model._initial_epoch or 0, "the epoch to resume from")

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
        if not distribute_lib.is_chief():  # under a multi-worker strategy, worker 0 writes the backup
            return
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
        if self.delete_checkpoint and distribute_lib.is_chief() and os.path.exists(self.backup_dir):
            import shutil
            shutil.rmtree(self.backup_dir)

"""CSVLogger: streams the epoch logs to a CSV file."""
import csv
import os

import numpy as np

from ..serialization_lib import keras_export
from .callback import Callback


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

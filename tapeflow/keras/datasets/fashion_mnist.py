"""keras.datasets.fashion_mnist: 60,000 training and 10,000 test 28x28 grayscale clothing images (uint8),
labels 0-9, read from the four gzipped IDX files Keras caches under ~/.keras/datasets/fashion-mnist."""
import gzip
import os
import zlib

import numpy as np

from tapeflow.layers.utils.file_utils import get_file
from tapeflow.saving.errors import FileContentError

BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz")
_SIDE = 28


def _read(name):
    path = get_file(name, origin=BASE + name, cache_subdir=os.path.join("datasets", "fashion-mnist"))
    try:
        with gzip.open(path, "rb") as f:
            return path, f.read()
    except (OSError, EOFError, zlib.error) as error:
        raise FileContentError(f"{path}: not a readable gzip file ({error}).") from error


def _labels(name):
    path, data = _read(name)
    if len(data) < 8:
        raise FileContentError(f"{path}: too short for an IDX label file ({len(data)} bytes).")
    return np.frombuffer(data, np.uint8, offset=8)


def _images(name, count):
    path, data = _read(name)
    expected = 16 + count * _SIDE * _SIDE
    if len(data) != expected:
        raise FileContentError(f"{path}: {len(data)} bytes, but {count} images of {_SIDE}x{_SIDE} after a 16-byte "
                               f"header take {expected}.")
    return np.frombuffer(data, np.uint8, offset=16).reshape(count, _SIDE, _SIDE)


def load_data():
    """((x_train, y_train), (x_test, y_test))."""
    y_train = _labels(FILES[0])
    x_train = _images(FILES[1], len(y_train))
    y_test = _labels(FILES[2])
    x_test = _images(FILES[3], len(y_test))
    return (x_train, y_train), (x_test, y_test)

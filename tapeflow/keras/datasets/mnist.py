"""keras.datasets.mnist: 60,000 training and 10,000 test 28x28 grayscale digits (uint8), labels 0-9."""
import zipfile

import numpy as np

from tapeflow.layers.utils.file_utils import get_file
from tapeflow.saving.errors import FileContentError

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
_MEMBERS = ("x_train", "y_train", "x_test", "y_test")


def load_data(path="mnist.npz"):
    """((x_train, y_train), (x_test, y_test)) from ``path`` (relative to ~/.keras/datasets)."""
    path = get_file(fname=path, origin=ORIGIN)
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile) as error:
        raise FileContentError(f"{path}: not a readable MNIST .npz file ({error}).") from error
    if not hasattr(archive, "files"):
        raise FileContentError(f"{path}: a single .npy array, not an MNIST .npz archive.")
    with archive:
        missing = [name for name in _MEMBERS if name not in archive.files]
        if missing:
            raise FileContentError(f"{path}: not an MNIST archive, it lacks the arrays {missing}.")
        try:
            x_train, y_train, x_test, y_test = (archive[name] for name in _MEMBERS)
        except (ValueError, EOFError, zipfile.BadZipFile) as error:
            raise FileContentError(f"{path}: an array of the MNIST archive is unreadable ({error}).") from error
    for x, y, split in ((x_train, y_train, "train"), (x_test, y_test, "test")):
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise FileContentError(f"{path}: x_{split} of shape {x.shape} and y_{split} of shape {y.shape} are not "
                                   "images (n, height, width) with one label each.")
    return (x_train, y_train), (x_test, y_test)

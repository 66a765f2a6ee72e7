"""tf.keras.utils: seeding, label encoding, serialization helpers, the progress bar."""
import numpy as np

from tapeflow.layers.trainers.data_adapter import PyDataset  # noqa: F401
from tapeflow.layers.trainers.data_adapter import PyDataset as Sequence  # noqa: F401
from tapeflow.layers.utils.progbar import Progbar  # noqa: F401
from tapeflow.layers.serialization_lib import (custom_object_scope, deserialize_keras_object,  # noqa: F401
                                               register_keras_serializable, serialize_keras_object)


def set_random_seed(seed):
    """Seeds tapeflow's global generator (initializers, dropout, shuffling) and numpy's and Python's."""
    import random

    import tapeflow
    if not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(int(seed))
    np.random.seed(int(seed))
    tapeflow.random.set_seed(int(seed))


def to_categorical(x, num_classes=None):
    """Integer class labels -> one-hot float32 rows."""
    x = np.asarray(getattr(x, "_value", x), dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if num_classes is None:
        num_classes = int(x.max()) + 1
    out = np.zeros((x.shape[0], num_classes), dtype="float32")
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    x = np.asarray(getattr(x, "_value", x))
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)

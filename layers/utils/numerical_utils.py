"""to_categorical and normalize, as keras.utils."""
import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops.array_ops import one_hot, squeeze


def to_categorical(x, num_classes=None):
    """Integer class labels -> one-hot rows, a trailing axis of size 1 squeezed first.

    As Keras 3: numpy arrays and lists give a float64 numpy array; a tensor gives a float32 tensor
    (Keras one-hot encodes tensors with ``ops.one_hot``, whose dtype is floatx).
    """
    if isinstance(x, Tensor):
        if num_classes is None:
            raise ValueError("to_categorical: num_classes is required for a tensor input (as in Keras).")
        if x.shape.rank is not None and x.shape.rank > 1 and x.shape[-1] == 1:
            x = squeeze(x, -1)
        return one_hot(x, int(num_classes), dtype="float32")
    x = np.asarray(host_array(x), dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if num_classes is None:
        num_classes = int(x.max()) + 1
    out = np.zeros((x.shape[0], num_classes), dtype="float64")
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    x = host_array(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)

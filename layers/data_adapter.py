"""Turning ``fit``/``evaluate``/``predict`` inputs into batches.

Arrays (numpy, tensors, nested lists/dicts of them) are sliced into batches
of ``batch_size`` (the last one may be smaller), reshuffled every epoch when
``shuffle`` is set. An iterable of ``(x, y[, sample_weight])`` batches (a
generator, or a sequence with ``__len__``/``__getitem__``) is used as is.
"""
import math

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import random_ops

from . import backend, tree


def unpack_x_y_sample_weight(data):
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    if y is None:
        return (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _to_array(x):
    if isinstance(x, Tensor):
        value = x._value
    elif isinstance(x, Variable):
        value = x.numpy()
    else:
        value = np.asarray(x)
    if value.dtype == np.float64:
        value = value.astype(backend.floatx())
    if value.ndim == 0:
        raise ValueError(f"Expected arrays with a batch dimension, got a scalar: {x!r}")
    return value


def is_array_like(x):
    leaves = tree.flatten(x)
    return bool(leaves) and all(isinstance(v, (np.ndarray, Tensor, Variable, list, float, int, np.generic))
                                for v in leaves) and not isinstance(x, (str, bytes))


def structure_to_arrays(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)) and x and not any(isinstance(v, (np.ndarray, Tensor, Variable, list, tuple, dict))
                                                      for v in x):
        return _to_array(x)  # a plain list of numbers is one array
    return tree.map_structure(_to_array, x)


def check_data_cardinality(data):
    sizes = {len(v) for v in tree.flatten([d for d in data if d is not None])}
    if len(sizes) > 1:
        message = "Data cardinality is ambiguous. Make sure all arrays contain the same number of samples."
        for label, single in zip(("x", "y", "sample_weight"), data):
            if single is not None:
                message += f"'{label}' sizes: {', '.join(str(len(v)) for v in tree.flatten(single))}\n"
        raise ValueError(message)
    return sizes.pop() if sizes else 0


def class_weight_to_sample_weights(y, class_weight):
    y = tree.flatten(y)
    if len(y) != 1:
        raise ValueError("`class_weight` is only supported for models with a single output.")
    y = y[0]
    labels = np.argmax(y, axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0]
    labels = np.round(labels).astype(np.int64)
    max_class = int(max(class_weight))
    weights = np.zeros(max(max_class, int(labels.max(initial=0))) + 1, dtype=backend.floatx())
    for cls, w in class_weight.items():
        weights[int(cls)] = w
    missing = set(np.unique(labels).tolist()) - {int(k) for k in class_weight}
    if missing:
        raise ValueError(f"`class_weight` must contain all classes in the data. The classes {sorted(missing)} exist "
                         f"in the data but not in `class_weight`.")
    return weights[labels]


def train_validation_split(arrays, validation_split):
    """Keeps the first floor(n * (1 - split)) samples for training, the rest for validation."""
    flat = [a for a in tree.flatten(list(arrays)) if a is not None]
    n = len(flat[0])
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise ValueError(f"Training data contains {n} samples, which is not sufficient to split it into a validation "
                         f"and training set as specified by `validation_split={validation_split}`. Either provide "
                         "more data, or a different value for the `validation_split` argument.")

    def part(start, stop):
        return tuple(None if a is None else tree.map_structure(lambda v: v[start:stop], a) for a in arrays)
    return part(0, split_at), part(split_at, n)


class ArrayDataAdapter:
    """Batches of in-memory arrays: ``(x, y, sample_weight)`` tuples of Tensors."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None,
                 steps=None):
        self.x = structure_to_arrays(x)
        self.y = structure_to_arrays(y)
        self.sample_weight = structure_to_arrays(sample_weight)
        self.num_samples = check_data_cardinality((self.x, self.y, self.sample_weight))
        if class_weight is not None:
            if self.y is None:
                raise ValueError("`class_weight` needs targets `y`.")
            weights = class_weight_to_sample_weights(self.y, class_weight)
            self.sample_weight = weights if self.sample_weight is None else self.sample_weight * weights
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size <= 0):
            raise ValueError(f"`batch_size` must be a positive integer. Received: batch_size={batch_size}")
        self.batch_size = int(batch_size or 32)
        self.shuffle = shuffle
        batches = max(1, math.ceil(self.num_samples / self.batch_size)) if self.num_samples else 0
        self.num_batches = batches if steps is None else min(batches, int(steps))

    def __iter__(self):
        n, bs = self.num_samples, self.batch_size
        order = None
        if self.shuffle and self.shuffle != "batch":
            order = random_ops.get_global_generator().permutation(n)
        for b in range(self.num_batches):
            start, stop = b * bs, min(n, (b + 1) * bs)
            if order is None:
                def take(a):
                    return Tensor(a[start:stop])
            else:
                index = order[start:stop]

                def take(a):
                    return Tensor(a[index])
            yield (tree.map_structure(take, self.x),
                   None if self.y is None else tree.map_structure(take, self.y),
                   None if self.sample_weight is None else tree.map_structure(take, self.sample_weight))


class IterableDataAdapter:
    """Batches produced by the user: a generator, an iterable, or a ``__len__``/``__getitem__`` sequence."""

    def __init__(self, data, steps=None):
        self.data = data
        self._iterator = None
        if steps is not None:
            self.num_batches = int(steps)
        elif hasattr(data, "__len__") and hasattr(data, "__getitem__"):
            self.num_batches = len(data)
        else:
            self.num_batches = None
        self._one_shot = iter(data) is data

    def __iter__(self):
        if hasattr(self.data, "__getitem__") and hasattr(self.data, "__len__"):
            source = (self.data[i] for i in range(len(self.data)))
        elif self._one_shot:
            if self._iterator is None:
                self._iterator = self.data
            source = self._iterator
        else:
            source = iter(self.data)
        for step, batch in enumerate(source):
            if self.num_batches is not None and step >= self.num_batches:
                break
            x, y, sw = unpack_x_y_sample_weight(batch)
            convert = (lambda v: Tensor(_to_array(v)))
            yield (tree.map_structure(convert, x), None if y is None else tree.map_structure(convert, y),
                   None if sw is None else tree.map_structure(convert, sw))
        if hasattr(self.data, "on_epoch_end"):
            self.data.on_epoch_end()


def get_data_adapter(x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None, steps=None):
    if x is None:
        raise ValueError("Unexpected value for `x`: None. Pass arrays, or an iterable of batches.")
    if is_array_like(x):
        return ArrayDataAdapter(x, y, sample_weight, batch_size, shuffle, class_weight, steps)
    if y is not None or sample_weight is not None:
        raise ValueError("When `x` is a generator or an iterable of batches, `y` and `sample_weight` must not be "
                         "passed separately: yield (x, y) or (x, y, sample_weight) tuples instead.")
    if class_weight is not None:
        raise ValueError("`class_weight` is supported only for array inputs.")
    return IterableDataAdapter(x, steps)

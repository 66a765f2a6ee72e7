"""Turning ``fit``/``evaluate``/``predict`` inputs into batches.

Arrays (numpy, tensors, nested lists/dicts of them) are sliced into batches
of ``batch_size`` (the last one may be smaller), reshuffled every epoch when
``shuffle`` is set. A ``tf.data.Dataset`` of batches, a ``PyDataset`` (or any
sequence with ``__len__``/``__getitem__``) and a generator of
``(x, y[, sample_weight])`` batches are used as they are.

With ``steps`` (``steps_per_epoch``) given, a dataset or PyDataset is read by
one iterator that carries on from epoch to epoch, as Keras's EpochIterator
does; it starts over once it has delivered the dataset's known number of
batches, and an input that runs out early ends the epoch with Keras's warning.
"""
import itertools
import math
import warnings

import numpy as np

from tapeflow.data.dataset import INFINITE_CARDINALITY, Dataset
from tapeflow.data.iterator_state import skip_iteration
from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.ops import random_ops

from .. import backend
from ..utils import tree


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
    """A batch as Keras hands it to ``train_step``: ``x`` alone when there are no targets (a list or tuple of
    inputs wrapped in a 1-tuple; a sample weight without targets is dropped), else ``(x, y[, sw])``."""
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _to_array(x):
    if isinstance(x, Tensor):
        value = host_array(x)
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


def epoch_order(n):
    """The order of an epoch's samples: Keras's on TensorFlow under a global seed (``set_random_seed``), else a
    random permutation."""
    order = random_ops.first_shuffle_order(n)
    return random_ops.get_global_generator().permutation(n) if order is None else order


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
            order = epoch_order(n)
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


class PyDataset:
    """Base class of a Python source of batches (``keras.utils.PyDataset``).

    A subclass defines ``__getitem__(index)``, returning the batch ``index``
    as ``x``, ``(x, y)`` or ``(x, y, sample_weight)``, and ``__len__`` (or a
    ``num_batches`` property, None for an endless source). ``on_epoch_begin``
    and ``on_epoch_end`` are called around every epoch. Batches are read in
    order, in the calling thread (``workers`` and ``use_multiprocessing`` are
    recorded, not used).
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return self.__dict__.get("_workers", 1)

    @property
    def use_multiprocessing(self):
        return self.__dict__.get("_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return self.__dict__.get("_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError

    @property
    def num_batches(self):
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(f"You need to implement the `num_batches` property: "
                                  f"`{type(self).__name__}.num_batches` should return an int or None (for an "
                                  f"endless PyDataset).")

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


def _is_sequence(data):
    """A PyDataset, or any object with __getitem__ and a length (``__len__`` or ``num_batches``)."""
    return hasattr(data, "__getitem__") and (hasattr(data, "__len__") or hasattr(data, "num_batches")) \
        and not isinstance(data, (list, tuple, dict, str, bytes))


def _sequence_length(data):
    return data.num_batches if hasattr(data, "num_batches") else len(data)


def _as_batch_tensors(batch, class_weight=None):
    x, y, sw = unpack_x_y_sample_weight(batch)

    def convert(v):
        return Tensor(_to_array(v))
    x = tree.map_structure(convert, x)
    y = None if y is None else tree.map_structure(convert, y)
    sw = None if sw is None else tree.map_structure(convert, sw)
    if class_weight is not None:
        if y is None:
            raise ValueError("`class_weight` needs targets `y` in the data.")
        weights = class_weight_to_sample_weights(tree.map_structure(host_array, y), class_weight)
        sw = Tensor(weights if sw is None else host_array(sw) * weights)
    return x, y, sw


_RAN_OUT = ("Your input ran out of data; interrupting training. Make sure that your dataset or generator can "
            "generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function "
            "when building your dataset.")


class _EpochBatches:
    """Keras's epoch iteration over a re-iterable source of batches of known or unknown count."""

    def __init__(self, make_iterator, count, steps):
        if count == INFINITE_CARDINALITY and steps is None:
            raise ValueError("When providing an infinite dataset, you must specify the number of steps to run "
                             "(`steps_per_epoch` in fit, `steps` in evaluate and predict; if you did not intend to "
                             "create an infinite dataset, make sure to not call `repeat()` on the dataset).")
        self._make_iterator = make_iterator
        self._count = count if count is not None and count >= 0 else None
        self._steps = None if steps is None else int(steps)
        self._iterator = None
        self._seen = 0
        self.num_batches = self._steps if self._steps is not None else self._count

    def __iter__(self):
        if self._iterator is None or self._steps is None:
            self._iterator, self._seen = self._make_iterator(), 0
        for _ in range(self._steps) if self._steps is not None else itertools.count():
            if self._count is not None and self._seen >= self._count:
                if self._steps is not None:
                    warnings.warn(_RAN_OUT, stacklevel=2)
                break
            try:
                batch = next(self._iterator)
            except StopIteration:
                if self._steps is not None:
                    warnings.warn(_RAN_OUT, stacklevel=2)
                self._iterator = None
                return
            self._seen += 1
            yield batch
        if self._count is not None and self._seen >= self._count:
            self._iterator = None


def _keras_iterator(dataset):
    """An iterator over the dataset, its random nodes left as Keras on TensorFlow leaves them (its epoch
    iterator makes a second, unused iterator: a shuffle's next iteration takes the seeds after that one)."""
    iterator = iter(dataset)
    skip_iteration(dataset)
    return iterator


class DatasetDataAdapter:
    """A ``tf.data.Dataset`` of batches; the number of steps comes from its cardinality."""

    def __init__(self, dataset, steps=None, class_weight=None):
        self.dataset = dataset
        self.class_weight = class_weight
        self._epochs = _EpochBatches(lambda: _keras_iterator(dataset), dataset._cardinality(), steps)
        self.num_batches = self._epochs.num_batches

    def __iter__(self):
        for batch in self._epochs:
            yield _as_batch_tensors(batch, self.class_weight)


class IterableDataAdapter:
    """Batches produced by the user: a generator, an iterable, or a PyDataset-like sequence."""

    def __init__(self, data, steps=None):
        self.data = data
        self._iterator = None
        self._epochs = None
        if _is_sequence(data):
            count = _sequence_length(data)
            self._epochs = _EpochBatches(lambda: _sequence_batches(data),
                                         INFINITE_CARDINALITY if count is None else count, steps)
            self.num_batches = self._epochs.num_batches
            self._one_shot = False
            return
        if steps is not None:
            self.num_batches = int(steps)
        else:
            self.num_batches = None
        self._one_shot = iter(data) is data

    def __iter__(self):
        if self._epochs is not None:
            if hasattr(self.data, "on_epoch_begin"):
                self.data.on_epoch_begin()
            for batch in self._epochs:
                yield _as_batch_tensors(batch)
            if hasattr(self.data, "on_epoch_end"):
                self.data.on_epoch_end()
            return
        if self._one_shot:
            if self._iterator is None:
                self._iterator = self.data
            source = self._iterator
        else:
            source = iter(self.data)
        for step, batch in enumerate(source):
            if self.num_batches is not None and step >= self.num_batches:
                break
            yield _as_batch_tensors(batch)


def _sequence_batches(data):
    """Batches 0, 1, ... of a sequence (without end for a PyDataset whose num_batches is None)."""
    count = _sequence_length(data)
    for index in range(count) if count is not None else itertools.count():
        yield data[index]


def get_data_adapter(x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None, steps=None):
    if x is None:
        raise ValueError("Unexpected value for `x`: None. Pass arrays, or an iterable of batches.")
    if isinstance(x, Dataset):
        for name, value, what in (("y", y, "the targets"), ("sample_weights", sample_weight, "the sample weights")):
            if value is not None:
                raise ValueError(f"When providing `x` as a tf.data.Dataset, `{name}` should not be passed. Instead, "
                                 f"{what} should be included as part of the tf.data.Dataset.")
        return DatasetDataAdapter(x, steps, class_weight)
    if is_array_like(x):
        return ArrayDataAdapter(x, y, sample_weight, batch_size, shuffle, class_weight, steps)
    if y is not None or sample_weight is not None:
        raise ValueError("When `x` is a generator or an iterable of batches, `y` and `sample_weight` must not be "
                         "passed separately: yield (x, y) or (x, y, sample_weight) tuples instead.")
    if class_weight is not None:
        raise ValueError("`class_weight` is supported only for array inputs.")
    return IterableDataAdapter(x, steps)

"""split_dataset: a dataset or arrays cut into a left and a right ``tf.data.Dataset`` (e.g. train / test).

Arrays (one, or a list/tuple/dict of arrays of one length) are split along
their first axis; a finite ``tf.data.Dataset`` is split by element (a batched
dataset therefore by batch). With ``shuffle`` the samples are permuted first
by a numpy generator seeded with ``seed`` (the same seed gives the same split;
the permutation is not Keras's).
"""
import numpy as np

from tapeflow.data.dataset import INFINITE_CARDINALITY, Dataset
from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor


def _as_array(x):
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _samples(dataset):
    """(structure of arrays with the samples on axis 0, number of samples)."""
    if isinstance(dataset, Dataset):
        if dataset.cardinality() == INFINITE_CARDINALITY:
            raise ValueError("split_dataset: the dataset is infinite (e.g. made with `repeat()`); it must be finite "
                             "to be split.")
        elements = list(dataset.as_numpy_iterator())
        if not elements:
            raise ValueError("split_dataset: the dataset is empty.")
        flat = [nest.flatten(e) for e in elements]
        columns = [np.stack([row[i] for row in flat]) for i in range(len(flat[0]))]
        return nest.pack_sequence_as(elements[0], columns), len(elements)
    if isinstance(dataset, dict):
        structure = {k: _as_array(v) for k, v in dataset.items()}
    elif isinstance(dataset, (list, tuple)):
        structure = tuple(_as_array(v) for v in dataset)
    elif isinstance(dataset, (np.ndarray, Tensor)):
        structure = _as_array(dataset)
    else:
        raise TypeError(f"split_dataset: `dataset` must be a tf.data.Dataset, a numpy array or a list/tuple/dict "
                        f"of arrays; received {type(dataset).__name__}")
    arrays = nest.flatten(structure)
    lengths = {a.shape[0] if a.ndim else None for a in arrays}
    if None in lengths or len(lengths) != 1:
        raise ValueError(f"split_dataset: the arrays must all have the same length (first axis); received shapes "
                         f"{[a.shape for a in arrays]}")
    return structure, lengths.pop()


def _count(size, name, total):
    """An int or float size as a number of samples (None stays None)."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, float, np.integer, np.floating)):
        raise TypeError(f"split_dataset: `{name}` must be an int, a float or None; received {name}={size!r} of "
                        f"type {type(size).__name__}")
    if isinstance(size, (float, np.floating)):
        if not 0.0 < size < 1.0:
            raise ValueError(f"split_dataset: a float `{name}` is a fraction and must be strictly between 0 and 1; "
                             f"received {name}={size}")
        return int(round(size * total))
    if not 0 < size <= total:
        raise ValueError(f"split_dataset: an int `{name}` is a number of samples and must be in [1, {total}] (the "
                         f"dataset has {total}); received {name}={size}")
    return int(size)


def split_sizes(left_size, right_size, total):
    """(left count, right count) for the given sizes; None is the complement of the other."""
    if left_size is None and right_size is None:
        raise ValueError("split_dataset: at least one of `left_size` and `right_size` must be given. Received: "
                         "left_size=None and right_size=None")
    left = _count(left_size, "left_size", total)
    right = _count(right_size, "right_size", total)
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"split_dataset: left_size ({left} samples) and right_size ({right} samples) add up to "
                         f"more than the {total} samples of the dataset.")
    if left == 0 or right == 0:
        raise ValueError(f"split_dataset: with {total} samples, left_size={left_size} and right_size={right_size} "
                         f"leave an empty split ({left} left, {right} right).")
    return left, right


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None):
    """Splits ``dataset`` into two ``tf.data.Dataset`` objects of ``left_size`` and ``right_size`` samples
    (ints are counts, floats fractions of the whole; None is the complement of the other)."""
    if preferred_backend not in (None, "tensorflow"):
        raise ValueError(f"split_dataset: tapeflow returns tf.data datasets; preferred_backend must be None or "
                         f"'tensorflow', received {preferred_backend!r}")
    structure, total = _samples(dataset)
    left, right = split_sizes(left_size, right_size, total)
    order = np.arange(total)
    if shuffle:
        order = np.random.default_rng(seed).permutation(total)

    def part(indices):
        return Dataset.from_tensor_slices(nest.map_structure(lambda a: a[indices], structure))
    return part(order[:left]), part(order[left:left + right])

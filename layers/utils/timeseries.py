"""keras.utils.timeseries_dataset_from_array: sliding windows over a time series, as a tf.data.Dataset.

Window ``i`` holds ``data[s], data[s + r], ..., data[s + (L-1) r]`` for the
start ``s = start_index + i * sequence_stride`` (``L`` the sequence length,
``r`` the sampling rate), for every start whose window ends before
``end_index``; its target is ``targets[s]``. The windows are gathered a batch
at a time from the start positions, so the data is never copied once per
window. With ``shuffle`` the windows come in the random order of
``Dataset.shuffle(seed=seed)`` over all windows, reshuffled each epoch (as in
Keras; the order follows tapeflow's generator, not TensorFlow's).
"""
import numpy as np

from tapeflow.data.dataset import Dataset
from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.tensor_spec import TensorSpec


def _array(x, name):
    array = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
    if array.ndim == 0:
        raise ValueError(f"`{name}` must be an array with a time axis first, got a scalar.")
    return array


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
    return int(value)


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """A dataset of windows of ``data`` (``(windows, targets)`` pairs when ``targets`` is not None)."""
    data = _array(data, "data")
    sequence_length = _positive(sequence_length, "sequence_length")
    sampling_rate = _positive(sampling_rate, "sampling_rate")
    sequence_stride = _positive(sequence_stride, "sequence_stride")
    if batch_size is not None:
        batch_size = _positive(batch_size, "batch_size")
    length = len(data)
    if start_index is None:
        start_index = 0
    elif not 0 <= start_index < length:
        raise ValueError(f"`start_index` must be 0 or greater and lower than the length of the data. Received: "
                         f"start_index={start_index}, for data of length {length}")
    if end_index is None:
        end_index = length
    else:
        if start_index >= end_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index}")
        if end_index > length:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {length}")
    count = max(0, end_index - start_index - (sequence_length - 1) * sampling_rate)
    if targets is not None:
        targets = _array(targets, "targets")
        count = min(count, len(targets))
        if count and start_index + count - 1 >= len(targets):
            raise ValueError(f"`targets` of length {len(targets)} has no target for the window starting at "
                             f"{start_index + count - 1} (targets[i] is the target of the window starting at "
                             f"data[i]).")
    starts = start_index + np.arange(0, count, sequence_stride, dtype=np.int64)
    positions = Dataset.from_tensor_slices(starts)
    if shuffle:
        positions = positions.shuffle(max(len(starts), 1), seed=seed)
    if batch_size is not None:
        positions = positions.batch(batch_size)
    offsets = np.arange(sequence_length, dtype=np.int64) * sampling_rate
    return _Windows(positions, data, targets, offsets, batched=batch_size is not None)


class _Windows(Dataset):
    """The windows (and targets) at each element of a dataset of start positions (a batch or one start)."""
    _tf_name = "_ParallelMapDataset"

    def __init__(self, positions, data, targets, offsets, batched):
        self._input = positions
        self._inputs = (positions,)
        self._data, self._targets, self._offsets, self._batched = data, targets, offsets, batched

    def _compute_spec(self):
        lead = (None, None) if self._batched else (None,)
        windows = TensorSpec(lead + self._data.shape[1:], _dtype(self._data))
        if self._targets is None:
            return windows
        target_lead = (None,) if self._batched else ()
        return windows, TensorSpec(target_lead + self._targets.shape[1:], _dtype(self._targets))

    def _compute_cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        data, targets, offsets = self._data, self._targets, self._offsets
        for starts in self._input._iterate():
            windows = np.ascontiguousarray(data[starts[..., None] + offsets])
            if targets is None:
                yield windows
            else:
                yield windows, np.ascontiguousarray(targets[starts])


def _dtype(array):
    if array.dtype.kind in "USO":
        return dtypes.string
    return dtypes.as_dtype(array.dtype)

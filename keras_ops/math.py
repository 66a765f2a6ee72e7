"""``keras.ops.math``: erf, erfinv, top_k, in_top_k, segment reductions, logsumexp, rsqrt, logdet, frames."""
import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as A
from tapeflow.ops import extra_math_ops as X
from tapeflow.ops import linalg_ops as L
from tapeflow.ops import math_ops as M
from tapeflow.ops import nn_ops as N
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import axes_tuple

from .dtypes import convert, to_float
from .symbolic import records_operations


def erf(x):
    return M.erf(to_float(x))


def erfinv(x):
    return X.erfinv(to_float(x))


def rsqrt(x):
    return M.rsqrt(to_float(x))


def logsumexp(x, axis=None, keepdims=False):
    x = to_float(x)
    return R.reduce_logsumexp(x, axes_tuple(axis, x.ndim, op="logsumexp"), keepdims=keepdims)


def logdet(x):
    return L.logdet(to_float(x))


def top_k(x, k, sorted=True):  # noqa: A002 - Keras's argument name
    """The k largest values of the last axis and their int32 indices (ties: the lower index first)."""
    return N.top_k(convert(x), k, sorted=sorted)


def in_top_k(targets, predictions, k):
    """Whether each target's prediction is among the k largest of its row; classes tied at the boundary all
    count as inside (as tf.math.in_top_k). A non-finite target prediction is never inside."""
    predictions, targets = convert(predictions), convert(targets)
    if predictions.ndim != 2 or targets.ndim != 1 or targets.shape[0] != predictions.shape[0]:
        raise ValueError(f"in_top_k: predictions must be [batch, classes] and targets [batch], received "
                         f"{tuple(predictions.shape)} and {tuple(targets.shape)}")
    own = A.take_along_axis(predictions, A.expand_dims(M.cast(targets, "int64"), -1), -1)
    larger = R.reduce_sum(M.cast(M.greater(predictions, own), "int32"), -1)
    inside = M.less(larger, convert(int(k), "int32"))
    if predictions.dtype.is_floating:
        inside = M.logical_and(inside, M.is_finite(A.squeeze(own, -1)))
    return inside


def _segments(data, segment_ids, num_segments, name):
    data, ids = convert(data), convert(segment_ids)
    if not ids.dtype.is_integer or ids.ndim != 1 or (data.ndim and ids.shape[0] != data.shape[0]):
        raise ValueError(f"{name}: segment_ids must be 1-D integers with one id per row of data, received "
                         f"{tuple(ids.shape)} of {ids.dtype.name} for data of shape {tuple(data.shape)}")
    if num_segments is None:
        values = ids.numpy()
        num_segments = int(values.max()) + 1 if values.size else 0
    return data, ids, int(num_segments)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Sums of the rows of ``data`` with each segment id (ids < 0 are dropped)."""
    data, ids, n = _segments(data, segment_ids, num_segments, "segment_sum")
    return A.unsorted_segment_sum(data, ids, n)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Maxima of the rows of ``data`` with each segment id; an empty segment holds the dtype's lowest value."""
    data, ids, n = _segments(data, segment_ids, num_segments, "segment_max")
    lowest = np.finfo(data.dtype.name).min if data.dtype.is_floating else np.iinfo(data.dtype.name).min
    member = M.equal(A.reshape(ids, (1, -1)), convert(np.arange(n).reshape(-1, 1), ids.dtype.name))  # [segment, row]
    member = A.reshape(member, (n, ids.shape[0]) + (1,) * (data.ndim - 1))
    candidates = A.where(member, A.expand_dims(data, 0), convert(lowest, data.dtype.name))
    if ids.shape[0] == 0:
        return A.fill((n,) + tuple(data.shape[1:]), convert(lowest, data.dtype.name))
    return R.reduce_max(candidates, 1)


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of the last axis: [..., num_frames, sequence_length], frame i starting at i * stride."""
    x = convert(x)
    length, stride = int(sequence_length), int(sequence_stride)
    if length <= 0 or stride <= 0 or x.ndim == 0 or length > x.shape[-1]:
        raise ValueError(f"extract_sequences: sequence_length ({length}) and sequence_stride ({stride}) must be "
                         f"positive and the length at most the last axis of shape {tuple(x.shape)}")
    frames = 1 + (x.shape[-1] - length) // stride
    positions = np.arange(frames)[:, None] * stride + np.arange(length)[None, :]
    return A.gather(x, Tensor(positions), axis=x.ndim - 1)


records_operations(globals(), "keras.src.ops.math")   # called on KerasTensors: graph operations

"""Reductions of ragged rank 1 tensors over their axes, as segment sums of the flat values (so the
gradient reaches the values)."""
import numpy as np

from ..framework import dtypes
from ..ops import array_ops, math_ops, reduction_ops
from ..framework.tensor import Tensor

_NAMES = {"Sum": "reduce_sum", "Mean": "reduce_mean", "Max": "reduce_max", "Min": "reduce_min"}


def reduce(rt, op_type, axis, keepdims):
    name = _NAMES.get(op_type)
    if name is None or rt.ragged_rank != 1:
        raise NotImplementedError(f"tapeflow reduces RaggedTensors of ragged rank 1 with reduce_sum, reduce_mean, "
                                  f"reduce_max or reduce_min; got {op_type} of ragged rank {rt.ragged_rank}")
    if keepdims:
        raise NotImplementedError(f"{name}: keepdims=True is not supported for a RaggedTensor by tapeflow")
    values = rt.values
    rank = rt.shape.rank
    if axis is None:
        return getattr(reduction_ops, name)(values)
    if isinstance(axis, (list, tuple)):
        raise NotImplementedError(f"{name}: tapeflow reduces a RaggedTensor over one axis or all of them")
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    if axis == 1:       # within each row
        segments, count = rt._rowids(), rt.nrows_static()
    elif axis == 0 and rank == 2:       # across rows, position by position
        segments = np.arange(len(rt._rowids())) - rt._splits[:-1][rt._rowids()]
        count = int(rt._lengths().max()) if rt.nrows_static() else 0
    else:
        raise NotImplementedError(f"{name}: tapeflow reduces a RaggedTensor over axis 0 (rank 2) or 1; got {axis}")
    seg = Tensor(segments)
    if op_type in ("Sum", "Mean"):
        total = array_ops.unsorted_segment_sum(values, seg, count)
        if op_type == "Sum":
            return total
        # Integer values average to float64, as TensorFlow's ragged reduce_mean does; empty rows give nan.
        if not values.dtype.is_floating:
            total = math_ops.cast(total, dtypes.float64)
        sizes = np.bincount(segments, minlength=count).reshape((count,) + (1,) * (values._value.ndim - 1))
        return math_ops.divide(total, Tensor(sizes.astype(total.dtype._np)))
    # max / min per segment; an empty one gives the dtype's lowest (highest) value, as TensorFlow does
    rows = []
    for s in range(count):
        members = np.flatnonzero(segments == s)
        if members.size:
            rows.append(getattr(reduction_ops, name)(array_ops.gather(values, Tensor(members)), axis=0))
        else:
            dt = values.dtype
            extreme = dt.min if op_type == "Max" else dt.max
            rows.append(Tensor(np.full(values._value.shape[1:], extreme, dt._np)))
    return array_ops.stack(rows) if rows else Tensor(np.zeros((0,) + values._value.shape[1:], values.dtype._np))

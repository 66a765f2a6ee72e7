"""Reductions of RaggedTensors over their axes, as segment reductions of the flat values (so the gradient
reaches the values). An empty row reduces to the reduction's identity (the dtype's lowest / highest value for
max / min), as TensorFlow's ragged reductions do."""
import numpy as np

from ..framework import dtypes
from ..ops import array_ops, math_ops, reduction_ops
from ..framework.tensor import Tensor

_NAMES = {"Sum": "reduce_sum", "Mean": "reduce_mean", "Max": "reduce_max", "Min": "reduce_min",
          "Prod": "reduce_prod", "Any": "reduce_any", "All": "reduce_all"}
OP_TYPES = {name: op_type for op_type, name in _NAMES.items()}


def reduce(rt, op_type, axis, keepdims):
    from .ragged_tensor import RaggedTensor
    name = _NAMES.get(op_type)
    if name is None:
        raise NotImplementedError(f"tapeflow reduces RaggedTensors with {', '.join(_NAMES.values())}; "
                                  f"got {op_type}")
    fn = getattr(reduction_ops, name)
    rank = rt.shape.rank
    if axis is None:
        if keepdims:
            raise NotImplementedError(f"{name}: keepdims=True over all axes of a RaggedTensor is not supported "
                                      f"by tapeflow")
        return fn(rt.flat_values)
    axes = [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    axes = sorted({a + rank if a < 0 else a for a in axes}, reverse=True)
    if any(not 0 <= a < rank for a in axes):
        raise ValueError(f"{name}: axis {axis} is out of range for a RaggedTensor of rank {rank}")
    if keepdims:
        if axes != [1] or rank != 2:
            raise NotImplementedError(f"{name}: keepdims=True is supported for axis 1 of a 2-D RaggedTensor")
        return array_ops.expand_dims(reduce(rt, op_type, 1, False), 1)
    result = rt
    for a in axes:      # the highest axis first, so the lower axes keep their numbers
        result = _reduce_axis(result, op_type, fn, a) if isinstance(result, RaggedTensor) else fn(result, axis=a)
    return result


def _reduce_axis(rt, op_type, fn, axis):
    from .ragged_tensor import RaggedTensor
    values = rt.values
    if axis >= 2:
        inner = _reduce_axis(values, op_type, fn, axis - 1) if isinstance(values, RaggedTensor) \
            else fn(values, axis=axis - 1)
        return rt.with_values(inner)
    if axis == 1 and not isinstance(values, RaggedTensor):      # within each row
        return segment_reduce(values, op_type, rt._rowids(), rt.nrows_static())
    if axis == 1 and values.ragged_rank == 1 and not isinstance(values.values, RaggedTensor):
        # position by position across the inner rows of each outer row: a ragged result
        outer = rt._rowids()
        inner_lengths = values._lengths()
        longest = np.zeros(rt.nrows_static(), np.int64)
        np.maximum.at(longest, outer, inner_lengths)
        starts = np.concatenate([[0], np.cumsum(longest)])[outer]
        positions = np.arange(len(values._rowids())) - values._splits[:-1][values._rowids()]
        segments = starts[values._rowids()] + positions
        reduced = segment_reduce(values.values, op_type, segments, int(longest.sum()))
        return RaggedTensor.from_row_lengths(reduced, longest)
    if axis == 0 and not isinstance(values, RaggedTensor):      # position by position across rows
        segments = np.arange(len(rt._rowids())) - rt._splits[:-1][rt._rowids()]
        count = int(rt._lengths().max()) if rt.nrows_static() else 0
        return segment_reduce(values, op_type, segments, count)
    raise NotImplementedError(f"{_NAMES[op_type]}: tapeflow does not reduce axis {axis} of a RaggedTensor of "
                              f"ragged rank {rt.ragged_rank}")


def segment_reduce(values, op_type, segments, count):
    """Reduces the rows of ``values`` that share a segment id (ids in [0, count))."""
    segments = np.asarray(segments, np.int64)
    if op_type in ("Sum", "Mean"):
        total = array_ops.unsorted_segment_sum(values, Tensor(segments), count)
        if op_type == "Sum":
            return total
        # Integer values average to float64, as TensorFlow's ragged reduce_mean does; empty rows give nan.
        if not values.dtype.is_floating:
            total = math_ops.cast(total, dtypes.float64)
        sizes = np.bincount(segments, minlength=count).reshape((count,) + (1,) * (values._value.ndim - 1))
        return math_ops.divide(total, Tensor(sizes.astype(total.dtype._np)))
    fn = getattr(reduction_ops, _NAMES[op_type])
    rows = []
    for s in range(count):
        members = np.flatnonzero(segments == s)
        if members.size:
            rows.append(fn(array_ops.gather(values, Tensor(members)), axis=0))
        else:
            rows.append(Tensor(np.full(values._value.shape[1:], _identity(op_type, values.dtype), values.dtype._np)))
    return array_ops.stack(rows) if rows else Tensor(np.zeros((0,) + values._value.shape[1:], values.dtype._np))


def _identity(op_type, dt):
    return {"Max": dt.min if dt != dtypes.bool else False, "Min": dt.max if dt != dtypes.bool else True,
            "Prod": 1, "Any": False, "All": True}[op_type]

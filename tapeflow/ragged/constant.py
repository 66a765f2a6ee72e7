"""tf.ragged.constant and map_flat_values."""
import builtins

import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant as dense_constant
from ..framework.tensor import Tensor
from ..ops import array_ops
from ..ops.common import to_tensor
from .ragged_tensor import RaggedTensor


def _depth(value):
    """How deeply lists nest down to the first scalar (None for an empty list)."""
    depth = 0
    while isinstance(value, (list, tuple)):
        if not value:
            return None if depth == 0 else depth + 1
        depth, value = depth + 1, value[0]
    return depth


def _max_depth(value):
    if not isinstance(value, (list, tuple)):
        return 0
    inner = [_max_depth(v) for v in value]
    return 1 + max(inner) if inner else 1


def _scalar_depths(value, depth=0, found=None):
    found = set() if found is None else found
    if isinstance(value, (list, tuple)):
        for v in value:
            _scalar_depths(v, depth + 1, found)
    else:
        found.add(depth)
    return found


def _scalar_kinds(value, found=None):
    """The kinds of scalar in nested lists: 'text' (str, bytes) or 'number' (anything else)."""
    found = set() if found is None else found
    if isinstance(value, (list, tuple)):
        for v in value:
            _scalar_kinds(v, found)
    else:
        found.add("text" if isinstance(value, (str, bytes, np.str_, np.bytes_)) else "number")
    return found


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists; a Tensor when ``ragged_rank`` is 0."""
    if len(_scalar_kinds(pylist)) > 1:      # checked over the whole value: rows are converted one by one
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    depths = _scalar_depths(pylist)
    if len(depths) > 1:
        raise ValueError(f"all scalar values must have the same nesting depth; found depths {sorted(depths)}")
    rank = depths.pop() if depths else _max_depth(pylist)
    inner_rank = 0 if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(0, rank - 1 - inner_rank)
    if not 0 <= ragged_rank < max(rank, 1):
        raise ValueError(f"ragged_rank={ragged_rank} must be in [0, {max(rank - 1, 0)}] for a value of rank {rank}")
    return _build(pylist, dtype, ragged_rank, inner_shape)


def _build(value, dtype, ragged_rank, inner_shape):
    if ragged_rank == 0:
        if isinstance(value, (list, tuple)) and not value and inner_shape is not None:
            arr = np.zeros((0,) + tuple(inner_shape))
            return dense_constant(arr, dtype=dtype or dtypes.float32)
        try:
            return dense_constant(value, dtype=dtype)
        except ValueError:
            raise ValueError(f"tf.ragged.constant: the values below the ragged dimensions are not uniform: "
                             f"{value!r}") from None
    lengths = [len(row) for row in value]
    flat = [item for row in value for item in row]
    values = _build(flat, dtype, ragged_rank - 1, inner_shape)
    if ragged_rank == 1 and not flat:      # no values at all: an empty vector of the right dtype
        values = dense_constant(np.zeros((0,) + tuple(inner_shape or ())), dtype=dtype or dtypes.float32)
    return RaggedTensor.from_row_lengths(values, lengths)


def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the flat values of the RaggedTensors among the arguments (which must share their
    row partitions), the result given their partition."""
    partition = []

    def unwrap(v):
        if isinstance(v, RaggedTensor):
            splits = [s._value for s in v.nested_row_splits]
            if partition and (len(splits) != len(partition[0]) or
                              any(not np.array_equal(a, b) for a, b in zip(splits, partition[0]))):
                raise ValueError("map_flat_values: the RaggedTensor arguments have different row partitions")
            partition.append(splits)
            return v.flat_values
        if isinstance(v, (list, tuple)):
            return type(v)(unwrap(x) for x in v)
        if isinstance(v, dict):
            return {k: unwrap(x) for k, x in v.items()}
        return v

    flat_args = unwrap(list(args))
    flat_kwargs = unwrap(kwargs)
    if not partition:
        return op(*args, **kwargs)
    result = to_tensor(op(*flat_args, **flat_kwargs))
    return RaggedTensor.from_nested_row_splits(result, partition[0])


def range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=dtypes.int64):  # noqa: A001
    """Row i holds ``range(starts[i], limits[i], deltas[i])`` (scalars broadcast; one argument: limits)."""
    if limits is None:
        starts, limits = 0, starts
    parts = [np.asarray(to_tensor(v)._value) for v in (starts, limits, deltas)]
    out_dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.as_dtype(np.result_type(*parts))
    starts, limits, deltas = np.broadcast_arrays(*parts)
    if np.any(deltas == 0):
        raise ValueError("tf.ragged.range: deltas must not be zero")
    rows = [np.arange(s, l, d, dtype=out_dtype._np) for s, l, d in zip(starts.ravel(), limits.ravel(),
                                                                         deltas.ravel())]
    flat = np.concatenate(rows) if rows else np.zeros(0, out_dtype._np)
    return RaggedTensor.from_row_lengths(dense_constant(flat, dtype=out_dtype), [len(r) for r in rows])


def boolean_mask(data, mask, name=None):
    """The items of ``data`` where ``mask`` is true, kept in their rows (a RaggedTensor of ragged rank
    ``mask.rank - 1``, the rows' lengths counting the true entries)."""
    if isinstance(mask, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("tf.ragged.boolean_mask: a ragged mask needs ragged data")
        keep = np.asarray(mask.flat_values._value, bool)
        picked = array_ops.gather(data.flat_values, Tensor(np.flatnonzero(keep)))
        return _rebuild_kept(picked, keep, [s._value for s in mask.nested_row_splits])
    mask_t = to_tensor(mask)
    keep = np.asarray(mask_t._value, bool)
    if keep.ndim == 1:
        if isinstance(data, RaggedTensor):
            return data._gather_rows(np.flatnonzero(keep))
        return array_ops.gather(to_tensor(data), Tensor(np.flatnonzero(keep)))
    if isinstance(data, RaggedTensor):
        raise NotImplementedError("tf.ragged.boolean_mask: a dense mask of rank > 1 on ragged data is not "
                                  "supported by tapeflow")
    dense = to_tensor(data)
    shape = dense._value.shape
    k = keep.ndim
    flat = array_ops.reshape(dense, (int(np.prod(shape[:k])),) + shape[k:])
    picked = array_ops.gather(flat, Tensor(np.flatnonzero(keep.ravel())))
    splits = [np.arange(int(np.prod(shape[:d])) + 1, dtype=np.int64) * shape[d] for d in builtins.range(1, k)]
    return _rebuild_kept(picked, keep.ravel(), splits)


def _rebuild_kept(values, keep, nested_splits):
    """Row partitions recounted for only the kept innermost items."""
    counts = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
    splits = [counts[nested_splits[-1]]]
    for outer in reversed(nested_splits[:-1]):
        splits.insert(0, outer)
    return RaggedTensor.from_nested_row_splits(values, splits)

"""tf.ragged.constant and map_flat_values."""
import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant as dense_constant
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


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists; a Tensor when ``ragged_rank`` is 0."""
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

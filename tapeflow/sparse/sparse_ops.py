"""tf.sparse ops on SparseTensor, written with dense tapeflow ops on the values so gradients flow.

Ops whose result *structure* (which indices come out) depends on index values read those values in
Python; inside a tf.function, where indices are symbolic, they refuse with a clear error instead of
freezing a trace's placeholder values.
"""
import numpy as np

from ..framework import dtypes
from ..framework.conversion import convert_to_tensor
from ..framework.errors import InvalidArgumentError
from ..framework.recording import tracing_graph
from ..framework.tensor import Tensor
from ..ops import array_ops, math_ops, reduction_ops, update_ops
from ..ops.common import axes_tuple
from .sparse_tensor import SparseTensor

_REORDER_HINT = "Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy."


def _sparse(value, what):
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what}: expected a SparseTensor, got {type(value).__name__}")
    return value


def _concrete_indices(sp, what):
    """The index values, which must be known (not a traced placeholder) for ``what``."""
    if tracing_graph() is not None and type(sp.indices) is not Tensor:
        raise NotImplementedError(f"{what} on a SparseTensor with symbolic indices inside a tf.function is not "
                                  "supported by tapeflow: its result's structure depends on the index values")
    return sp.indices._value


def _dims(sp):
    return [int(d) for d in sp.dense_shape._value.tolist()]


def _check_indices(sp, what, ordered):
    """Indices inside the dense shape and, if ``ordered``, strictly increasing in row-major order."""
    if tracing_graph() is not None and type(sp.indices) is not Tensor:
        return          # symbolic: the scatter op checks the bounds at every call
    ids, dims = sp.indices._value, np.array(_dims(sp), np.int64)
    for i, index in enumerate(ids):
        text = "[" + ",".join(str(int(v)) for v in index) + "]"
        if ((index < 0) | (index >= dims)).any():
            raise InvalidArgumentError(f"{what}: indices[{i}] = {text} is out of bounds: need 0 <= index < "
                                       f"[{','.join(str(d) for d in dims)}]")
        if ordered and i:
            previous = tuple(ids[i - 1].tolist())
            if tuple(index.tolist()) == previous:
                raise InvalidArgumentError(f"{what}: indices[{i}] = {text} is repeated")
            if tuple(index.tolist()) < previous:
                raise InvalidArgumentError(f"{what}: indices[{i}] = {text} is out of order. {_REORDER_HINT}")


def _default_of(dtype, default_value):
    if default_value is not None:
        return convert_to_tensor(default_value, dtype=dtype)
    return Tensor(np.array(b"", object) if dtype == dtypes.string else np.zeros((), dtype._np))


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor: ``default_value`` (0) everywhere except at the indices. With ``validate_indices``
    the indices must be sorted and distinct; otherwise the last of repeated indices wins."""
    sp = _sparse(sp_input, "to_dense")
    _check_indices(sp, "to_dense", ordered=validate_indices)
    base = array_ops.fill(_dims(sp), _default_of(sp.dtype, default_value))
    count, rank = sp.indices._value.shape
    if count == 0:
        return base
    if rank == 0:                       # a scalar: the last entry is its value
        return array_ops.reshape(sp.values[-1], [])
    return update_ops.tensor_scatter_nd_update(base, sp.indices, sp.values)


def from_dense(tensor, name=None):
    """The SparseTensor of ``tensor``'s non-zero entries, in row-major order."""
    t = convert_to_tensor(tensor)
    if t._value.ndim == 0:
        raise InvalidArgumentError("from_dense: the tensor must have at least one dimension, got a scalar")
    indices = array_ops.where(math_ops.not_equal(t, _default_of(t.dtype, None)))
    return SparseTensor(indices, array_ops.gather_nd(t, indices), array_ops.shape(t, out_type=dtypes.int64))


def reorder(sp_input, name=None):
    """The same entries with indices in row-major (lexicographic) order."""
    sp = _sparse(sp_input, "reorder")
    ids = _concrete_indices(sp, "tf.sparse.reorder")
    order = np.lexsort(ids.T[::-1]) if ids.size else np.arange(ids.shape[0])
    return SparseTensor(Tensor(ids[order]), array_ops.gather(sp.values, Tensor(order)), sp.dense_shape)


def _same_shape(a, b, what):
    sa, sb = _dims(a), _dims(b) if isinstance(b, SparseTensor) else list(b._value.shape)
    if len(sa) != len(sb):
        raise InvalidArgumentError(f"{what}: operands have ranks {len(sa)} and {len(sb)}")
    for axis, (x, y) in enumerate(zip(sa, sb)):
        if x != y:
            raise InvalidArgumentError(f"{what}: Operands' shapes do not match: got {x} and {y} for dimension {axis}")


def add(a, b, threshold=0, name=None):
    """Sparse + sparse (a SparseTensor of the union of indices; sums smaller in magnitude than ``threshold``
    are dropped) or sparse + dense (a dense tensor)."""
    if not isinstance(a, SparseTensor):
        a, b = b, a
    a = _sparse(a, "add")
    if not isinstance(b, SparseTensor):
        dense = convert_to_tensor(b, dtype=a.dtype) if not isinstance(b, Tensor) else b
        _same_shape(a, dense, "add")
        return update_ops.tensor_scatter_nd_add(dense, a.indices, a.values)
    _same_shape(a, b, "add")
    ids = np.concatenate([_concrete_indices(a, "tf.sparse.add"), _concrete_indices(b, "tf.sparse.add")])
    unique, slot = np.unique(ids, axis=0, return_inverse=True)       # unique rows come out row-major sorted
    values = array_ops.concat([a.values, b.values], 0)
    sums = array_ops.unsorted_segment_sum(values, Tensor(slot.reshape(-1)), unique.shape[0])
    threshold = float(convert_to_tensor(threshold)._value) if threshold is not None else 0.0
    if threshold > 0:
        keep = np.flatnonzero(np.abs(sums._value) >= threshold)
        return SparseTensor(Tensor(unique[keep]), array_ops.gather(sums, Tensor(keep)), a.dense_shape)
    return SparseTensor(Tensor(unique.reshape(-1, ids.shape[1])), sums, a.dense_shape)


def _linear(indices, dims):
    """Row-major positions of ``indices`` (an int64 [N, k] tensor) in a tensor of shape ``dims``, as an op."""
    strides = [int(np.prod(dims[i + 1:], dtype=np.int64)) for i in range(len(dims))]
    return reduction_ops.reduce_sum(math_ops.multiply(indices, Tensor(np.array(strides, np.int64))), 1)


def _reduce(sp, axis, keepdims, what, combine):
    dims = _dims(sp)
    axes = axes_tuple(axis, len(dims), op=what)
    kept = [i for i in range(len(dims)) if i not in axes]
    kept_dims = [dims[i] for i in kept]
    count = int(np.prod(kept_dims, dtype=np.int64))
    if kept:
        position = _linear(array_ops.gather(sp.indices, kept, axis=1), kept_dims)
    else:
        position = Tensor(np.zeros(sp.indices._value.shape[0], np.int64))
    out = combine(sp.values, position, count)
    shape = [1 if i in axes else d for i, d in enumerate(dims)] if keepdims else kept_dims
    return array_ops.reshape(out, shape)


def reduce_sum(sp_input, axis=None, keepdims=False, output_is_sparse=False, name=None):
    """The sum of the entries over ``axis`` (all axes by default), as a dense tensor (or, with
    ``output_is_sparse``, a SparseTensor of the non-empty sums)."""
    sp = _sparse(sp_input, "reduce_sum")
    dense = _reduce(sp, axis, keepdims, "reduce_sum", array_ops.unsorted_segment_sum)
    return from_dense(dense) if output_is_sparse else dense


def _segment_max(values, position, count):
    base = array_ops.fill([count], Tensor(np.array(_lowest(values._value.dtype), values._value.dtype)))
    filled = update_ops.tensor_scatter_nd_max(base, array_ops.expand_dims(position, -1), values)
    empty = math_ops.equal(array_ops.unsorted_segment_sum(
        Tensor(np.ones(values._value.shape, np.int32)), position, count), Tensor(np.int32(0)))
    return array_ops.where(empty, array_ops.zeros_like(filled), filled)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def reduce_max(sp_input, axis=None, keepdims=False, output_is_sparse=False, name=None):
    """The largest entry over ``axis``; positions with no entry give 0 (as TensorFlow's sparse reduce_max)."""
    sp = _sparse(sp_input, "reduce_max")
    dense = _reduce(sp, axis, keepdims, "reduce_max", _segment_max)
    return from_dense(dense) if output_is_sparse else dense


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """A sparse [m, k] matrix times a dense [k, n] one (or dense times sparse), a dense [m, n] result;
    differentiable in the sparse values and in the dense operand."""
    if not isinstance(sp_a, SparseTensor):          # dense @ sparse = (sparse^T @ dense^T)^T
        return array_ops.transpose(sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a))
    sp = sp_a
    dense = convert_to_tensor(b, dtype=sp.dtype) if not isinstance(b, Tensor) else b
    dims = _dims(sp)
    if len(dims) != 2 or dense._value.ndim != 2:
        raise InvalidArgumentError(f"sparse_dense_matmul: both operands must be matrices, got shapes {dims} and "
                                   f"{list(dense._value.shape)}")
    if dense._value.dtype != sp.values._value.dtype:
        raise InvalidArgumentError(f"sparse_dense_matmul: the dtypes differ: {sp.dtype.name} and {dense.dtype.name}")
    values = math_ops.conj(sp.values) if adjoint_a and sp.values._value.dtype.kind == "c" else sp.values
    rows, cols = (1, 0) if adjoint_a else (0, 1)
    m, k = dims[rows], dims[cols]
    if adjoint_b:
        dense = array_ops.transpose(dense)
        if dense._value.dtype.kind == "c":
            dense = math_ops.conj(dense)
    if dense._value.shape[0] != k:
        raise InvalidArgumentError(f"sparse_dense_matmul: Cannot multiply A and B because inner dimension does not "
                                   f"match: {k} vs. {dense._value.shape[0]}. Did you forget a transpose? Dimensions "
                                   f"of A: {[m, k]}. Dimensions of B: {list(dense._value.shape)}")
    _check_indices(sp, "sparse_dense_matmul", ordered=False)
    picked = array_ops.gather(dense, sp.indices[:, cols])              # row k_i of B for each entry i
    terms = math_ops.multiply(array_ops.expand_dims(values, -1), picked)
    return array_ops.unsorted_segment_sum(terms, sp.indices[:, rows], m)  # added in entry order


def slice(sp_input, start, size, name=None):  # noqa: A001  (tf.sparse.slice)
    """The entries inside the box [start, start + size), re-indexed from ``start``; the box is clipped to the
    dense shape."""
    sp = _sparse(sp_input, "slice")
    ids = _concrete_indices(sp, "tf.sparse.slice")
    dims = np.array(_dims(sp), np.int64)
    start = np.asarray(convert_to_tensor(start)._value, np.int64).reshape(-1)
    size = np.asarray(convert_to_tensor(size)._value, np.int64).reshape(-1)
    if start.shape != dims.shape or size.shape != dims.shape or (start < 0).any() or (size < 0).any():
        raise InvalidArgumentError(f"slice: start and size must be {dims.size} non-negative integers, got "
                                   f"{start.tolist()} and {size.tolist()}")
    end = np.minimum(start + size, dims)
    inside = np.flatnonzero(((ids >= start) & (ids < end)).all(axis=1)) if ids.size else \
        np.arange(ids.shape[0])[:0]
    new_shape = np.maximum(end - start, 0)
    return SparseTensor(Tensor(ids[inside] - start), array_ops.gather(sp.values, Tensor(inside)),
                        Tensor(new_shape))


def transpose(sp_input, perm=None, name=None):
    """The entries with their coordinates permuted (reversed by default), reordered row-major."""
    sp = _sparse(sp_input, "transpose")
    rank = len(_dims(sp))
    perm = list(range(rank))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(rank)):
        raise InvalidArgumentError(f"transpose: perm {perm} is not a permutation of {rank} axes")
    moved = SparseTensor(array_ops.gather(sp.indices, perm, axis=1), sp.values,
                         Tensor(sp.dense_shape._value[perm]))
    return reorder(moved)


def map_values(op, *args, **kwargs):
    """``op`` applied to the values of the SparseTensor arguments (which must share their indices)."""
    sparse_args = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse_args:
        raise ValueError("map_values: no SparseTensor among the arguments")
    first = sparse_args[0]
    for other in sparse_args[1:]:
        if not (np.array_equal(other.indices._value, first.indices._value)
                and np.array_equal(other.dense_shape._value, first.dense_shape._value)):
            raise InvalidArgumentError("map_values: the SparseTensor arguments must have the same indices and shape")
    unwrap = lambda a: a.values if isinstance(a, SparseTensor) else a  # noqa: E731
    values = op(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return first.with_values(values)


def retain(sp_input, to_retain):
    """The entries for which the boolean vector ``to_retain`` holds."""
    sp = _sparse(sp_input, "retain")
    keep = convert_to_tensor(to_retain)._value
    if keep.dtype != np.bool_ or keep.shape != (sp.indices._value.shape[0],):
        raise InvalidArgumentError(f"retain: to_retain must be {sp.indices._value.shape[0]} booleans, got shape "
                                   f"{list(keep.shape)} of {keep.dtype}")
    kept = np.flatnonzero(keep)
    return SparseTensor(array_ops.gather(sp.indices, kept), array_ops.gather(sp.values, Tensor(kept)),
                        sp.dense_shape)


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """The identity matrix as a SparseTensor."""
    rows = int(num_rows)
    cols = rows if num_columns is None else int(num_columns)
    n = min(rows, cols)
    diagonal = np.repeat(np.arange(n, dtype=np.int64)[:, None], 2, axis=1)
    return SparseTensor(Tensor(diagonal), Tensor(np.ones(n, dtypes.as_dtype(dtype)._np)),
                        Tensor(np.array([rows, cols], np.int64)))

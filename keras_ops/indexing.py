"""Indexing, sorting and triangular ops of ``keras.ops``: take, take_along_axis, sort, argsort, nonzero,
unique, diagonal, trace, triu/tril, searchsorted, digitize, bincount, select.

Indices may be negative (counted from the end, as NumPy). Positions and
masks are computed with ops, so results stay differentiable in the data.
"""
import numpy as np

from tapeflow import executing_eagerly
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import normalize_axis

from .dtypes import convert, promote
from .reductions import sum as _sum
from .symbolic import records_operations


def _wrapped(indices, size):
    """Negative indices count from the end."""
    indices = convert(indices)
    if not indices.dtype.is_integer:
        raise ValueError(f"indices must be integers, received a tensor of {indices.dtype.name}")
    if indices.dtype.name not in ("int32", "int64"):
        indices = M.cast(indices, "int64")
    zero = convert(0, indices.dtype.name)
    return A.where(M.less(indices, zero), M.add(indices, convert(size, indices.dtype.name)), indices)


def take(x, indices, axis=None):
    x = convert(x)
    if axis is None:
        x, axis = A.reshape(x, [-1]), 0
    axis = normalize_axis(int(axis), x.ndim, op="take")
    return A.gather(x, _wrapped(indices, x.shape[axis]), axis=axis)


def take_along_axis(x, indices, axis=None):
    """``x`` picked along ``axis`` at ``indices``; the other axes broadcast against each other."""
    x, indices = convert(x), convert(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None, indices must be 1-D, received shape "
                             f"{tuple(indices.shape)}")
        x, axis = A.reshape(x, [-1]), 0
    axis = normalize_axis(int(axis), x.ndim, op="take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: x of shape {tuple(x.shape)} and indices of shape "
                         f"{tuple(indices.shape)} must have the same rank")
    others = np.broadcast_shapes(*[tuple(1 if i == axis else d for i, d in enumerate(t.shape)) for t in (x, indices)])
    x = A.broadcast_to(x, others[:axis] + (x.shape[axis],) + others[axis + 1:])
    indices = A.broadcast_to(indices, others[:axis] + (indices.shape[axis],) + others[axis + 1:])
    return A.take_along_axis(x, _wrapped(indices, x.shape[axis]), axis)


def argsort(x, axis=-1):
    x = convert(x)
    if axis is None:
        x, axis = A.reshape(x, [-1]), 0
    if x.ndim == 0:
        return Tensor(np.zeros((), np.int32))
    return A.argsort(x, axis)


def sort(x, axis=-1):
    x = convert(x)
    if axis is None:
        x, axis = A.reshape(x, [-1]), 0
    if x.ndim == 0:
        return x
    return A.sort(x, axis)


def nonzero(x):
    """One int64 index tensor per axis of ``x``, listing the positions of its non-zero elements."""
    x = convert(x)
    mask = x if x.dtype.name == "bool" else M.not_equal(x, convert(0, x.dtype.name))
    positions = A.where(mask)
    return tuple(A.unstack(positions, num=x.ndim, axis=1)) if x.ndim else ()


def unique(x, return_inverse=False, return_counts=False):
    """The sorted distinct values of ``x`` (flattened); eager only, since the result's size depends on
    the values."""
    if not executing_eagerly():
        raise ValueError("unique: the size of the result depends on the values, so it cannot run inside a "
                         "traced function (tf.function); call it eagerly")
    x = convert(x)
    values, inverse, counts = np.unique(x.numpy().reshape(-1), return_inverse=True, return_counts=True)
    out = [Tensor(values)]
    if return_inverse:
        out.append(Tensor(inverse.reshape(tuple(x.shape)).astype(np.int32)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int32)))
    return out[0] if len(out) == 1 else tuple(out)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the matrices on (axis1, axis2), as a new last axis (NumPy's layout)."""
    x = convert(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: `x` must have rank >= 2, received shape {tuple(x.shape)}")
    a1, a2 = normalize_axis(int(axis1), x.ndim, op="diagonal"), normalize_axis(int(axis2), x.ndim, op="diagonal")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, received {axis1} and {axis2}")
    rest = [a for a in range(x.ndim) if a not in (a1, a2)]
    moved = A.transpose(x, rest + [a1, a2])
    n, m = x.shape[a1], x.shape[a2]
    offset = int(offset)
    rows = np.arange(max(0, -offset), max(0, min(n, m - offset)))
    flat = A.reshape(moved, tuple(moved.shape[:-2]) + (n * m,))
    return A.gather(flat, rows * m + rows + offset, axis=flat.ndim - 1)


def trace(x, offset=0, axis1=0, axis2=1):
    return _sum(diagonal(x, offset, axis1, axis2), axis=-1)


def _triangle(x, k, lower):
    x = convert(x)
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: `x` must have rank >= 2, received shape {tuple(x.shape)}")
    n, m = x.shape[-2], x.shape[-1]
    keep = np.tri(n, m, int(k), dtype=bool) if lower else ~np.tri(n, m, int(k) - 1, dtype=bool)
    return A.where(Tensor(keep), x, convert(0, x.dtype.name))


def triu(x, k=0):
    return _triangle(x, k, lower=False)


def tril(x, k=0):
    return _triangle(x, k, lower=True)


def searchsorted(sorted_sequence, values, side="left"):
    """Insertion points of ``values`` in the sorted 1-D ``sorted_sequence`` (int32)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: `side` must be 'left' or 'right', received: side={side!r}")
    sequence, values = promote(sorted_sequence, values)
    if sequence.ndim != 1:
        raise ValueError(f"searchsorted: `sorted_sequence` must be 1-D, received shape {tuple(sequence.shape)}")
    before = (M.less if side == "left" else M.less_equal)(sequence, A.expand_dims(values, -1))
    return R.reduce_sum(M.cast(before, "int32"), -1)


def digitize(x, bins):
    """The index of the bin of each value: i with bins[i-1] <= x < bins[i] (increasing bins)."""
    return searchsorted(bins, x, side="right")


def bincount(x, weights=None, minlength=0):
    """Counts (or summed ``weights``) of each non-negative integer of the 1-D ``x``; int32 without weights."""
    x = convert(x)
    if x.ndim != 1 or x.dtype.name not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
        raise ValueError(f"bincount: `x` must be a 1-D integer tensor, received shape {tuple(x.shape)} of "
                         f"{x.dtype.name}")
    values = x.numpy()
    if values.size and values.min() < 0:
        raise ValueError(f"bincount: `x` must be non-negative, received a minimum of {values.min()}")
    length = max(int(values.max()) + 1 if values.size else 0, int(minlength))
    data = Tensor(np.ones(x.shape, np.int32)) if weights is None else convert(weights)
    return A.unsorted_segment_sum(data, x, length)


def select(condlist, choicelist, default=0):
    """The choice of the first true condition at each position, else ``default``."""
    if len(condlist) != len(choicelist) or not condlist:
        raise ValueError(f"select: condlist and choicelist must be non-empty and of equal length, received "
                         f"{len(condlist)} and {len(choicelist)}")
    choices = promote(*choicelist, default)
    out = choices[-1]
    for condition, choice in zip(reversed(condlist), reversed(choices[:-1])):
        condition = convert(condition)
        if condition.dtype.name != "bool":
            condition = M.cast(condition, "bool")
        shape = np.broadcast_shapes(tuple(condition.shape), tuple(choice.shape), tuple(out.shape))
        out = A.where(A.broadcast_to(condition, shape), A.broadcast_to(choice, shape), A.broadcast_to(out, shape))
    return out


records_operations(globals(), "keras.src.ops.numpy")   # called on KerasTensors: graph operations

"""Ops a compiled program calls without their forward's generic steps, where shapes and dtypes are proven.

- OneHot of signed integer indices along the last axis: one kernel writing ``on`` where the
  index equals the column and ``off`` elsewhere (an index out of range gives a row of ``off``,
  as the forward's comparison with ``arange(depth)`` does).
- Softmax along the last axis of a float32/float64 array: the forward's own row kernel
  (kernels/softmax.py) on the array as rows, without the forward's axis moves and copies.
"""
import numpy as np
from numba import njit

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@njit(cache=True)
def _one_hot_rows(indices, on, off, out):
    n, depth = out.shape
    for i in range(n):
        k = indices[i]
        for j in range(depth):
            out[i, j] = on if k == j else off


def one_hot_call(attrs, in_shape, in_dtype, out_shape, out_dtype):
    """A function of the indices computing OneHot with ``attrs``, or None where this form does not apply."""
    if in_shape is None or out_shape is None or in_dtype is None or in_dtype.kind != "i" \
            or out_dtype not in FLOATS or attrs.get("axis") not in (-1, len(in_shape)) \
            or np.dtype(attrs.get("dtype")) != out_dtype or tuple(out_shape) != tuple(in_shape) + (attrs["depth"],):
        return None
    on, off = np.asarray(attrs["on_value"], out_dtype)[()], np.asarray(attrs["off_value"], out_dtype)[()]
    n, depth = int(np.prod(in_shape, dtype=np.int64)), int(attrs["depth"])
    shape = tuple(out_shape)

    def one_hot(indices):
        out = np.empty((n, depth), out_dtype)
        _one_hot_rows(np.ascontiguousarray(indices).reshape(-1), on, off, out)
        return out.reshape(shape)
    one_hot.binds_attrs = True
    return one_hot


def softmax_call(attrs, in_shape, in_dtype):
    """A function computing Softmax with ``attrs`` on arrays of this shape and dtype, or None."""
    if in_shape is None or len(in_shape) < 1 or in_dtype not in FLOATS or 0 in in_shape \
            or attrs.get("axis") not in (-1, len(in_shape) - 1):
        return None
    from ..kernels.softmax import softmax_rows
    rows, cols = int(np.prod(in_shape[:-1], dtype=np.int64)), in_shape[-1]
    shape = tuple(in_shape)

    def softmax(x):
        out = np.empty((rows, cols), in_dtype)
        softmax_rows(np.ascontiguousarray(x).reshape(rows, cols), out)
        return out.reshape(shape)
    softmax.binds_attrs = True
    return softmax

"""Tensor creation in ``keras.ops``: zeros, ones, full, arange, linspace, eye, tri, meshgrid, diag.

Without a ``dtype`` Keras creates floatx tensors (``zeros``, ``ones``,
``full``, ``eye``), keeps the input's dtype (``*_like``) or infers it from the
arguments (``arange``: int32 for Python ints, floatx for floats).
"""
import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as A
from tapeflow.ops import linalg_ops as L
from tapeflow.ops import math_ops as M

from .config import floatx
from .dtypes import convert, is_tensor, result_type, standardize_dtype


def _dims(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    dims = tuple(int(d) for d in (shape.numpy() if is_tensor(shape) else shape))
    if any(d < 0 for d in dims):
        raise ValueError(f"Negative dimensions are not allowed, received shape={dims}")
    return dims


def _np_dtype(dtype):
    return np.dtype(standardize_dtype(dtype if dtype is not None else floatx()))


def zeros(shape, dtype=None):
    return Tensor(np.zeros(_dims(shape), _np_dtype(dtype)))


def ones(shape, dtype=None):
    return Tensor(np.ones(_dims(shape), _np_dtype(dtype)))


empty = zeros


def full(shape, fill_value, dtype=None):
    value = convert(fill_value, standardize_dtype(dtype))
    return A.broadcast_to(value, _dims(shape)) if value.shape != _dims(shape) else A.identity(value)


def zeros_like(x, dtype=None):
    x = convert(x)
    return Tensor(np.zeros(tuple(x.shape), _np_dtype(dtype or x.dtype.name)))


def ones_like(x, dtype=None):
    x = convert(x)
    return Tensor(np.ones(tuple(x.shape), _np_dtype(dtype or x.dtype.name)))


def full_like(x, fill_value, dtype=None):
    x = convert(x)
    return full(tuple(x.shape), fill_value, dtype or x.dtype.name)


def arange(start, stop=None, step=1, dtype=None):
    if step == 0:
        raise ValueError("arange: `step` must not be zero")
    if dtype is None:
        dtype = result_type(*(v if isinstance(v, (int, float)) else convert(v) for v in (start, step)
                              + (() if stop is None else (stop,))))
    values = [float(v) if isinstance(v, float) else (v.numpy().item() if is_tensor(v) else v)
              for v in (start, stop, step)]
    if stop is None:
        values = [0, values[0], values[2]]
    return Tensor(np.arange(*values, dtype=_np_dtype(dtype)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from start to stop (inclusive with ``endpoint``)."""
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: `num` must be non-negative, received num={num}")
    if dtype is None:
        dtype = result_type(*(v if isinstance(v, (int, float)) else convert(v) for v in (start, stop)), float)
    dtype = standardize_dtype(dtype)
    compute = dtype if dtype in ("float32", "float64") else floatx()
    start, stop = convert(start, compute), convert(stop, compute)
    divisions = max(num - 1 if endpoint else num, 1)
    step = M.divide(M.subtract(stop, start), convert(divisions, compute))
    if endpoint:
        values = A.linspace(start, stop, num, axis=axis)
    else:
        values = A.linspace(start, M.subtract(stop, step), num, axis=axis) if num > 1 else \
            A.linspace(start, start, num, axis=axis)
    values = M.cast(values, dtype)
    return (values, step) if retstep else values


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    exponents = linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
    return M.pow(convert(base, exponents.dtype.name), exponents)


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 - Keras's argument names
    return Tensor(np.eye(int(N), None if M is None else int(M), int(k), dtype=_np_dtype(dtype)))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 - Keras's argument names
    return Tensor(np.tri(int(N), None if M is None else int(M), int(k), dtype=_np_dtype(dtype)))


def meshgrid(*x, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: `indexing` must be 'xy' or 'ij', received: indexing={indexing!r}")
    return A.meshgrid(*[convert(v) for v in x], indexing=indexing)


def diag(x, k=0):
    """The k-th diagonal of a matrix, or a matrix with a vector on its k-th diagonal."""
    x = convert(x)
    k = int(k)
    if x.ndim == 1:
        pads = [[max(-k, 0), max(k, 0)], [max(k, 0), max(-k, 0)]]
        return A.pad(L.diag(x), pads) if k else L.diag(x)
    if x.ndim == 2:
        from .indexing import diagonal
        return diagonal(x, k)
    raise ValueError(f"diag: `x` must be 1-D or 2-D, received shape {tuple(x.shape)}")


def array(x, dtype=None):
    return convert(x, dtype)

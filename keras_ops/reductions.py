"""Reductions of ``keras.ops``: sum, mean, max, std, argmax, cumsum, median, quantile, ...

Keras's dtype rules: ``sum``/``prod``/``cumsum`` widen bools and small ints to
int32 (uint32 for small unsigned ints); ``mean`` of integers is float32;
``var``/``std``/``average``/``quantile`` of integers are floatx; ``argmax``
and ``argsort`` give int32. ``axis=None`` reduces (or, for argmax, cumsum,
flattens) everything.
"""
import builtins

import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import extra_math_ops as X
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import axes_tuple, normalize_axis

from .dtypes import convert, is_float, result_type, standardize_dtype, to_float
from .symbolic import records_operations

_WIDENED = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}


def _axes(x, axis, name):
    return axes_tuple(axis, x.ndim, op=name)


def _accumulating(x, dtype=None):
    """x cast to the dtype sums and products accumulate in."""
    name = standardize_dtype(dtype) if dtype is not None else x.dtype.name
    return M.cast(x, _WIDENED.get(name, name))


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras's public name
    x = convert(x)
    return R.reduce_sum(_accumulating(x), _axes(x, axis, "sum"), keepdims=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    x = convert(x)
    return R.reduce_prod(_accumulating(x, dtype), _axes(x, axis, "prod"), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    """Integers and bools average to float32; float16 is averaged in float32 and cast back."""
    x = convert(x)
    name = x.dtype.name
    compute = result_type(name, "float32")
    out = R.reduce_mean(M.cast(x, compute), _axes(x, axis, "mean"), keepdims=keepdims)
    return M.cast(out, name if is_float(name) else compute)


def var(x, axis=None, keepdims=False):
    """The biased variance (divided by N), computed in two passes."""
    x = convert(x)
    name = x.dtype.name
    axes = _axes(x, axis, "var")
    xc = M.cast(x, result_type(name, "float32"))
    centred = M.subtract(xc, R.reduce_mean(xc, axes, keepdims=True))
    out = R.reduce_mean(M.square(centred), axes, keepdims=keepdims)
    return M.cast(out, result_type(name, float))


def std(x, axis=None, keepdims=False):
    return M.sqrt(var(x, axis, keepdims))


def _extremum(reduce, pick, name):
    def extremum(x, axis=None, keepdims=False, initial=None):
        x = convert(x)
        axes = _axes(x, axis, name)
        if builtins.any(x.shape[a] == 0 for a in axes) and initial is None:
            raise ValueError(f"{name}: cannot reduce over an empty axis without an `initial` value "
                             f"(shape {tuple(x.shape)}, axis {axis})")
        if initial is None:
            return reduce(x, axes, keepdims=keepdims)
        start = convert(initial, x.dtype.name)
        if builtins.any(x.shape[a] == 0 for a in axes):
            kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims else \
                tuple(d for i, d in enumerate(x.shape) if i not in axes)
            return A.broadcast_to(start, kept)
        return pick(reduce(x, axes, keepdims=keepdims), start)
    extremum.__name__ = extremum.__qualname__ = name
    return extremum


max = _extremum(R.reduce_max, M.maximum, "max")  # noqa: A001 - Keras's public name
min = _extremum(R.reduce_min, M.minimum, "min")  # noqa: A001
amax = _extremum(R.reduce_max, M.maximum, "amax")
amin = _extremum(R.reduce_min, M.minimum, "amin")


def _bool_reduction(reduce, name):
    def reduction(x, axis=None, keepdims=False):
        x = convert(x)
        if x.dtype.name != "bool":
            x = M.not_equal(x, convert(0, x.dtype.name))
        return reduce(x, _axes(x, axis, name), keepdims=keepdims)
    reduction.__name__ = reduction.__qualname__ = name
    return reduction


all = _bool_reduction(R.reduce_all, "all")  # noqa: A001 - Keras's public name
any = _bool_reduction(R.reduce_any, "any")  # noqa: A001


def count_nonzero(x, axis=None):
    x = convert(x)
    nonzero = x if x.dtype.name == "bool" else M.not_equal(x, convert(0, x.dtype.name))
    return R.reduce_sum(M.cast(nonzero, "int32"), _axes(x, axis, "count_nonzero"))


def _arg_extremum(reduce, name):
    def arg_extremum(x, axis=None, keepdims=False):
        x = convert(x)
        if axis is None:
            out = reduce(A.reshape(x, [-1]), 0, output_type="int32")
            return A.reshape(out, (1,) * x.ndim) if keepdims else out
        axis = normalize_axis(int(axis), x.ndim, op=name)
        out = reduce(x, axis, output_type="int32")
        return A.expand_dims(out, axis) if keepdims else out
    arg_extremum.__name__ = arg_extremum.__qualname__ = name
    return arg_extremum


argmax = _arg_extremum(R.argmax, "argmax")
argmin = _arg_extremum(R.argmin, "argmin")


def _flat_or_axis(x, axis, name):
    if axis is None:
        return A.reshape(x, [-1]), 0
    return x, normalize_axis(int(axis), x.ndim, op=name)


def cumsum(x, axis=None, dtype=None):
    x, axis = _flat_or_axis(convert(x), axis, "cumsum")
    return R.cumsum(_accumulating(x, dtype), axis)


def cumprod(x, axis=None, dtype=None):
    x, axis = _flat_or_axis(convert(x), axis, "cumprod")
    return X.cumprod(_accumulating(x, dtype), axis)


def average(x, axis=None, weights=None):
    """The weighted mean along ``axis``; 1-D weights run along ``axis``."""
    x = convert(x)
    if weights is None:
        return mean(to_float(x), axis)
    weights = convert(weights)
    dtype = result_type(x.dtype.name, weights.dtype.name, float)
    x, weights = M.cast(x, dtype), M.cast(weights, dtype)
    if tuple(weights.shape) != tuple(x.shape):
        if axis is None or weights.ndim != 1:
            raise ValueError(f"average: weights of shape {tuple(weights.shape)} must have the shape of x "
                             f"{tuple(x.shape)}, or be 1-D along a given `axis`")
        axis = normalize_axis(int(axis), x.ndim, op="average")
        if weights.shape[0] != x.shape[axis]:
            raise ValueError(f"average: 1-D weights of length {weights.shape[0]} must match axis {axis} of x "
                             f"(size {x.shape[axis]})")
        weights = A.reshape(weights, [-1 if i == axis else 1 for i in range(x.ndim)])
    axes = _axes(x, axis, "average")
    total = R.reduce_sum(M.multiply(x, weights), axes)
    return M.divide(total, R.reduce_sum(A.broadcast_to(weights, tuple(x.shape)), axes))


# ------------------------------------------------------------- quantiles ---
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th quantiles along ``axis`` (NumPy's definitions); a 1-D ``q`` adds a leading axis."""
    if method not in _METHODS:
        raise ValueError(f"quantile: `method` must be one of {_METHODS}, received: method={method!r}")
    x = to_float(x)
    q_values = np.asarray(q.numpy() if hasattr(q, "numpy") else q, dtype=np.float64)
    if q_values.ndim > 1 or np.any((q_values < 0) | (q_values > 1)):
        raise ValueError(f"quantile: q must be a scalar or 1-D with values in [0, 1], received: q={q_values}")
    axes = _axes(x, axis, "quantile")
    kept = [a for a in range(x.ndim) if a not in axes]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        raise ValueError(f"quantile: cannot take a quantile over an empty axis (shape {tuple(x.shape)})")
    moved = A.transpose(x, kept + list(axes))
    flat = A.reshape(moved, tuple(x.shape[a] for a in kept) + (n,))
    ordered = A.sort(flat, -1)
    position = np.atleast_1d(q_values) * (n - 1)
    below, above = np.floor(position).astype(np.int64), np.ceil(position).astype(np.int64)
    if method == "lower":
        above = below
    elif method == "higher":
        below = above
    elif method == "nearest":
        below = above = np.round(position).astype(np.int64)
    low, high = A.gather(ordered, below, axis=ordered.ndim - 1), A.gather(ordered, above, axis=ordered.ndim - 1)
    if method == "midpoint":
        out = M.multiply(M.add(low, high), convert(0.5, x.dtype.name))
    else:
        fraction = convert((position - below).astype(x.dtype.name) if method == "linear"
                           else np.zeros(position.shape, x.dtype.name))
        out = M.add(low, M.multiply(M.subtract(high, low), fraction))
    out = A.transpose(out, [out.ndim - 1] + list(range(out.ndim - 1)))      # the q axis first
    if keepdims:
        out = A.reshape(out, (out.shape[0],) + tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out if q_values.ndim else out[0]


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    return M.subtract(max(x, axis, keepdims), min(x, axis, keepdims))


records_operations(globals(), "keras.src.ops.numpy")   # called on KerasTensors: graph operations

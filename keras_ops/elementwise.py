"""Elementwise ``keras.ops``: arithmetic, transcendental functions, rounding, comparisons, logic.

Operands are promoted by Keras's rules (``dtypes.promote``); functions that
are only defined on reals (exp, sin, sqrt, ...) compute integers and bools in
floatx. Each maps onto a tapeflow op, so gradients of any order flow through.
"""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import extra_math_ops as X
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .dtypes import convert, is_float, is_int, promote, result_type, to_float
from .symbolic import records_operations


# -------------------------------------------------------------- arithmetic ---
def add(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.dtype.name == "bool":
        return M.logical_or(x1, x2)
    return M.add(x1, x2)


def subtract(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.dtype.name == "bool":
        raise TypeError("subtract: booleans cannot be subtracted; use logical_xor")
    return M.subtract(x1, x2)


def multiply(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.dtype.name == "bool":
        return M.logical_and(x1, x2)
    return M.multiply(x1, x2)


def divide(x1, x2):
    """True division; integers and bools divide as floats (floatx)."""
    x1, x2 = _promote_to_float(x1, x2)
    return M.realdiv(x1, x2)


true_divide = divide


def divide_no_nan(x1, x2):
    x1, x2 = _promote_to_float(x1, x2)
    return M.div_no_nan(x1, x2)


def floor_divide(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.floordiv(_bool_as_int(x1), _bool_as_int(x2))


def mod(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.floormod(_bool_as_int(x1), _bool_as_int(x2))


def power(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.pow(_bool_as_int(x1), _bool_as_int(x2))


def negative(x):
    return M.negative(convert(x))


def abs(x):  # noqa: A001 - Keras's public name
    x = convert(x)
    return x if x.dtype.name == "bool" or x.dtype.is_unsigned else M.abs(x)


absolute = abs


def square(x):
    x = _bool_as_int(convert(x))
    return M.square(x)


def reciprocal(x):
    return M.reciprocal(to_float(x))


def sign(x):
    return M.sign(_bool_as_int(convert(x)))


def maximum(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.maximum(x1, x2)


def minimum(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.minimum(x1, x2)


def clip(x, x_min, x_max):
    """``x`` limited to [x_min, x_max], in the promoted dtype of the three (bools count as int32), so float
    bounds on an int tensor give floats rather than truncated bounds."""
    x, lo, hi = promote(_bool_as_int(convert(x)), x_min, x_max)
    return M.clip_by_value(x, lo, hi)


def _bool_as_int(x):
    return M.cast(x, "int32") if x.dtype.name == "bool" else x


def _promote_to_float(x1, x2):
    dtype = result_type(*(v if _is_python_number(v) else convert(v) for v in (x1, x2)), float)
    return convert(x1, dtype), convert(x2, dtype)


def _is_python_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, np.generic)


# ------------------------------------------------- real functions (to float) ---
def _real_function(op):
    def function(x):
        return op(to_float(x))
    function.__name__ = function.__qualname__ = op.__name__
    return function


exp = _real_function(M.exp)
expm1 = _real_function(M.expm1)
log = _real_function(M.log)
log1p = _real_function(M.log1p)
sqrt = _real_function(M.sqrt)
sin = _real_function(M.sin)
cos = _real_function(M.cos)
tan = _real_function(M.tan)
arcsin = _real_function(M.asin)
arccos = _real_function(M.acos)
arctan = _real_function(M.atan)
sinh = _real_function(M.sinh)
cosh = _real_function(M.cosh)
tanh = _real_function(M.tanh)
arcsinh = _real_function(X.asinh)
arccosh = _real_function(X.acosh)
arctanh = _real_function(X.atanh)


def exp2(x):
    x = to_float(x)
    return M.pow(convert(2.0, x.dtype.name), x)


def log2(x):
    x = to_float(x)
    return M.divide(M.log(x), convert(np.log(2.0), x.dtype.name))


def log10(x):
    x = to_float(x)
    return M.divide(M.log(x), convert(np.log(10.0), x.dtype.name))


def arctan2(x1, x2):
    x1, x2 = _promote_to_float(x1, x2)
    return X.atan2(x1, x2)


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)), computed without overflow (a logsumexp over the pair)."""
    x1, x2 = _promote_to_float(x1, x2)
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    return R.reduce_logsumexp(A.stack([A.broadcast_to(x1, shape), A.broadcast_to(x2, shape)]), 0)


def hypot(x1, x2):
    x1, x2 = _promote_to_float(x1, x2)
    return M.sqrt(M.add(M.square(x1), M.square(x2)))


def deg2rad(x):
    x = to_float(x)
    return M.multiply(x, convert(np.pi / 180, x.dtype.name))


def rad2deg(x):
    x = to_float(x)
    return M.multiply(x, convert(180 / np.pi, x.dtype.name))


# ---------------------------------------------------------------- rounding ---
def floor(x):
    return M.floor(to_float(x))


def ceil(x):
    return M.ceil(to_float(x))


def trunc(x):
    """Rounds toward zero; integers are returned unchanged."""
    x = convert(x)
    if not is_float(x.dtype.name):
        return x
    return A.where(M.less(x, convert(0, x.dtype.name)), M.ceil(x), M.floor(x))


def round(x, decimals=0):  # noqa: A001 - Keras's public name
    """Half to even (as NumPy), at ``decimals`` digits; integers with decimals < 0 round to tens, hundreds..."""
    x = convert(x)
    name = x.dtype.name
    decimals = int(decimals)
    if is_int(name) or name == "bool":
        if decimals >= 0:
            return x
        factor = convert(10.0 ** -decimals, "float64")
        return M.cast(M.multiply(M.round(M.divide(M.cast(x, "float64"), factor)), factor), name)
    if decimals == 0:
        return M.round(x)
    factor = convert(10.0 ** decimals, name)
    return M.divide(M.round(M.multiply(x, factor)), factor)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    x = convert(x)
    name = x.dtype.name
    if not is_float(name):
        return x
    info = np.finfo(name)
    x = A.where(M.is_nan(x), convert(nan, name), x)
    x = A.where(M.logical_and(M.is_inf(x), M.greater(x, convert(0, name))),
                convert(info.max if posinf is None else posinf, name), x)
    return A.where(M.logical_and(M.is_inf(x), M.less(x, convert(0, name))),
                   convert(info.min if neginf is None else neginf, name), x)


# ------------------------------------------------------------ comparisons ---
def _comparison(op):
    def comparison(x1, x2):
        x1, x2 = promote(x1, x2)
        return op(x1, x2)
    comparison.__name__ = comparison.__qualname__ = op.__name__
    return comparison


equal = _comparison(M.equal)
not_equal = _comparison(M.not_equal)
greater = _comparison(M.greater)
greater_equal = _comparison(M.greater_equal)
less = _comparison(M.less)
less_equal = _comparison(M.less_equal)


def _as_bool(x):
    x = convert(x)
    return x if x.dtype.name == "bool" else M.not_equal(x, convert(0, x.dtype.name))


def logical_and(x1, x2):
    return M.logical_and(_as_bool(x1), _as_bool(x2))


def logical_or(x1, x2):
    return M.logical_or(_as_bool(x1), _as_bool(x2))


def logical_xor(x1, x2):
    return M.logical_xor(_as_bool(x1), _as_bool(x2))


def logical_not(x):
    return M.logical_not(_as_bool(x))


def _float_test(op, for_non_float, name):
    def test(x):
        x = convert(x)
        if not is_float(x.dtype.name):
            return A.fill(tuple(x.shape), for_non_float)
        return op(x)
    test.__name__ = test.__qualname__ = name
    return test


isnan = _float_test(M.is_nan, False, "isnan")
isinf = _float_test(M.is_inf, False, "isinf")
isfinite = _float_test(M.is_finite, True, "isfinite")


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """|x1 - x2| <= atol + rtol * |x2| (as NumPy), infinities equal only to themselves."""
    x1, x2 = promote(x1, x2)
    if not is_float(x1.dtype.name):
        x1, x2 = M.cast(x1, "float64"), M.cast(x2, "float64")
    name = x1.dtype.name
    finite = M.logical_and(M.is_finite(x1), M.is_finite(x2))
    zero = convert(0, name)
    a, b = A.where(finite, x1, zero), A.where(finite, x2, zero)   # no inf - inf below
    close = M.less_equal(M.abs(M.subtract(a, b)), M.add(convert(atol, name), M.multiply(convert(rtol, name), M.abs(b))))
    close = M.logical_or(M.logical_and(close, finite), M.equal(x1, x2))
    if equal_nan:
        close = M.logical_or(close, M.logical_and(M.is_nan(x1), M.is_nan(x2)))
    return close


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return R.reduce_all(isclose(x1, x2, rtol, atol, equal_nan))


def where(condition, x1=None, x2=None):
    """``x1`` where ``condition`` holds, else ``x2``; with neither, the indices of true elements (``nonzero``)."""
    if (x1 is None) != (x2 is None):
        raise ValueError("`x1` and `x2` either both should be `None` or both should have non-None value.")
    condition = _as_bool(condition)
    if x1 is None:
        from .indexing import nonzero
        return nonzero(condition)
    x1, x2 = promote(x1, x2)
    return A.where(condition, x1, x2)


# ----------------------------------------------------------------- complex ---
def conjugate(x):
    return M.conj(convert(x))


conj = conjugate


def real(x):
    return M.real(convert(x))


def imag(x):
    return M.imag(convert(x))


# ----------------------------------------------------------------- bitwise ---
def _bitwise(op):
    def bitwise(x, y):
        x, y = promote(x, y)
        return op(x, y)
    bitwise.__name__ = bitwise.__qualname__ = op.__name__
    return bitwise


bitwise_and = _bitwise(X.bitwise_and)
bitwise_or = _bitwise(X.bitwise_or)
bitwise_xor = _bitwise(X.bitwise_xor)
bitwise_left_shift = left_shift = _bitwise(X.left_shift)
bitwise_right_shift = right_shift = _bitwise(X.right_shift)


def bitwise_invert(x):
    return X.invert(convert(x))


bitwise_not = bitwise_invert


records_operations(globals(), "keras.src.ops.numpy")   # called on KerasTensors: graph operations

"""Keras 3's dtype rules: dtype names, type promotion, and conversion of operands.

Keras promotes types on a lattice (the one JAX uses): a dtype may be
converted to any dtype above it, and the result of an op on several operands
is their least upper bound. Python ``int`` and ``float`` are *weak*: they
adopt the other operand's kind and width (``int8 tensor + 1`` stays int8,
``int32 tensor + 0.5`` is a float). A weak result takes the width of
``floatx`` (``float32`` by default).
"""
import numpy as np

from tapeflow.framework import dtypes as tf_dtypes
from tapeflow.framework.conversion import convert_to_tensor as tf_convert
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import math_ops

from .config import floatx

FLOAT_TYPES = ("float16", "float32", "float64")
INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
COMPLEX_TYPES = ("complex64", "complex128")
ALLOWED_DTYPES = ("bool",) + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES

# dtype -> the dtypes directly above it; "int", "float" and "complex" are the weak Python types.
_ABOVE = {
    "bool": ("int",),
    "int": ("uint8", "int8"),
    "uint8": ("int16", "uint16"), "uint16": ("int32", "uint32"), "uint32": ("int64", "uint64"),
    "uint64": ("float",),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": ("float",),
    "float": ("float16", "complex"),
    "float16": ("float32",), "float32": ("float64", "complex64"), "float64": ("complex128",),
    "complex": ("complex64",), "complex64": ("complex128",), "complex128": (),
}
_WEAK = ("int", "float", "complex")


def _upper_closure(dtype):
    seen, todo = {dtype}, [dtype]
    while todo:
        for up in _ABOVE[todo.pop()]:
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return seen


_UPPER = {d: frozenset(_upper_closure(d)) for d in _ABOVE}


def _least_upper_bound(names):
    common = frozenset.intersection(*(_UPPER[n] for n in names))
    # The least element of the common upper bounds is the one whose own closure holds all the others.
    for candidate in common:
        if _UPPER[candidate] == common:
            return candidate
    raise ValueError(f"No common dtype for {sorted(names)}")  # the lattice is complete: never reached


def standardize_dtype(dtype):
    """A dtype given as a name, DType, numpy dtype or Python type, as Keras's name (``"float32"``)."""
    if dtype is None:
        return floatx()
    if dtype is int:
        return "int32"
    if dtype is float:
        return "float32"
    if dtype is bool:
        return "bool"
    if dtype is complex:
        return "complex128"
    if isinstance(dtype, str) and dtype in ALLOWED_DTYPES:
        return dtype
    try:
        name = tf_dtypes.as_dtype(dtype).name
    except TypeError:
        name = None
    if name not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype!r}. Expected one of {', '.join(ALLOWED_DTYPES)}.")
    return name


def _name_and_weakness(value):
    """(dtype name, is weak) of an operand or dtype: Python int/float/complex (values or types) are weak."""
    if value is int or value is float or value is complex:
        return {int: "int", float: "float", complex: "complex"}[value], True
    if isinstance(value, bool) or value is bool:
        return "bool", False
    if isinstance(value, (int, float, complex)) and not isinstance(value, np.generic):
        return _name_and_weakness(type(value))
    dtype = getattr(value, "dtype", value)
    return standardize_dtype(dtype), False


def _resolve_weak(name):
    bits = floatx()[-2:]
    if name == "float":
        return "float" + bits
    if name == "int":
        return "int" + bits
    if name == "complex":
        return "complex128" if bits == "64" else "complex64"
    return name


def result_type(*values):
    """Keras's ``keras.backend.result_type``: the dtype an op on ``values`` (dtypes, tensors or Python
    scalars) computes in. With no argument, floatx."""
    if not values:
        return floatx()
    names = {_name_and_weakness(v)[0] for v in values}
    name = _least_upper_bound(names)
    return _resolve_weak(name) if name in _WEAK else name


# ------------------------------------------------------------ conversion ---
def is_tensor(x):
    return isinstance(x, (Tensor, Variable))


def dtype_of(x):
    """The Keras dtype name of a tensor."""
    return x.dtype.name


def is_float(name):
    return name in FLOAT_TYPES


def is_int(name):
    return name in INT_TYPES


def convert(x, dtype=None):
    """``keras.ops.convert_to_tensor``: Python floats become float32 and ints int32 (as in TensorFlow);
    numpy arrays keep their dtype; with ``dtype`` the value is cast (ints and bools included)."""
    if dtype is not None:
        dtype = standardize_dtype(dtype)
    if is_tensor(x):
        t = tf_convert(x)
    elif dtype is not None and not isinstance(x, (np.ndarray, np.generic)):
        try:
            return tf_convert(x, dtype=dtype)
        except (TypeError, ValueError):
            t = tf_convert(x)        # e.g. floats to an int dtype: converted as they are, then cast
    else:
        t = tf_convert(x)
    if dtype is not None and t.dtype.name != dtype:
        t = math_ops.cast(t, dtype)
    return t


def cast(x, dtype):
    return math_ops.cast(convert(x), standardize_dtype(dtype))


def promote(*values):
    """Converts ``values`` to tensors of their Keras result type (Python scalars weakly)."""
    dtype = result_type(*(v if isinstance(v, (int, float, complex)) and not isinstance(v, np.generic)
                          else convert(v) for v in values))
    return tuple(convert(v, dtype) for v in values)


def to_float(x, dtype=None):
    """``x`` as a tensor, with ints and bools cast to ``dtype`` (floatx by default); floats unchanged."""
    x = convert(x)
    if not is_float(x.dtype.name) and "complex" not in x.dtype.name:
        x = math_ops.cast(x, dtype or floatx())
    return x

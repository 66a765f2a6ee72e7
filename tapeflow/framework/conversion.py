"""convert_to_tensor and constant: Python/numpy values to Tensors with TensorFlow's dtype rules."""
import numpy as np

from . import dtypes
from .tensor import Tensor

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _default_array(value):
    """numpy array of a Python value with TensorFlow's defaults: float32 for floats, int32 for ints."""
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind == "f" and arr.dtype == np.float64:
        return arr.astype(np.float32)
    if kind == "i" and arr.dtype == np.int64:
        if arr.size == 0 or (arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX):
            return arr.astype(np.int32)
        return arr
    if kind == "c" and arr.dtype == np.complex128:
        return arr
    if kind in "US":
        return _as_bytes(arr)
    return arr


def _as_bytes(arr):
    """TensorFlow strings are bytes: str becomes utf-8 encoded bytes, in an object array."""
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    return arr.astype(object)


def _cast_array(value, dtype):
    """numpy array of ``value`` in DType ``dtype``, refusing lossy float->int conversion."""
    np_dtype = dtype._np
    arr = np.asarray(value)
    if arr.dtype == np_dtype:
        return arr
    if dtype.is_integer or dtype.is_bool:
        if arr.dtype.kind in "fc" and not np.all(np.equal(np.mod(arr.real, 1), 0)):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if dtype.is_floating or dtype.is_integer:
        if arr.dtype.kind == "c":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if dtype == dtypes.string and arr.dtype.kind in "US":    # Python str to a string tensor: utf-8 bytes
        return _as_bytes(arr)
    if arr.dtype.kind in "USO" and np_dtype.kind != "O":
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    return arr.astype(np_dtype)


def _wrap(arr):
    """A Tensor of ``arr``; 0-d float, complex and bool values are kept as numpy scalars,
    which is what numpy's own operators return, so scalar arithmetic never mixes 0-d
    arrays and scalars (a mixed operation costs numpy ~15x more). Integers stay 0-d
    arrays: numpy scalar integer arithmetic warns on the wraparound TensorFlow does silently."""
    if arr.ndim == 0 and arr.dtype.kind in "fcb":
        arr = arr[()]
    return Tensor(arr)


def _contains_tensors(value):
    if isinstance(value, (list, tuple)):
        return any(_contains_tensors(v) for v in value)
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def _tensor_dtypes(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensor_dtypes(v)
    elif isinstance(value, Tensor):
        yield value.dtype
    elif hasattr(value, "_as_tensor"):
        yield value.dtype


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Converts Tensors, Variables, numpy arrays, Python scalars and nested lists to a Tensor."""
    if isinstance(value, Tensor):
        if dtype is not None and value._value.dtype != dtypes.as_dtype(dtype)._np:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor "
                             f"with dtype {value.dtype.name}: {value!r}")
        return value
    as_tensor = getattr(value, "_as_tensor", None)
    if as_tensor is not None:
        return convert_to_tensor(as_tensor(), dtype=dtype)
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor.")
    if isinstance(value, (list, tuple)) and value and _contains_tensors(value):
        from ..ops import array_ops  # lazy: ops sit above framework
        if dtype is None:  # Python numbers in the list take the tensors' dtype, as TensorFlow packs them
            dtype = next(_tensor_dtypes(value), None)
        return array_ops.stack([convert_to_tensor(v, dtype=dtype, dtype_hint=dtype_hint) for v in value])
    if dtype is not None:
        return _wrap(_cast_array(value, dtypes.as_dtype(dtype)))
    if dtype_hint is not None and not isinstance(value, (np.ndarray, np.generic)):
        try:
            return _wrap(_cast_array(value, dtypes.as_dtype(dtype_hint)))
        except (TypeError, ValueError):
            pass
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "US":
            arr = _as_bytes(arr)
        return _wrap(arr)
    try:
        return _wrap(_default_array(value))
    except (TypeError, ValueError) as err:
        raise TypeError(f"Cannot convert {value!r} of type {type(value).__name__!r} to a Tensor: {err}") from None


def constant(value, dtype=None, shape=None, name=None):
    """tf.constant: a new Tensor holding ``value`` (never connected to any tape)."""
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        arr = np.asarray(convert_to_tensor(value)._value)
        arr = arr if dtype is None else _cast_array(arr, dtypes.as_dtype(dtype))
    elif dtype is not None:
        arr = _cast_array(value, dtypes.as_dtype(dtype))
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.array(value)
        if arr.dtype.kind in "US":
            arr = _as_bytes(arr)
    else:
        arr = _default_array(value)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tried to convert "
                            f"a value of {arr.size} elements to a tensor of shape {list(shape)}.")
    return _wrap(arr)

"""convert_to_tensor and constant: Python/numpy values to Tensors with TensorFlow's dtype rules."""
import numpy as np

from . import dtypes
from .tensor import Tensor

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _default_array(value):
    """numpy array of a Python value with TensorFlow's defaults: float32 for floats, int32 for ints."""
    if isinstance(value, (str, bytes)):
        return _as_bytes(value)    # not through numpy's str types, which drop trailing NULs
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
        if not isinstance(value, (list, tuple)):
            return _as_bytes(arr)
        try:
            return _as_bytes(value)
        except TypeError:
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.") from None
    return arr


def _leaf_bytes(leaf, value, strict):
    if isinstance(leaf, bytes):           # np.bytes_ too
        return bytes(leaf)
    if isinstance(leaf, str):             # np.str_ too
        return leaf.encode("utf-8")
    if not strict:
        return leaf
    if isinstance(leaf, (list, tuple)):
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {value!r}")
    raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string: {type(leaf).__name__} "
                    "elements are not strings")


def _as_bytes(value, strict=True):
    """TensorFlow strings are bytes: an object array whose elements are bytes, str UTF-8 encoded.
    Python lists are read element by element (numpy's str arrays would drop trailing NULs and
    silently turn numbers mixed in into text). ``strict=False`` (a numpy object array given as
    such) leaves elements that are not strings as they are."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        return value.astype(object)
    if isinstance(value, np.ndarray) and value.dtype.kind == "U":
        return np.char.encode(value, "utf-8").astype(object) if value.size else value.astype(object)
    arr = np.array(value, dtype=object)
    flat = arr.reshape(-1)
    out = np.empty(flat.shape, dtype=object)
    for i, leaf in enumerate(flat):
        out[i] = _leaf_bytes(leaf, value, strict)
    return out.reshape(arr.shape)


def _cast_array(value, dtype):
    """numpy array of ``value`` in DType ``dtype``, refusing lossy float->int conversion."""
    np_dtype = dtype._np
    if np_dtype.kind == "O" and isinstance(value, (bytes, str)):    # not through numpy's bytes dtype, which
        return _as_bytes([value]).reshape(())                           # drops trailing NUL bytes
    arr = np.asarray(value) if np_dtype.kind != "O" or not isinstance(value, (list, tuple)) \
        else np.array(value, dtype=object)
    if arr.dtype == np_dtype and np_dtype.kind != "O":
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
    if np_dtype.kind == "O":
        if arr.dtype.kind not in "USO":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        return _as_bytes(value if isinstance(value, (list, tuple)) else arr)
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
        if arr.dtype.kind in "USO":
            arr = _as_bytes(arr, strict=False)
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
        if arr.dtype.kind in "USO":
            arr = _as_bytes(arr, strict=False)
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

"""DType: TensorFlow's dtype objects on top of numpy dtypes."""
import numpy as np


class DType:
    __slots__ = ("name", "as_numpy_dtype", "_np")

    def __init__(self, name, np_dtype):
        self.name = name
        self._np = np.dtype(np_dtype) if np_dtype is not None else None
        self.as_numpy_dtype = self._np.type if self._np is not None else None

    @property
    def is_floating(self):
        return self._np is not None and self._np.kind == "f"

    @property
    def is_complex(self):
        return self._np is not None and self._np.kind == "c"

    @property
    def is_integer(self):
        return self._np is not None and self._np.kind in "iu"

    @property
    def is_unsigned(self):
        return self._np is not None and self._np.kind == "u"

    @property
    def is_bool(self):
        return self.name == "bool"

    @property
    def is_trainable(self):
        """Gradients flow only through floating and complex tensors."""
        return self.is_floating or self.is_complex

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def size(self):
        return self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def __repr__(self):
        return "tf." + self.name

    def __str__(self):
        return "<dtype: %r>" % self.name

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.name == other.name
        try:
            return self.name == as_dtype(other).name
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
double = float64
half = float16
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)  # noqa: A001 - TensorFlow's public name
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
string = DType("string", np.object_)

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
        uint32, uint64, bool, complex64, complex128]
_BY_NAME = {d.name: d for d in _ALL + [string]}
_BY_NAME.update(double=float64, half=float16)
_BY_NP = {d._np: d for d in _ALL}


def as_dtype(value):
    """Converts a DType, numpy dtype, Python type or name to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            raise TypeError(f"Cannot convert the argument `type_value`: {value!r} to a TensorFlow DType.") from None
    if value is None:
        raise TypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    if value is float:
        return float32
    if value is int:
        return int32
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert the argument `type_value`: {value!r} to a TensorFlow DType.") from None
    if npd.kind in "USO":
        return string
    try:
        return _BY_NP[npd]
    except KeyError:
        raise TypeError(f"Cannot convert the argument `type_value`: {value!r} to a TensorFlow DType.") from None


def from_numpy(np_dtype):
    """The DType of a numpy dtype (fast path used by Tensor.dtype)."""
    d = _BY_NP.get(np_dtype)
    return d if d is not None else as_dtype(np_dtype)

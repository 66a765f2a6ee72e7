"""SparseTensor: a tensor given by the coordinates of its non-default entries and their values.

``indices`` is an int64 [N, rank] tensor, ``values`` the N entries (any dtype; gradients flow through
it as through any tensor), ``dense_shape`` the int64 shape of the dense tensor it stands for.
"""
import numpy as np

from ..framework import dtypes
from ..framework.conversion import convert_to_tensor
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.variables import Variable
from ..ops import array_ops, math_ops


def _int64(value, what):
    if isinstance(value, (Tensor, Variable)):
        t = convert_to_tensor(value)
        if t._value.dtype.kind not in "iu":
            raise TypeError(f"SparseTensor: {what} must be integers, got {t.dtype.name}")
        return t if t._value.dtype == np.int64 else math_ops.cast(t, dtypes.int64)
    return convert_to_tensor(value, dtype=dtypes.int64)


class SparseTensor:
    """tf.sparse.SparseTensor(indices, values, dense_shape)."""

    def __init__(self, indices, values, dense_shape):
        self._indices = _int64(indices, "indices")
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = _int64(dense_shape, "dense_shape")
        ids, vals, shape = self._indices._value, self._values._value, self._dense_shape._value
        if ids.ndim != 2:
            raise ValueError(f"SparseTensor: indices must have rank 2 ([number of values, rank]), got shape "
                             f"{self._indices.shape}")
        if vals.ndim != 1 or vals.shape[0] != ids.shape[0]:
            raise ValueError(f"SparseTensor: values must be a vector of the {ids.shape[0]} entries indices names, "
                             f"got shape {self._values.shape}")
        if shape.ndim != 1 or shape.shape[0] != ids.shape[1]:
            raise ValueError(f"SparseTensor: dense_shape must be a vector of {ids.shape[1]} dimensions (the "
                             f"rank indices give), got shape {self._dense_shape.shape}")
        if (shape < 0).any():
            raise ValueError(f"SparseTensor: dense_shape must be non-negative, got {shape.tolist()}")

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        raise TypeError(f"SparseTensor.from_value expects a SparseTensor, got {type(value).__name__}")

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        return TensorShape(self._dense_shape._value.tolist())

    def get_shape(self):
        return self.shape

    def with_values(self, new_values):
        """The same indices and shape with other values (of the same count)."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def _dense_at_indices(self, other):
        """``other`` broadcast to the dense shape, read at this tensor's indices."""
        other = convert_to_tensor(other, dtype=self.dtype) if not isinstance(other, Tensor) else other
        return array_ops.gather_nd(array_ops.broadcast_to(other, self.shape.as_list()), self._indices)

    def __mul__(self, other):
        return self.with_values(math_ops.multiply(self._values, self._dense_at_indices(other)))

    def __truediv__(self, other):
        return self.with_values(math_ops.truediv(self._values, self._dense_at_indices(other)))

    __div__ = __truediv__

    def _as_tensor(self):  # what convert_to_tensor calls: a clear refusal, as TensorFlow
        raise ValueError(f"Attempt to convert a value ({self!r}) with an unsupported type ({type(self)}) to a "
                         "Tensor: use tf.sparse.to_dense.")

    def __repr__(self):
        return f"SparseTensor(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"

    __str__ = __repr__


class SparseTensorSpec:
    """The type of a SparseTensor: its dense shape and dtype."""

    def __init__(self, shape=None, dtype=dtypes.float32):
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def value_type(self):
        return SparseTensor

    def is_compatible_with(self, other):
        if isinstance(other, SparseTensor):
            other = SparseTensorSpec.from_value(other)
        return (isinstance(other, SparseTensorSpec) and self._dtype == other._dtype
                and self._shape.is_compatible_with(other._shape))

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and (self._shape, self._dtype) == (other._shape, other._dtype)

    def __hash__(self):
        return hash((self._shape, self._dtype))

    def __repr__(self):
        return f"SparseTensorSpec({self._shape!r}, tf.{self._dtype.name})"

"""TensorSpec: the shape and dtype a tf.function input must have."""
import numpy as np

from . import dtypes
from .tensor_shape import TensorShape


class TensorSpec:
    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, value):
        if isinstance(value, TensorSpec):
            return self.dtype == value.dtype and self.shape.is_compatible_with(value.shape)
        return self.dtype == value.dtype and self.shape.is_compatible_with(value.shape)

    def dummy_value(self):
        """A placeholder array of this spec: unknown dimensions are 1, an unknown rank is a scalar."""
        shape = () if self.shape.rank is None else tuple(1 if d is None else d for d in self.shape)
        fill = 1 if self.dtype.is_floating or self.dtype.is_complex else b"" if self.dtype.name == "string" else 0
        return np.full(shape, fill, dtype=self.dtype._np)

    def to_json(self):
        return {"shape": self.shape.dims, "dtype": self.dtype.name, "name": self.name}

    @classmethod
    def from_json(cls, data):
        return cls(data["shape"], data["dtype"], data.get("name"))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype
                and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"

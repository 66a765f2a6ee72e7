"""tf.RaggedTensorSpec: the type of a RaggedTensor (shape with None for ragged dimensions, dtype, ragged rank)."""
from ..framework import dtypes
from ..framework.tensor_shape import TensorShape


class RaggedTensorSpec:
    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None, row_splits_dtype=dtypes.int64,
                 flat_values_spec=None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        rank = self.shape.rank
        self.ragged_rank = (rank - 1 if rank is not None else 1) if ragged_rank is None else int(ragged_rank)
        self.row_splits_dtype = dtypes.as_dtype(row_splits_dtype)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype, value.ragged_rank)

    def is_compatible_with(self, other):
        return (isinstance(other, RaggedTensorSpec) or hasattr(other, "ragged_rank")) and \
            self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and (self.shape, self.dtype, self.ragged_rank) == \
            (other.shape, other.dtype, other.ragged_rank)

    def __hash__(self):
        return hash((str(self.shape), self.dtype.name, self.ragged_rank))

    def __repr__(self):
        return (f"RaggedTensorSpec({self.shape!r}, tf.{self.dtype.name}, {self.ragged_rank}, "
                f"tf.{self.row_splits_dtype.name})")

"""tf.sparse: SparseTensor and the ops the TensorFlow guides use on it."""
from .sparse_tensor import SparseTensor, SparseTensorSpec  # noqa: F401
from .sparse_ops import (add, eye, from_dense, map_values, reduce_max, reduce_sum, reorder, retain,  # noqa: F401
                         slice, sparse_dense_matmul, to_dense, transpose)

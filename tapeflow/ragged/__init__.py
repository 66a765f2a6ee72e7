"""tf.ragged: RaggedTensor (flat values + row splits), ragged.constant, map_flat_values."""
from .constant import constant, map_flat_values  # noqa: F401
from .ragged_tensor import RaggedTensor  # noqa: F401

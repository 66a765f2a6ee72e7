"""tf.ragged: RaggedTensor (flat values + row splits), ragged.constant, map_flat_values, range, boolean_mask;
importing it lets the public tf ops accept RaggedTensors (dispatch.py)."""
import tapeflow as _tf
from .. import math as _math
from .constant import boolean_mask, constant, map_flat_values, range  # noqa: F401,A004
from .ragged_tensor import RaggedTensor  # noqa: F401
from .ragged_tensor_spec import RaggedTensorSpec  # noqa: F401
from . import dispatch as _dispatch
from .dispatch import ragged_stack as stack  # noqa: F401

_dispatch.install([_tf, _math])

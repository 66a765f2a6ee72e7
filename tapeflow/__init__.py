"""tapeflow: a Keras-compatible deep-learning framework on numpy and numba,
built around its own gradient tape. ``import tapeflow as tf``."""
from . import ops as _ops  # noqa: F401  (registers every op and operator)
from .framework.allocator import keep_freed_memory as _keep_freed_memory
from .framework import dtypes
from .framework.dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16,  # noqa: F401,A004
                               float32, float64, half, int8, int16, int32, int64, string, uint8, uint16, uint32,
                               uint64)
from .framework.conversion import constant, convert_to_tensor  # noqa: F401
from .framework.registry import NoGradient, NotDifferentiable, RegisterGradient, no_gradient  # noqa: F401
from .framework.tensor import Tensor  # noqa: F401
from .framework.tensor_shape import TensorShape  # noqa: F401
from .framework.tensor_spec import TensorSpec  # noqa: F401
from .framework.variables import Variable  # noqa: F401
from .ops.array_ops import (boolean_mask, broadcast_static_shape, broadcast_to, concat, expand_dims, eye,  # noqa: F401
                            fill, gather, identity, identity_n, linspace, meshgrid, one_hot, ones, ones_like, pad,
                            rank, repeat, reshape, reverse, sequence_mask, shape, shape_n, size, split, squeeze,
                            stack, stop_gradient, strided_slice, tile, transpose, unstack, where, zeros, zeros_like)
from .ops.array_ops import argsort, gather_nd, scatter_nd, sort  # noqa: F401
from .ops.update_ops import (tensor_scatter_nd_add, tensor_scatter_nd_max, tensor_scatter_nd_min,  # noqa: F401
                             tensor_scatter_nd_sub, tensor_scatter_nd_update)
from .ops.array_ops import range_ as range  # noqa: F401,A004
from .ops.nn_ops import sigmoid  # noqa: F401
from .ops.array_ops import slice_ as slice  # noqa: F401,A004
from .ops.math_ops import (abs, add, add_n, cast, clip_by_global_norm, clip_by_norm, clip_by_value, cos,  # noqa: F401
                           divide, einsum, equal, exp, floor, global_norm, greater, greater_equal, less,
                           less_equal, log, logical_and, logical_not, logical_or, matmul, maximum, minimum,
                           multiply, negative, not_equal, pow, realdiv, round, saturate_cast, sign, sin, sqrt,
                           square, subtract, tan, tanh, tensordot, truediv)
from .ops.reduction_ops import (argmax, argmin, norm, reduce_all, reduce_any, reduce_logsumexp,  # noqa: F401
                                reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum)
from .backprop import GradientTape, UnconnectedGradients  # noqa: F401
from .custom_gradient import custom_gradient  # noqa: F401
from .module import Module, name_scope  # noqa: F401
from .function import function  # noqa: F401
from . import autodiff, config, debugging, errors, linalg, math, nest, nn, random  # noqa: F401
from .config.devices import device  # noqa: F401
from .framework.recording import init_scope  # noqa: F401
from .ops.print_ops import print_ as print  # noqa: F401,A004
from .control_flow import TensorArray, case, cond, switch_case, while_loop  # noqa: F401
from .functional_ops import foldl, foldr, map_fn, scan, vectorized_map  # noqa: F401

__version__ = "0.1.0"
_keep_freed_memory()
newaxis = None

_LAZY = {
    "data": ("tapeflow.data", None),
    "distribute": ("tapeflow.distribute", None),
    "image": ("tapeflow.image", None),
    "io": ("tapeflow.io", None),
    "ragged": ("tapeflow.ragged", None),
    "RaggedTensor": ("tapeflow.ragged", "RaggedTensor"),
    "RaggedTensorSpec": ("tapeflow.ragged", "RaggedTensorSpec"),
    "strings": ("tapeflow.strings", None),
    "as_string": ("tapeflow.strings", "as_string"),
    "keras": ("tapeflow.keras", None),
    "layers": ("tapeflow.layers", None),
    "optimizers": ("tapeflow.optimizers", None),
    "saving": ("tapeflow.saving", None),
    "saved_model": ("tapeflow.saving.saved_model", None),
    "train": ("tapeflow.train", None),
    "autograph": ("tapeflow.autograph", None),
    "summary": ("tapeflow.summary", None),
    "initializers": ("tapeflow.keras.initializers", None),
    "zeros_initializer": ("tapeflow.keras.initializers", "Zeros"),
    "ones_initializer": ("tapeflow.keras.initializers", "Ones"),
    "constant_initializer": ("tapeflow.keras.initializers", "Constant"),
    "sparse": ("tapeflow.sparse", None),
    "SparseTensor": ("tapeflow.sparse", "SparseTensor"),
    "SparseTensorSpec": ("tapeflow.sparse", "SparseTensorSpec"),
    "py_function": ("tapeflow.data.py_function", "py_function"),
    "numpy_function": ("tapeflow.data.py_function", "numpy_function"),
}


def executing_eagerly():
    from .framework.recording import tracing_graph
    return tracing_graph() is None


def is_tensor(x):
    return isinstance(x, (Tensor, Variable))


def get_static_value(tensor, partial=False):
    return convert_to_tensor(tensor).numpy()


def __getattr__(name):
    """Heavier subpackages (Keras layers, optimizers, saving) load on first use."""
    if name in _LAZY:
        import importlib
        module_name, attribute = _LAZY[name]
        value = importlib.import_module(module_name)
        if attribute is not None:
            value = getattr(value, attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tapeflow' has no attribute {name!r}")

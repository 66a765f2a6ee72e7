"""Shared helpers of the op modules: argument conversion, batch-aware shapes, quiet numpy errors.

Gradient functions may receive cotangents with extra *leading* axes (a stack of
cotangents, used by the vectorised jacobian). ``batch_ndim`` tells how many.
"""
import numpy as np

from ..framework.conversion import convert_to_tensor
from ..framework.errors import InvalidArgumentError, dtype_word
from ..framework.recording import execute, register_op  # noqa: F401  (re-exported for op modules)
from ..framework.registry import BuiltinGradient as RegisterGradient  # noqa: F401
from ..framework.registry import no_gradient  # noqa: F401
from ..framework.tensor import Tensor
from ..framework.variables import Variable


try:  # numpy >= 2: switch the error state with one context-variable set (np.errstate costs ~1 us)
    from numpy._core.umath import _extobj_contextvar, _make_extobj
    _QUIET = _make_extobj(all="ignore")  # "all": nothing of the caller's state at import is kept

    def quietly(fn, *args):
        """``fn(*args)`` with numpy's floating-point errors ignored: like TensorFlow, ops give
        inf and nan without warnings."""
        token = _extobj_contextvar.set(_QUIET)
        try:
            return fn(*args)
        finally:
            _extobj_contextvar.reset(token)
except Exception:  # pragma: no cover - private numpy API missing (numpy 1.x) or changed
    def quietly(fn, *args):
        """``fn(*args)`` with numpy's floating-point errors ignored."""
        with np.errstate(all="ignore"):
            return fn(*args)


def is_tensor_like(x):
    return isinstance(x, (Tensor, Variable))


def to_tensor(x, dtype=None):
    if type(x) is Tensor and dtype is None:
        return x
    return convert_to_tensor(x, dtype=dtype)


def binary_args(x, y, op_type, broadcast=True):
    """Converts two operands; a non-tensor operand takes the other operand's dtype.

    With ``broadcast`` (elementwise ops) the shapes must broadcast against each other.
    """
    tx, ty = type(x), type(y)
    if tx is Tensor:
        if ty is Tensor:  # fast path: two tensors of one dtype
            xv, yv = x._value, y._value
            if xv.dtype is yv.dtype and (not broadcast or xv.shape == yv.shape):
                return x, y
        elif (ty is float or ty is int) and broadcast and x._value.dtype.kind in "fc":
            return x, Tensor(x._value.dtype.type(y))  # fast path: a Python number takes the tensor's dtype
    elif ty is Tensor and (tx is float or tx is int) and broadcast and y._value.dtype.kind in "fc":
        return Tensor(y._value.dtype.type(x)), y
    if type(x) is not Tensor or type(y) is not Tensor:
        if is_tensor_like(x):
            x = to_tensor(x)
            y = to_tensor(y) if is_tensor_like(y) else convert_to_tensor(y, dtype=x.dtype)
        elif is_tensor_like(y):
            y = to_tensor(y)
            x = convert_to_tensor(x, dtype=y.dtype)
        else:
            x = convert_to_tensor(x)
            y = convert_to_tensor(y, dtype=x.dtype)
    if x._value.dtype != y._value.dtype:
        raise InvalidArgumentError(
            f"cannot compute {op_type} as input #1(zero-based) was expected to be a {dtype_word(x.dtype)} "
            f"tensor but is a {dtype_word(y.dtype)} tensor [Op:{op_type}]")
    if broadcast:
        sx, sy = x._value.shape, y._value.shape
        if sx != sy and not _broadcastable(sx, sy):
            raise InvalidArgumentError(f"Incompatible shapes: {list(sx)} vs. {list(sy)} [Op:{op_type}]")
    return x, y


def _broadcastable(sx, sy):
    for a, b in zip(reversed(sx), reversed(sy)):
        if a != b and a != 1 and b != 1:
            return False
    return True


def batch_ndim(op, grad, index=0):
    """Number of leading stacked-cotangent axes of ``grad`` for output ``index`` of ``op``."""
    return grad._value.ndim - op.outputs[index]._value.ndim


def static_shape(t):
    return t._value.shape


def normalize_axis(axis, ndim, what="axis", op=None):
    """``axis`` in [-ndim, ndim) as a non-negative int."""
    if axis < -ndim or axis >= ndim:
        prefix = f"{op}: " if op else ""
        valid = f"valid axes are {-ndim} to {ndim - 1}" if ndim else "a scalar has no axes"
        raise InvalidArgumentError(f"{prefix}{what} {axis} is out of bounds for a tensor of rank {ndim} "
                                   f"({valid})")
    return axis + ndim if axis < 0 else axis


def axes_tuple(axis, ndim, op=None):
    """A sorted tuple of non-negative axes; None means all axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tensor):
        axis = axis._value.tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(sorted({normalize_axis(int(a), ndim, op=op) for a in axis}))
    return (normalize_axis(int(axis), ndim, op=op),)


def int_list(value):
    """A shape-like argument (list, tuple, TensorShape, Tensor, int) as a tuple of ints."""
    if (type(value) is tuple or type(value) is list) and all(type(d) is int for d in value):
        return tuple(value)  # the common case, checked first
    if is_tensor_like(value):
        value = to_tensor(value)._value.tolist()
    if hasattr(value, "as_list"):
        value = value.as_list()
    if isinstance(value, (int,)) or (hasattr(value, "__index__") and not isinstance(value, (list, tuple))):
        return (int(value),)
    return tuple(-1 if d is None else int(d) for d in value)

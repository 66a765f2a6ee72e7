"""The ops every op family's forwards and gradients are written with: reshape, broadcast_to and its
inverse sum_to (on reduce_sum), where, stack and unstack.

They sit below math_ops, array_ops and reduction_ops, which re-export them under their usual names, so the
op modules import downwards only: core_ops <- math_ops <- array_ops <- reduction_ops.
"""
import numpy as np

from ..framework.batching import axis_attr_not_0, declare, elementwise, reduction, register_batching_rule
from ..framework.conversion import convert_to_tensor
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from .common import (RegisterGradient, axes_tuple, batch_ndim, binary_args, execute, int_list, is_tensor_like,
                     no_gradient, normalize_axis, register_op, to_tensor)


# ---------------------------------------------------------------- reshape ---
@register_op("Reshape")
def _reshape_fwd(x, shape):
    try:
        return x.reshape(shape)
    except ValueError:
        raise InvalidArgumentError(_reshape_error(np.size(x), shape)) from None


def _reshape_error(size, shape):
    """TensorFlow's words for a reshape that cannot be done."""
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        return f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]} [Op:Reshape]"
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown:
        return (f"Input to reshape is a tensor with {size} values, but the requested shape requires a multiple "
                f"of {known} [Op:Reshape]")
    return f"Input to reshape is a tensor with {size} values, but the requested shape has {known} [Op:Reshape]"


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    nb = batch_ndim(op, grad)
    return reshape(grad, grad._value.shape[:nb] + op.inputs[0]._value.shape)


def reshape(tensor, shape, name=None):
    return execute("Reshape", (to_tensor(tensor),), {"shape": int_list(shape)})


@register_batching_rule("Reshape")
def _reshape_rows(op, batched):
    """A C-order reshape that keeps the leading dimension keeps each row's elements in its row."""
    return op.outputs[0]._value.shape[:1] == op.inputs[0]._value.shape[:1]


# ------------------------------------------------------------ broadcast_to ---
declare(elementwise, "BroadcastTo")


@register_op("BroadcastTo")
def _broadcast_to_fwd(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise InvalidArgumentError(
            f"broadcast_to: cannot broadcast shape {TensorShape(np.shape(x))} to {TensorShape(shape)}") from None


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return sum_to(grad, op.inputs[0]._value.shape, batch_ndim(op, grad))


def broadcast_to(input, shape, name=None):
    x = to_tensor(input)
    shape = int_list(shape)
    if x._value.shape == shape:
        return x
    return execute("BroadcastTo", (x,), {"shape": shape})


# ------------------------------------------- reduce_sum and sum_to (its inverse) ---
declare(reduction, "Sum")


def sum_to(grad, shape, nb=0):
    """Sums ``grad`` (with ``nb`` leading stacked axes) down to ``shape``: undoes broadcasting."""
    gshape = grad._value.shape
    core = gshape[nb:]
    shape = tuple(shape)
    if core == shape:
        return grad
    lead = len(core) - len(shape)
    axes = list(range(nb, nb + lead))
    axes += [nb + lead + i for i, d in enumerate(shape) if d == 1 and core[lead + i] != 1]
    reduced = reduce_sum(grad, axes) if axes else grad
    return reshape(reduced, gshape[:nb] + shape)


def kept_shape(x_shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(x_shape))


def broadcast_back(op, grad):
    """Reshapes a reduction's (possibly stacked) gradient to keepdims form and broadcasts it to the input."""
    nb = batch_ndim(op, grad)
    x_shape = op.inputs[0]._value.shape
    lead = grad._value.shape[:nb]
    g = reshape(grad, lead + kept_shape(x_shape, op.attrs["axes"]))
    return broadcast_to(g, lead + x_shape), nb


_PUBLIC_NAMES = {"Sum": "reduce_sum", "Mean": "reduce_mean", "Max": "reduce_max", "Min": "reduce_min",
                 "Prod": "reduce_prod"}


def reduce_along(op_type, x, axis, keepdims):
    if type(x) is not Tensor and hasattr(x, "_reduce_composite"):     # a RaggedTensor (tapeflow.ragged)
        return x._reduce_composite(op_type, axis, keepdims)
    x = to_tensor(x)
    axes = axes_tuple(axis, x._value.ndim, op=_PUBLIC_NAMES[op_type])
    return execute(op_type, (x,), {"axes": axes, "keepdims": bool(keepdims)})


def same_int_dtype(x):
    """numpy widens int32 sums and products to int64; TensorFlow keeps the input's dtype."""
    return x.dtype if x.dtype.kind in "iu" else None


@register_op("Sum")
def _sum_fwd(x, axes, keepdims):
    return np.add.reduce(x, axis=axes, dtype=same_int_dtype(x), keepdims=keepdims)  # np.sum without its wrappers


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return broadcast_back(op, grad)[0]


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_along("Sum", input_tensor, axis, keepdims)


# ----------------------------------------------------------------- select ---
declare(elementwise, "SelectV2")


@register_op("SelectV2")
def _select_fwd(condition, x, y):
    return np.where(condition, x, y)


@RegisterGradient("SelectV2")
def _select_grad(op, grad):
    nb = batch_ndim(op, grad)
    cond, x, y = op.inputs
    zeros = Tensor(np.zeros((), grad._value.dtype))
    gx = sum_to(where(cond, grad, zeros), x._value.shape, nb)
    gy = sum_to(where(cond, zeros, grad), y._value.shape, nb)
    return None, gx, gy


@register_op("Where")
def _where_indices_fwd(condition):
    return np.argwhere(condition).astype(np.int64)


no_gradient("Where")


def where(condition, x=None, y=None, name=None):
    cond = to_tensor(condition)
    if x is None and y is None:
        return execute("Where", (cond,))
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or both be None")
    x, y = binary_args(x, y, "SelectV2")
    if cond._value.dtype != np.bool_:
        raise InvalidArgumentError(f"where: condition must be bool, got {cond.dtype.name}")
    try:
        np.broadcast_shapes(cond._value.shape, x._value.shape, y._value.shape)
    except ValueError:
        raise InvalidArgumentError(f"where: condition of shape {cond.shape}, x of shape {x.shape} and y of shape "
                                   f"{y.shape} cannot be broadcast together [Op:SelectV2]") from None
    return execute("SelectV2", (cond, x, y))


# ----------------------------------------------------------- stack / unstack ---
declare(axis_attr_not_0("axis"), "Unpack")


@register_op("Pack")
def _pack_fwd(*xs, axis):
    return np.stack(xs, axis=axis)


@register_batching_rule("Pack")
def _pack_rows(op, batched):
    return op.attrs["axis"] % op.outputs[0]._value.ndim != 0


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=len(op.inputs), axis=op.attrs["axis"] + batch_ndim(op, grad))


def same_dtype_tensors(values):
    """Converts a list of values; Python/numpy values adopt the dtype of the first tensor among them."""
    dtype = next((to_tensor(v).dtype for v in values if is_tensor_like(v)), None)
    return [to_tensor(v) if is_tensor_like(v) or dtype is None else convert_to_tensor(v, dtype=dtype)
            for v in values]


def stack(values, axis=0, name="stack"):
    values = same_dtype_tensors(values)
    if not values:
        raise InvalidArgumentError("stack needs at least one tensor")
    s0 = values[0]._value.shape
    d0 = values[0]._value.dtype
    for i, v in enumerate(values):
        if v._value.shape != s0:
            raise InvalidArgumentError(f"stack: shapes of all inputs must match: values[0].shape = "
                                       f"{TensorShape(s0)} != values[{i}].shape = {v.shape}")
        if v._value.dtype != d0:
            raise InvalidArgumentError(f"stack: values[{i}] has dtype {v.dtype.name}, values[0] has "
                                       f"{values[0].dtype.name}")
    axis = normalize_axis(int(axis), len(s0) + 1, op="stack")
    return execute("Pack", tuple(values), {"axis": axis})


@register_op("Unpack", num_outputs=-1)
def _unpack_fwd(x, axis):
    return tuple(np.take(x, i, axis=axis) for i in range(x.shape[axis]))


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    nb = batch_ndim(op, grads[0])
    return stack(list(grads), axis=op.attrs["axis"] + nb)


def unstack(value, num=None, axis=0, name="unstack"):
    x = to_tensor(value)
    axis = normalize_axis(int(axis), x._value.ndim, op="unstack")
    if num is not None and num != x._value.shape[axis]:
        raise InvalidArgumentError(f"unstack: num={num} but axis {axis} has size {x._value.shape[axis]}")
    return list(execute("Unpack", (x,), {"axis": axis}))

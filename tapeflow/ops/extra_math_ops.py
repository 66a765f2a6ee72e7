"""Math ops NumPy and Keras have beyond tf.math's core: atan2, inverse hyperbolics, erfinv, cumprod, and the
bitwise ops.

Each is an op with its gradient written in ops (so derivatives of any order
work; the bitwise ops have none) and a batching rule.
"""
import numpy as np

from ..framework.batching import axis_attr_not_0, declare, elementwise
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from . import array_ops, reduction_ops
from .common import (RegisterGradient, batch_ndim, binary_args, execute, no_gradient, normalize_axis, quietly,
                     register_op, to_tensor)
from .math_ops import (_check_float, _unary, add, divide, exp, multiply, negative, reciprocal, rsqrt, square,
                       subtract)

sum_to = reduction_ops.sum_to

asinh = _unary("Asinh", np.arcsinh, lambda x, y: rsqrt(add(square(x), 1)), "asinh")
acosh = _unary("Acosh", np.arccosh, lambda x, y: rsqrt(subtract(square(x), 1)), "acosh")
atanh = _unary("Atanh", np.arctanh, lambda x, y: reciprocal(subtract(1, square(x))), "atanh")


# ------------------------------------------------------------------ atan2 ---
@register_op("Atan2")
def _atan2_fwd(y, x):
    return quietly(np.arctan2, y, x)


@RegisterGradient("Atan2")
def _atan2_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, x = op.inputs
    scale = divide(grad, add(square(x), square(y)))       # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    return sum_to(multiply(scale, x), y._value.shape, nb), sum_to(multiply(scale, negative(y)), x._value.shape, nb)


def atan2(y, x, name=None):
    y, x = binary_args(y, x, "Atan2")
    _check_float(y, "atan2", "Atan2")
    return execute("Atan2", (y, x))


# ----------------------------------------------------------------- erfinv ---
@register_op("Erfinv")
def _erfinv_fwd(x):
    """Giles's single-precision approximation, refined by Newton steps on erf in float64."""
    from ..kernels import activations
    z = np.asarray(x, np.float64)
    w = -quietly(np.log, (1.0 - z) * (1.0 + z))
    central = w < 5.0
    wc = np.where(central, w - 2.5, np.sqrt(np.where(central, 5.0, w)) - 3.0)
    coefficients = (np.where(central, c, t) for c, t in zip(
        (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
         -0.00417768164, 0.246640727, 1.50140941),
        (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
         0.00943887047, 1.00167406, 2.83297682)))
    p = next(coefficients)
    for c in coefficients:
        p = p * wc + c
    y = p * z
    inside = np.abs(z) < 1
    y = np.where(inside, y, 0.0)
    for _ in range(3):
        err = activations.apply(activations.erf, y) - z
        y = y - quietly(np.divide, err, 1.1283791670955126 * np.exp(-y * y))
    y = np.where(inside, y, np.where(np.abs(z) == 1, np.copysign(np.inf, z), np.nan))
    return y.astype(x.dtype)


@RegisterGradient("Erfinv")
def _erfinv_grad(op, grad):
    # d erfinv(x) / dx = sqrt(pi) / 2 * exp(erfinv(x)^2)
    return multiply(grad, multiply(exp(square(op.outputs[0])), 0.886226925452758))


def erfinv(x, name=None):
    return execute("Erfinv", (_check_float(to_tensor(x), "erfinv", "Erfinv"),))


declare(elementwise, "Atan2", "Erfinv")


# ---------------------------------------------------------------- cumprod ---
@register_op("Cumprod")
def _cumprod_fwd(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype if x.dtype.kind in "iu" else None)


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    axis = op.attrs["axis"] - x._value.ndim          # negative: the same axis of a stacked gradient
    if np.all(x._value != 0):
        # sum_{j >= k} g_j y_j / x_k: exact when no element is zero.
        return divide(reduction_ops.cumsum(multiply(grad, y), axis, reverse=True), x)
    return _cumprod_grad_with_zeros(x, grad, axis)


def _cumprod_grad_with_zeros(x, grad, axis):
    """d/dx_k = prod_{i<k} x_i * sum_{j>=k} g_j prod_{k<i<=j} x_i, with no division (zeros allowed)."""
    n = x._value.shape[axis]
    xm, gm = _axis_last(x, axis), _axis_last(grad, axis)
    ones = Tensor(np.ones((), x._value.dtype))
    after_k = Tensor(np.triu(np.ones((n, n), bool), 1))           # [k, j]: j > k
    from_k = Tensor(np.triu(np.ones((n, n), bool)))               # [k, j]: j >= k
    partial = cumprod(array_ops.where(after_k, array_ops.expand_dims(xm, -2), ones), -1)   # prod_{k<i<=j} x_i
    weighted = array_ops.where(from_k, multiply(partial, array_ops.expand_dims(gm, -2)), multiply(ones, 0))
    tail = reduction_ops.reduce_sum(weighted, -1)
    shifted = array_ops.concat([array_ops.ones_like(xm[..., :1]), xm[..., :-1]], -1)
    head = cumprod(shifted, -1)                                    # prod_{i<k} x_i
    return _axis_back(multiply(head, tail), axis)


def _axis_last(t, axis):
    nd = t._value.ndim
    perm = [a for a in range(nd) if a != nd + axis] + [nd + axis]
    return array_ops.transpose(t, perm)


def _axis_back(t, axis):
    nd = t._value.ndim
    perm = list(range(nd - 1))
    perm.insert(nd + axis, nd - 1)
    return array_ops.transpose(t, perm)


def cumprod(x, axis=0, name=None):
    x = to_tensor(x)
    if x._value.ndim == 0:
        raise InvalidArgumentError("cumprod: input must have rank >= 1, got a scalar")
    return execute("Cumprod", (x,), {"axis": normalize_axis(int(axis), x._value.ndim, op="cumprod")})


declare(axis_attr_not_0("axis"), "Cumprod")


# ---------------------------------------------------------------- bitwise ---
def _bitwise(op_type, np_fn, arity, public_name):
    register_op(op_type)(np_fn)
    declare(elementwise, op_type)
    no_gradient(op_type)

    def check(x):
        if x._value.dtype.kind not in "iub":
            raise InvalidArgumentError(f"{op_type}: expected integer or bool tensors, got {x.dtype.name} "
                                       f"[Op:{op_type}]")
        return x

    if arity == 1:
        def public(x, name=None):
            return execute(op_type, (check(to_tensor(x)),))
    else:
        def public(x, y, name=None):
            x, y = binary_args(x, y, op_type)
            return execute(op_type, (check(x), check(y)))
    public.__name__ = public.__qualname__ = public_name
    return public


bitwise_and = _bitwise("BitwiseAnd", np.bitwise_and, 2, "bitwise_and")
bitwise_or = _bitwise("BitwiseOr", np.bitwise_or, 2, "bitwise_or")
bitwise_xor = _bitwise("BitwiseXor", np.bitwise_xor, 2, "bitwise_xor")
invert = _bitwise("Invert", np.invert, 1, "invert")
left_shift = _bitwise("LeftShift", np.left_shift, 2, "left_shift")
right_shift = _bitwise("RightShift", np.right_shift, 2, "right_shift")

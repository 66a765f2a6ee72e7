"""Math ops: arithmetic, elementwise functions, matmul/einsum, casts, comparisons.

Gradients are written with these same ops, so a gradient computed under an
outer tape is itself recorded (higher-order derivatives need no special case).
"""
import functools
import operator

import numpy as np

from ..framework import dtypes
from ..framework.batching import declare, elementwise, register_batching_rule
from ..framework.errors import InvalidArgumentError, UnimplementedError
from ..framework.tensor import Tensor
from ..framework.recording import with_inlined_execute
from ..framework.tensor_shape import TensorShape
from ..framework.variables import Variable
from .common import (RegisterGradient, batch_ndim, binary_args, execute, is_tensor_like, no_gradient,
                     normalize_axis, quietly, register_op, to_tensor)
from .core_ops import reduce_sum, reshape, stack, sum_to, where
from . import string_ops  # noqa: F401  (registers StringJoin, which string `+` runs)


# -------------------------------------------------------------- arithmetic ---
register_op("AddV2")(operator.add)  # a C function: no Python frame per call


@RegisterGradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    shape = grad._value.shape
    if x._value.shape == shape and y._value.shape == shape:   # fast path: no broadcasting, no stacking
        return grad, grad
    nb = batch_ndim(op, grad)
    skip = op.skip_input_indices  # e.g. a constant bias: its broadcast sum is not needed
    return (None if 0 in skip else sum_to(grad, x._value.shape, nb),
            None if 1 in skip else sum_to(grad, y._value.shape, nb))


@functools.partial(with_inlined_execute, "AddV2")
def add(x, y, name=None):
    x, y = binary_args(x, y, "AddV2")
    if x._value.dtype == object:   # strings concatenate, elementwise with broadcasting
        return execute("StringJoin", (x, y), {"separator": ""})
    return execute("AddV2", (x, y))


register_op("Sub")(operator.sub)  # a C function: no Python frame per call


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    skip = op.skip_input_indices
    return (None if 0 in skip else sum_to(grad, x._value.shape, nb),
            None if 1 in skip else sum_to(negative(grad), y._value.shape, nb))


@functools.partial(with_inlined_execute, "Sub")
def subtract(x, y, name=None):
    x, y = binary_args(x, y, "Sub")
    return execute("Sub", (x, y))


register_op("Mul")(operator.mul)  # a C function: no Python frame per call


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    skip = op.skip_input_indices
    xv, yv, gv = x._value, y._value, grad._value
    if xv.shape == gv.shape and yv.shape == gv.shape and xv.dtype == gv.dtype and yv.dtype == gv.dtype \
            and gv.dtype.kind == "f":
        # Fast path (same shapes, real floats): no conj, no broadcasting to undo.
        return (None if 0 in skip else execute("Mul", (grad, y)),
                None if 1 in skip else execute("Mul", (x, grad)))
    nb = batch_ndim(op, grad)
    gx = None if 0 in skip else sum_to(multiply(grad, conj(y)), x._value.shape, nb)
    gy = None if 1 in skip else sum_to(multiply(conj(x), grad), y._value.shape, nb)
    return gx, gy


@functools.partial(with_inlined_execute, "Mul")
def multiply(x, y, name=None):
    x, y = binary_args(x, y, "Mul")
    return execute("Mul", (x, y))


@register_op("RealDiv")
def _div_fwd(x, y):
    if x.dtype.kind in "iu":
        return quietly(np.floor_divide, x, y)
    return quietly(operator.truediv, x, y)


@RegisterGradient("RealDiv")
def _div_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    gx = sum_to(divide(grad, conj(y)), x._value.shape, nb)
    gy = sum_to(multiply(grad, conj(divide(divide(negative(x), y), y))), y._value.shape, nb)
    return gx, gy


def divide(x, y, name=None):
    """x / y. Integer tensors are converted to floats first (Python 3 semantics), as tf.math.divide."""
    x, y = binary_args(x, y, "RealDiv")
    if x._value.dtype.kind in "iu":
        target = dtypes.float64 if x._value.dtype.itemsize > 2 else dtypes.float32
        x, y = cast(x, target), cast(y, target)
    return execute("RealDiv", (x, y))


truediv = divide


def realdiv(x, y, name=None):
    x, y = binary_args(x, y, "RealDiv")
    return execute("RealDiv", (x, y))


@register_op("DivNoNan")
def _div_no_nan_fwd(x, y):
    nonzero = y != 0
    out = np.zeros(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y))
    return quietly(lambda: np.divide(x, y, out=out, where=nonzero))


declare(elementwise, "DivNoNan")


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    """0 wherever y is 0, as the forward; written with div_no_nan itself, so every order works."""
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    gx = sum_to(div_no_nan(grad, y), x._value.shape, nb)
    gy = sum_to(multiply(grad, div_no_nan(div_no_nan(negative(x), y), y)), y._value.shape, nb)
    return gx, gy


def div_no_nan(x, y, name=None):
    """x / y, and 0 wherever y is 0 (whatever x is), as tf.math.divide_no_nan."""
    x, y = binary_args(x, y, "DivNoNan")
    if x._value.dtype.kind in "iu":
        target = dtypes.float64 if x._value.dtype.itemsize > 2 else dtypes.float32
        x, y = cast(x, target), cast(y, target)
    return execute("DivNoNan", (x, y))


@register_op("FloorDiv")
def _floordiv_fwd(x, y):
    return quietly(np.floor_divide, x, y)


no_gradient("FloorDiv")


def floordiv(x, y, name=None):
    x, y = binary_args(x, y, "FloorDiv")
    if x._value.dtype.kind in "iu" and np.any(y._value == 0):
        raise InvalidArgumentError("Integer division by zero [Op:FloorDiv]")
    return execute("FloorDiv", (x, y))


@register_op("FloorMod")
def _floormod_fwd(x, y):
    return quietly(np.mod, x, y)


@RegisterGradient("FloorMod")
def _floormod_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    gy = multiply(grad, negative(floor(divide(x, y)))) if x._value.dtype.kind in "fc" else None
    return sum_to(grad, x._value.shape, nb), None if gy is None else sum_to(gy, y._value.shape, nb)


def floormod(x, y, name=None):
    x, y = binary_args(x, y, "FloorMod")
    if x._value.dtype.kind in "iu" and np.any(y._value == 0):
        raise InvalidArgumentError("Integer division by zero [Op:FloorMod]")
    return execute("FloorMod", (x, y))


mod = floormod


@register_op("Pow")
def _pow_fwd(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise InvalidArgumentError("Integers to negative integer powers are not allowed [Op:Pow]")
    return quietly(np.power, x, y)


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    z = op.outputs[0]
    gx = sum_to(multiply(grad, multiply(y, pow(x, subtract(y, 1)))), x._value.shape, nb)
    if 1 in op.skip_input_indices:
        return gx, None
    if x._value.dtype.kind == "c":
        log_x = log(x)
    else:
        positive = greater(x, 0)
        log_x = where(positive, log(where(positive, x, ones_like_(x))), zeros_like_(x))
    gy = sum_to(multiply(grad, multiply(z, log_x)), y._value.shape, nb)
    return gx, gy


def pow(x, y, name=None):  # noqa: A001 - TensorFlow's public name
    x, y = binary_args(x, y, "Pow")
    return execute("Pow", (x, y))


@register_op("SquaredDifference")
def _squared_difference_fwd(x, y):
    d = x - y
    return d * d


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    two_diff = multiply(subtract(x, y), 2)
    g = multiply(grad, two_diff)
    return sum_to(g, x._value.shape, nb), sum_to(negative(g), y._value.shape, nb)


def squared_difference(x, y, name=None):
    x, y = binary_args(x, y, "SquaredDifference")
    return execute("SquaredDifference", (x, y))


@register_op("Maximum")
def _maximum_fwd(x, y):
    return np.maximum(x, y)


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    return _select_by_mask(op, grad, greater_equal(op.inputs[0], op.inputs[1]))


@register_op("Minimum")
def _minimum_fwd(x, y):
    return np.minimum(x, y)


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    return _select_by_mask(op, grad, less_equal(op.inputs[0], op.inputs[1]))


def _select_by_mask(op, grad, x_mask):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    zeros = Tensor(np.zeros((), grad._value.dtype))
    gx = sum_to(where(x_mask, grad, zeros), x._value.shape, nb)
    gy = sum_to(where(x_mask, zeros, grad), y._value.shape, nb)
    return gx, gy


def maximum(x, y, name=None):
    x, y = binary_args(x, y, "Maximum")
    return execute("Maximum", (x, y))


def minimum(x, y, name=None):
    x, y = binary_args(x, y, "Minimum")
    return execute("Minimum", (x, y))


@register_op("AddN")
def _add_n_fwd(*xs):
    out = xs[0] + xs[1]
    for x in xs[2:]:
        out += x
    return out


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    nb = batch_ndim(op, grad)
    return [sum_to(grad, x._value.shape, nb) for x in op.inputs]


def add_n(inputs, name=None):
    inputs = [to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("add_n needs at least one tensor")
    if len(inputs) == 1:
        return inputs[0]
    return execute("AddN", tuple(inputs))


# -------------------------------------------------------- unary elementwise ---
def _check_float(x, public_name, op_type):
    """Transcendental ops are defined on floating-point and complex tensors only, as in TensorFlow."""
    if x._value.dtype.kind not in "fc":
        raise InvalidArgumentError(f"{public_name}: expected a floating-point or complex tensor, got {x.dtype.name} "
                                   f"(cast it first, e.g. tf.cast(x, tf.float32)) [Op:{op_type}]")
    return x


def _unary(op_type, np_fn, grad_fn, public_name, floats_only=True):
    """Defines a unary elementwise op whose gradient is ``grad * conj(grad_fn(x, y))``."""
    def forward(x):
        return quietly(np_fn, x)
    register_op(op_type)(forward)
    declare(elementwise, op_type)

    def gradient(op, grad):
        return multiply(grad, conj(grad_fn(op.inputs[0], op.outputs[0])))
    RegisterGradient(op_type)(gradient)

    if floats_only:
        def public(x, name=None):
            return execute(op_type, (_check_float(to_tensor(x), public_name, op_type),))
    else:
        def public(x, name=None):
            return execute(op_type, (to_tensor(x),))
    public.__name__ = public_name
    return public


negative = _unary("Neg", np.negative, lambda x, y: Tensor(np.array(-1, x._value.dtype)), "negative", False)
exp = _unary("Exp", np.exp, lambda x, y: y, "exp")
log = _unary("Log", np.log, lambda x, y: reciprocal(x), "log")
log1p = _unary("Log1p", np.log1p, lambda x, y: reciprocal(add(x, 1)), "log1p")
expm1 = _unary("Expm1", np.expm1, lambda x, y: add(y, 1), "expm1")
sin = _unary("Sin", np.sin, lambda x, y: cos(x), "sin")
cos = _unary("Cos", np.cos, lambda x, y: negative(sin(x)), "cos")
tan = _unary("Tan", np.tan, lambda x, y: add(square(y), 1), "tan")
asin = _unary("Asin", np.arcsin, lambda x, y: rsqrt(subtract(1, square(x))), "asin")
acos = _unary("Acos", np.arccos, lambda x, y: negative(rsqrt(subtract(1, square(x)))), "acos")
atan = _unary("Atan", np.arctan, lambda x, y: reciprocal(add(square(x), 1)), "atan")
sinh = _unary("Sinh", np.sinh, lambda x, y: cosh(x), "sinh")
cosh = _unary("Cosh", np.cosh, lambda x, y: sinh(x), "cosh")
square = _unary("Square", np.square, lambda x, y: multiply(x, 2), "square", False)
abs = _unary("Abs", np.abs, lambda x, y: sign(x), "abs", False)  # noqa: A001 - TensorFlow's public name
erf = _unary("Erf", lambda x: _erf(x), lambda x, y: multiply(exp(negative(square(x))), 2 / np.sqrt(np.pi)), "erf")


def _erf(x):
    from ..kernels import activations
    return activations.apply(activations.erf, x)


# Fused gradient ops ``XGrad(y, g)`` take the forward output ``y`` and the
# upstream gradient ``g``. When ``g`` carries stacked cotangent axes (a jacobian
# recorded by an outer tape) the output is broadcast against ``y``, so their own
# gradients are summed back to each input's shape.
def _to_shape_of(g, x, nb):
    return sum_to(g, x._value.shape, nb)


@register_op("Sqrt")
def _sqrt_fwd(x):
    return quietly(np.sqrt, x)


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    return execute("SqrtGrad", (op.outputs[0], grad))


@register_op("SqrtGrad")
def _sqrt_grad_fwd(y, g):
    # 0 where the upstream gradient is 0, even at y == 0 (TensorFlow's convention).
    return np.where(g == 0, np.zeros((), y.dtype), quietly(lambda: g * 0.5 / y))


@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, g = op.inputs
    ga = divide(multiply(grad, conj(op.outputs[0])), negative(conj(y)))
    gb = multiply(divide(grad, conj(y)), 0.5)
    return _to_shape_of(ga, y, nb), _to_shape_of(gb, g, nb)


def sqrt(x, name=None):
    return execute("Sqrt", (_check_float(to_tensor(x), "sqrt", "Sqrt"),))


@register_op("Rsqrt")
def _rsqrt_fwd(x):
    return quietly(lambda: 1 / np.sqrt(x))


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    return execute("RsqrtGrad", (op.outputs[0], grad))


@register_op("RsqrtGrad")
def _rsqrt_grad_fwd(y, g):
    return quietly(lambda: g * (-0.5) * y * y * y)


@RegisterGradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, g = op.inputs
    ga = multiply(multiply(multiply(grad, -1.5), conj(g)), conj(square(y)))
    gb = execute("RsqrtGrad", (y, grad))
    return _to_shape_of(ga, y, nb), _to_shape_of(gb, g, nb)


def rsqrt(x, name=None):
    return execute("Rsqrt", (_check_float(to_tensor(x), "rsqrt", "Rsqrt"),))


@register_op("Reciprocal")
def _reciprocal_fwd(x):
    if x.dtype.kind in "iu":
        # Integer reciprocal truncates toward zero (1/x is 0 unless |x| == 1), as in TensorFlow.
        return quietly(operator.truediv, 1, x).astype(x.dtype)
    return quietly(operator.truediv, 1, x)


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    return execute("ReciprocalGrad", (op.outputs[0], grad))


@register_op("ReciprocalGrad")
def _reciprocal_grad_fwd(y, g):
    return -g * y * y


@RegisterGradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, g = op.inputs
    ga = multiply(multiply(grad, -2.0), conj(multiply(g, y)))
    gb = execute("ReciprocalGrad", (y, grad))
    return _to_shape_of(ga, y, nb), _to_shape_of(gb, g, nb)


def reciprocal(x, name=None):
    x = to_tensor(x)
    if x._value.dtype.kind in "iu" and np.any(x._value == 0):
        raise InvalidArgumentError("reciprocal: integer division by zero [Op:Reciprocal]")
    return execute("Reciprocal", (x,))


@register_op("Tanh")
def _tanh_fwd(x):
    from ..kernels import activations
    if x.dtype.kind != "f":
        return np.tanh(x)
    return activations.apply(activations.tanh, x)


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    return execute("TanhGrad", (op.outputs[0], grad))


@register_op("TanhGrad")
def _tanh_grad_fwd(y, g):
    from ..kernels import activations
    if y.dtype.kind != "f":
        return g * (1 - y * y)
    return activations.apply(activations.tanh_grad, y, g)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, g = op.inputs
    ga = multiply(multiply(grad, -2.0), conj(multiply(g, y)))
    gb = execute("TanhGrad", (y, grad))
    return _to_shape_of(ga, y, nb), _to_shape_of(gb, g, nb)


def tanh(x, name=None):
    return execute("Tanh", (_check_float(to_tensor(x), "tanh", "Tanh"),))


@register_op("Sign")
def _sign_fwd(x):
    return np.sign(x)


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    return zeros_like_(grad)


def sign(x, name=None):
    return execute("Sign", (to_tensor(x),))


def _piecewise_constant(op_type, np_fn):
    register_op(op_type)(np_fn)
    no_gradient(op_type)
    declare(elementwise, op_type)

    def public(x, name=None):
        x = to_tensor(x)
        if x._value.dtype.kind in "iub":
            return x
        return execute(op_type, (x,))
    public.__name__ = op_type.lower()
    return public


floor = _piecewise_constant("Floor", np.floor)
ceil = _piecewise_constant("Ceil", np.ceil)
round = _piecewise_constant("Round", np.round)  # noqa: A001 - banker's rounding, as tf.math.round
rint = _piecewise_constant("Rint", np.rint)


# ---------------------------------------------------------------- complex ---
@register_op("Conj")
def _conj_fwd(x):
    return np.conj(x)


@RegisterGradient("Conj")
def _conj_grad(op, grad):
    return conj(grad)


def conj(x, name=None):
    x = to_tensor(x)
    if x._value.dtype.kind != "c":
        return x
    return execute("Conj", (x,))


@register_op("Real")
def _real_fwd(x):
    return np.real(x).copy()


@RegisterGradient("Real")
def _real_grad(op, grad):
    return complex_(grad, zeros_like_(grad))


@register_op("Imag")
def _imag_fwd(x):
    return np.imag(x).copy()


@RegisterGradient("Imag")
def _imag_grad(op, grad):
    return complex_(zeros_like_(grad), negative(grad))


@register_op("Complex")
def _complex_fwd(re, im):
    return re + 1j * im if re.dtype == np.float64 else (re + 1j * im).astype(np.complex64)


@RegisterGradient("Complex")
def _complex_grad(op, grad):
    nb = batch_ndim(op, grad)
    x, y = op.inputs
    return sum_to(real(grad), x._value.shape, nb), sum_to(imag(grad), y._value.shape, nb)


def real(x, name=None):
    x = to_tensor(x)
    return execute("Real", (x,)) if x._value.dtype.kind == "c" else x


def imag(x, name=None):
    x = to_tensor(x)
    return execute("Imag", (x,)) if x._value.dtype.kind == "c" else zeros_like_(x)


def complex_(real, imag, name=None):
    real, imag = binary_args(real, imag, "Complex")
    return execute("Complex", (real, imag))


# ------------------------------------------------------------------- cast ---
@register_op("Cast")
def _cast_fwd(x, DstT):
    return x.astype(dtypes.as_dtype(DstT)._np)


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0]._value.dtype
    if src.kind not in "fc" or grad._value.dtype.kind not in "fc":
        return None
    if src.kind == "f" and grad._value.dtype.kind == "c":
        grad = real(grad)
    return cast(grad, dtypes.from_numpy(src))


def cast(x, dtype, name=None):
    x = to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x._value.dtype == dtype._np:
        return x
    if x.dtype == dtypes.string or dtype == dtypes.string:   # tf.strings.to_number / as_string convert
        raise UnimplementedError(f"Cast {x.dtype.name} to {dtype.name} is not supported [Op:Cast]")
    return execute("Cast", (x,), {"DstT": dtype.name})


def saturate_cast(value, dtype, name=None):
    x = to_tensor(value)
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        x = clip_by_value(x, dtype.min, dtype.max) if x._value.dtype.kind == "f" else x
    return cast(x, dtype)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32)


# ------------------------------------------------------------- comparisons ---
def _comparison(op_type, np_fn):
    register_op(op_type)(np_fn)
    no_gradient(op_type)

    def public(x, y, name=None):
        x, y = binary_args(x, y, op_type)
        return execute(op_type, (x, y))
    public.__name__ = op_type.lower()
    return public


equal = _comparison("Equal", np.equal)
not_equal = _comparison("NotEqual", np.not_equal)
less = _comparison("Less", np.less)
less_equal = _comparison("LessEqual", np.less_equal)
greater = _comparison("Greater", np.greater)
greater_equal = _comparison("GreaterEqual", np.greater_equal)
logical_and = _comparison("LogicalAnd", np.logical_and)
logical_or = _comparison("LogicalOr", np.logical_or)
logical_xor = _comparison("LogicalXor", np.logical_xor)

register_op("LogicalNot")(np.logical_not)
no_gradient("LogicalNot")


def logical_not(x, name=None):
    return execute("LogicalNot", (to_tensor(x),))


for _op_type, _fn in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
    register_op(_op_type)(_fn)
    no_gradient(_op_type)


def is_nan(x, name=None):
    return execute("IsNan", (_check_float(to_tensor(x), "is_nan", "IsNan"),))


def is_inf(x, name=None):
    return execute("IsInf", (_check_float(to_tensor(x), "is_inf", "IsInf"),))


def is_finite(x, name=None):
    return execute("IsFinite", (_check_float(to_tensor(x), "is_finite", "IsFinite"),))


def zeros_like_(x):
    return Tensor(np.zeros(x._value.shape, x._value.dtype))


def ones_like_(x):
    return Tensor(np.ones(x._value.shape, x._value.dtype))


# ------------------------------------------------------------- clipping ---
@register_op("ClipByValue")
def _clip_fwd(t, lo, hi):
    return np.minimum(np.maximum(t, lo), hi)


@RegisterGradient("ClipByValue")
def _clip_grad(op, grad):
    nb = batch_ndim(op, grad)
    t, lo, hi = op.inputs
    below, above = less(t, lo), greater(t, hi)
    zeros = Tensor(np.zeros((), grad._value.dtype))
    inside = logical_not(logical_or(below, above))
    g_t = sum_to(where(inside, grad, zeros), t._value.shape, nb)
    g_lo = sum_to(where(below, grad, zeros), lo._value.shape, nb)
    g_hi = sum_to(where(above, grad, zeros), hi._value.shape, nb)
    return g_t, g_lo, g_hi


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = to_tensor(t)
    lo = to_tensor(clip_value_min) if is_tensor_like(clip_value_min) else to_tensor(np.asarray(clip_value_min, t._value.dtype))
    hi = to_tensor(clip_value_max) if is_tensor_like(clip_value_max) else to_tensor(np.asarray(clip_value_max, t._value.dtype))
    for bound in (lo, hi):
        if bound._value.dtype != t._value.dtype:
            raise InvalidArgumentError(f"clip_by_value: bounds of dtype {bound.dtype.name} do not match t of dtype {t.dtype.name}")
    return execute("ClipByValue", (t, lo, hi))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t), clip_norm), as tf.clip_by_norm."""
    t = to_tensor(t)
    l2sum = reduce_sum(square(t), axes, keepdims=True)
    positive = greater(l2sum, 0)
    l2sum_safe = where(positive, l2sum, ones_like_(l2sum))
    l2norm = where(positive, sqrt(l2sum_safe), l2sum)
    clip = to_tensor(clip_norm) if is_tensor_like(clip_norm) else Tensor(np.asarray(clip_norm, t._value.dtype))
    return divide(multiply(t, clip), maximum(l2norm, clip))


def global_norm(t_list, name=None):
    """sqrt of the sum of the tensors' squared L2 norms (summed as one stacked reduction)."""
    terms = [reduce_sum(square(to_tensor(t))) for t in t_list if t is not None]
    if not terms:
        return Tensor(np.array(0, np.float32))
    dtype = terms[0].dtype
    return sqrt(reduce_sum(stack([cast(t, dtype) for t in terms])))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales the tensors by ``clip_norm * min(1 / global_norm, 1 / clip_norm)``, as tf.clip_by_global_norm
    (a non-finite norm makes the scale, and so every tensor, NaN); returns (tensors, global norm)."""
    norm = global_norm(t_list) if use_norm is None else to_tensor(use_norm)
    clip = to_tensor(clip_norm, dtype=norm.dtype) if not is_tensor_like(clip_norm) else to_tensor(clip_norm)
    one = Tensor(np.ones((), norm._value.dtype))
    scale = multiply(clip, minimum(divide(one, norm), divide(one, clip)))
    scale = add(scale, subtract(norm, norm))
    return [None if t is None else multiply(to_tensor(t), cast(scale, to_tensor(t).dtype)) for t in t_list], norm


# ----------------------------------------------------------------- matmul ---
declare(elementwise, "AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "SquaredDifference",
        "Maximum", "Minimum", "AddN", "Sqrt", "SqrtGrad", "Rsqrt", "RsqrtGrad", "Reciprocal", "ReciprocalGrad",
        "Tanh", "TanhGrad", "Sign", "Conj", "Real", "Imag", "Complex", "Cast", "ClipByValue")


@register_op("MatMul")
def _matmul_fwd(a, b, transpose_a=False, transpose_b=False):
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous and a.size:
        # A stack of matrices times one matrix is one large product: one BLAS call
        # instead of numpy's loop of small ones (stacked jacobian cotangents).
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    if a.ndim == b.ndim == 2 and a.shape[1] == 1 and a.dtype == b.dtype and a.dtype.kind == "f":
        # An inner dimension of 1 is an outer product: each entry is one product, so multiply gives the
        # same numbers as BLAS, several times faster (the gradient reaching a Dense(1)'s input)
        return np.multiply(a, b)
    return np.matmul(a, b)


def _stacked_times_matrix_grad(a, b, grad, tb, skip):
    """The gradient of ``a @ b`` (or ``a @ b.T``) for ``a`` of rank > 2 and ``b`` of rank 2, as the forward
    computes it: one product over all rows of ``a`` flattened to a matrix. The weight gradient is then one
    large product of the rows and their cotangents instead of a stack of small ones and a sum over the stack
    (the same sum of products, grouped differently)."""
    rows = (-1, a._value.shape[-1])
    grad_rows = reshape(grad, (-1, grad._value.shape[-1]))
    a_c, b_c = conj(a), conj(b)
    ga = None if 0 in skip else matmul(grad, b_c, transpose_b=not tb)
    gb = None
    if 1 not in skip:
        a_rows = reshape(a_c, rows)
        gb = matmul(grad_rows, a_rows, transpose_a=True) if tb else matmul(a_rows, grad_rows, transpose_a=True)
    return ga, gb


@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    nb = batch_ndim(op, grad)
    a, b = op.inputs
    ta, tb = op.attrs.get("transpose_a", False), op.attrs.get("transpose_b", False)
    skip = op.skip_input_indices
    if not ta and nb == 0 and a._value.ndim > 2 and b._value.ndim == 2:
        return _stacked_times_matrix_grad(a, b, grad, tb, skip)
    a_c, b_c = conj(a), conj(b)
    if not ta and not tb:
        ga = None if 0 in skip else matmul(grad, b_c, transpose_b=True)
        gb = None if 1 in skip else matmul(a_c, grad, transpose_a=True)
    elif not ta and tb:
        ga = None if 0 in skip else matmul(grad, b_c)
        gb = None if 1 in skip else matmul(grad, a_c, transpose_a=True)
    elif ta and not tb:
        ga = None if 0 in skip else matmul(b_c, grad, transpose_b=True)
        gb = None if 1 in skip else matmul(a_c, grad)
    else:
        ga = None if 0 in skip else matmul(b_c, grad, transpose_a=True, transpose_b=True)
        gb = None if 1 in skip else matmul(grad, a_c, transpose_a=True, transpose_b=True)
    ga = None if ga is None else sum_to(ga, a._value.shape, nb)
    gb = None if gb is None else sum_to(gb, b._value.shape, nb)
    return ga, gb


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    a, b = binary_args(a, b, "MatMul", broadcast=False)
    if adjoint_a:
        a, transpose_a = conj(a), True
    if adjoint_b:
        b, transpose_b = conj(b), True
    sa, sb = a._value.shape, b._value.shape
    if len(sa) < 2 or len(sb) < 2:
        raise InvalidArgumentError(f"matmul: both inputs must have rank >= 2, got shapes {TensorShape(sa)} and "
                                   f"{TensorShape(sb)}; use tf.linalg.matvec or tf.tensordot for vectors")
    k_a = sa[-2] if transpose_a else sa[-1]
    k_b = sb[-1] if transpose_b else sb[-2]
    if k_a != k_b:
        raise InvalidArgumentError(f"matmul: incompatible shapes {TensorShape(sa)} and {TensorShape(sb)}"
                                   f"{' (transpose_a)' if transpose_a else ''}{' (transpose_b)' if transpose_b else ''}: "
                                   f"inner dimensions {k_a} and {k_b} differ")
    try:
        if len(sa) > 2 or len(sb) > 2:
            np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise InvalidArgumentError(f"matmul: batch dimensions of {TensorShape(sa)} and {TensorShape(sb)} "
                                   "cannot be broadcast") from None
    attrs = {"transpose_a": True, "transpose_b": bool(transpose_b)} if transpose_a else (
        {"transpose_b": True} if transpose_b else None)
    return execute("MatMul", (a, b), attrs)


def _einsum_parse(equation, ndims):
    """Splits an einsum equation into explicit input and output subscripts (ellipsis expanded)."""
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, rhs = equation.split("->")
    else:
        lhs, rhs = equation, None
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise InvalidArgumentError(f"einsum: equation {equation!r} names {len(inputs)} inputs but {len(ndims)} were given")
    used = set(c for c in equation if c.isalpha())
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    max_ell = max((n - (len(s) - 3) for s, n in zip(inputs, ndims) if "..." in s), default=0)
    ell = "".join(spare[:max_ell])
    expanded = []
    for s, n in zip(inputs, ndims):
        if "..." in s:
            k = n - (len(s) - 3)
            s = s.replace("...", ell[max_ell - k:])
        if len(s) != n:
            raise InvalidArgumentError(f"einsum: subscripts {s!r} do not match an input of rank {n}")
        expanded.append(s)
    if rhs is None:
        counts = {}
        for s in expanded:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return expanded, rhs


@register_batching_rule("MatMul")
def _matmul_rows(op, batched):
    """Rows of ``a`` (not transposed) times a constant ``b``, or matrices stacked along axis 0."""
    a, b = op.inputs
    out_shape = op.outputs[0]._value.shape
    batch = (a if batched[0] else b)._value.shape[0]
    if out_shape[0] != batch:
        return False
    for x, is_batched, rows_of_a in ((a, batched[0], not op.attrs.get("transpose_a", False)), (b, batched[1], False)):
        ndim = x._value.ndim
        if is_batched and (ndim != len(out_shape) or (ndim < 3 and not rows_of_a)):
            return False
    return True


@register_op("Einsum")
def _einsum_fwd(*xs, equation):
    return np.einsum(equation, *xs, optimize=len(xs) > 2)


@register_batching_rule("Einsum")
def _einsum_rows(op, batched):
    """Each batched operand's first index is the output's first index and occurs once in it."""
    inputs, _, output = op.attrs["equation"].partition("->")
    if "." in op.attrs["equation"] or not output or output.count(output[0]) != 1:
        return False
    return all(subs[:1] == output[0] and subs.count(output[0]) == 1
               for subs, b in zip(inputs.split(","), batched) if b)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    nb = batch_ndim(op, grad)
    inputs, out = _einsum_parse(op.attrs["equation"], [t._value.ndim for t in op.inputs])
    free = iter([c for c in _LETTERS if c not in set("".join(inputs) + out)])
    batch = "".join(next(free) for _ in range(nb))
    grads = []
    for i, (sub, x) in enumerate(zip(inputs, op.inputs)):
        if i in op.skip_input_indices:
            grads.append(None)
            continue
        other_subs = [s for j, s in enumerate(inputs) if j != i]
        operands = [grad] + [conj(t) for j, t in enumerate(op.inputs) if j != i]
        subs = [batch + out] + other_subs
        known = set(out + "".join(other_subs))
        target, seen = [], set()
        for c, size in zip(sub, x._value.shape):
            if c in seen:
                # A repeated letter is a diagonal: a fresh letter tied to it by an identity matrix.
                fresh = next(free)
                subs.append(c + fresh)
                operands.append(Tensor(np.eye(size, dtype=grad._value.dtype)))
                target.append(fresh)
                continue
            if c not in known:
                # A letter summed away inside this input alone: broadcast the gradient back along it.
                subs.append(c)
                operands.append(Tensor(np.ones(size, dtype=grad._value.dtype)))
                known.add(c)
            seen.add(c)
            target.append(c)
        g = einsum(",".join(subs) + "->" + batch + "".join(target), *operands)
        # Size-1 dimensions broadcast against another operand are summed back.
        grads.append(sum_to(g, x._value.shape, nb))
    return grads


def einsum(equation, *inputs, **kwargs):
    inputs = [to_tensor(x) for x in inputs]
    dt = inputs[0]._value.dtype
    for x in inputs[1:]:
        if x._value.dtype != dt:
            raise InvalidArgumentError(f"einsum: all inputs must have the same dtype, got {inputs[0].dtype.name} and {x.dtype.name}")
    subs, out = _einsum_parse(equation, [x._value.ndim for x in inputs])
    sizes = {}
    for s, x in zip(subs, inputs):
        for c, d in zip(s, x._value.shape):
            known = sizes.get(c, 1)
            if d != 1 and known != 1 and d != known:
                raise InvalidArgumentError(f"einsum: dimension {c!r} has size {known} in one input and {d} in another "
                                           f"(equation {equation!r})")
            if d != 1:
                sizes[c] = d
    return execute("Einsum", tuple(inputs), {"equation": ",".join(subs) + "->" + out})


def tensordot(a, b, axes, name=None):
    a, b = binary_args(a, b, "TensorDot", broadcast=False)
    na, nbd = a._value.ndim, b._value.ndim
    if isinstance(axes, int) or (is_tensor_like(axes) and np.ndim(axes) == 0):
        k = int(axes)
        if k < 0 or k > min(na, nbd):
            raise InvalidArgumentError(f"tensordot: axes={k} must be between 0 and the smaller rank "
                                       f"{min(na, nbd)} of {a.shape} and {b.shape}")
        axes_a, axes_b = list(range(na - k, na)), list(range(k))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise InvalidArgumentError(f"tensordot: axes {list(axes_a)} and {list(axes_b)} must have the same length")
    axes_a = [normalize_axis(int(x), na, op="tensordot") for x in axes_a]
    axes_b = [normalize_axis(int(x), nbd, op="tensordot") for x in axes_b]
    letters = "abcdefghijklmnopqrstuvwxyz"
    sa = list(letters[:na])
    sb = list(letters[na:na + nbd])
    for i, j in zip(axes_a, axes_b):
        if a._value.shape[i] != b._value.shape[j]:
            raise InvalidArgumentError(f"tensordot: axis {i} of {a.shape} and axis {j} of {b.shape} differ")
        sb[j] = sa[i]
    out = "".join(c for k, c in enumerate(sa) if k not in axes_a) + "".join(c for k, c in enumerate(sb) if k not in axes_b)
    return einsum("".join(sa) + "," + "".join(sb) + "->" + out, a, b)


# ------------------------------------------------------------ operators ---
def _rev(fn):
    return lambda self, other: fn(other, self)


def _matmul_operator(a, b):
    return matmul(a, b)


def _install_operators():
    ops = {
        "__add__": add, "__radd__": _rev(add),
        "__sub__": subtract, "__rsub__": _rev(subtract),
        "__mul__": multiply, "__rmul__": _rev(multiply),
        "__truediv__": divide, "__rtruediv__": _rev(divide),
        "__floordiv__": floordiv, "__rfloordiv__": _rev(floordiv),
        "__mod__": floormod, "__rmod__": _rev(floormod),
        "__pow__": pow, "__rpow__": _rev(pow),
        "__matmul__": _matmul_operator, "__rmatmul__": _rev(_matmul_operator),
        "__neg__": lambda self: negative(self),
        "__pos__": lambda self: to_tensor(self),
        "__abs__": lambda self: abs(self),
        "__invert__": lambda self: logical_not(self),
        "__and__": logical_and, "__rand__": _rev(logical_and),
        "__or__": logical_or, "__ror__": _rev(logical_or),
        "__xor__": logical_xor, "__rxor__": _rev(logical_xor),
        "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
        "__eq__": _equal_operator, "__ne__": _not_equal_operator,
    }
    for cls in (Tensor, Variable):
        for name, fn in ops.items():
            setattr(cls, name, fn)


def _comparable(y):
    """Whether ``y`` can be compared elementwise; other objects (None, strings, modules) are simply unequal."""
    return is_tensor_like(y) or isinstance(y, (int, float, complex, bool, np.ndarray, np.generic, list, tuple))


def _comparable_to(x, y):
    return _comparable(y) or (isinstance(y, (str, bytes)) and x.dtype == dtypes.string)


def _equal_operator(x, y):
    return equal(x, y) if _comparable_to(x, y) else False


def _not_equal_operator(x, y):
    return not_equal(x, y) if _comparable_to(x, y) else True


_install_operators()

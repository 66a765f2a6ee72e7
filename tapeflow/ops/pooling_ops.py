"""Pooling ops (tf.nn.max_pool*, avg_pool*), channels-last, one to three spatial dimensions.

    MaxPool(x)               the window maxima
    MaxPoolGrad(x, g)        routes g to each window's maximum in x; linear in g
    MaxPoolGradGrad(x, h)    reads h at each window's maximum in x: MaxPoolGrad's adjoint in g
    AvgPool(x)               the window means (over real cells, not padding)
    AvgPoolGrad(g)           AvgPool's adjoint

Which cell is a window's maximum is piecewise constant in x, so the gradients
with respect to x of MaxPoolGrad and MaxPoolGradGrad are zero, and each of the
two is the other's gradient in its linear argument: every derivative order
stays in this family. Ties go to the first maximum in row-major window order.
"""
import numpy as np

from ..framework.batching import declare, elementwise
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from . import window_args as W
from .common import RegisterGradient, batch_ndim, execute, register_op
from .conv_ops import over_stacks
from .reduction_ops import sum_to


def _kernels():
    """The kernel module, imported on first use (it imports numba)."""
    from ..kernels import pooling
    return pooling


def _folded(a, rank, fn):
    """``fn`` on an (N, *S, C) array, with any extra leading axes folded into N."""
    if a.ndim == rank + 2:
        return fn(a)
    lead = a.shape[:a.ndim - rank - 1]
    out = fn(a.reshape((int(np.prod(lead)),) + a.shape[len(lead):]))
    return out.reshape(lead + out.shape[1:])


# Windows never cross examples: each output row comes from the same rows of the inputs (of one rank).
declare(elementwise, "MaxPool", "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad")


@register_op("MaxPool")
def _max_pool_fwd(x, ksize, strides, padding):
    return _folded(x, len(ksize), lambda a: _kernels().max_pool(a, ksize, strides, padding))


@register_op("MaxPoolGrad")
def _max_pool_grad_fwd(x, g, ksize, strides, padding):
    K = _kernels()
    if x.ndim == len(ksize) + 2:  # the kernel takes a stack of cotangents, finding each maximum once
        return K.max_pool_grad(x, g, ksize, strides, padding)
    return over_stacks(x, g, len(ksize), lambda a, b: K.max_pool_grad(a, b, ksize, strides, padding), False)


@register_op("MaxPoolGradGrad")
def _max_pool_grad_grad_fwd(x, h, ksize, strides, padding):
    K = _kernels()
    if x.ndim == len(ksize) + 2:
        return K.max_pool_grad_grad(x, h, ksize, strides, padding)
    return over_stacks(x, h, len(ksize), lambda a, b: K.max_pool_grad_grad(a, b, ksize, strides, padding), False)


@register_op("AvgPool")
def _avg_pool_fwd(x, ksize, strides, padding):
    return _folded(x, len(ksize), lambda a: _kernels().avg_pool(a, ksize, strides, padding))


@register_op("AvgPoolGrad")
def _avg_pool_grad_fwd(g, ksize, strides, padding, input_spatial):
    return _folded(g, len(ksize), lambda a: _kernels().avg_pool_grad(a, input_spatial, ksize, strides, padding))


def _window_attrs(op):
    return {k: op.attrs[k] for k in ("ksize", "strides", "padding")}


def _zeros(x, grad, nb):
    """The zero gradient with respect to the input that only decides where the maxima are."""
    return Tensor(np.zeros(grad._value.shape[:nb] + x._value.shape, grad._value.dtype))


@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    x = op.inputs[0]
    return sum_to(execute("MaxPoolGrad", (x, grad), _window_attrs(op)), x._value.shape, batch_ndim(op, grad))


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, g = op.inputs
    nb = batch_ndim(op, grad)
    return _zeros(x, grad, nb), sum_to(execute("MaxPoolGradGrad", (x, grad), _window_attrs(op)), g._value.shape, nb)


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, h = op.inputs
    nb = batch_ndim(op, grad)
    return _zeros(x, grad, nb), sum_to(execute("MaxPoolGrad", (x, grad), _window_attrs(op)), h._value.shape, nb)


@RegisterGradient("AvgPool")
def _avg_pool_grad(op, grad):
    x = op.inputs[0]
    rank = len(op.attrs["ksize"])
    attrs = dict(_window_attrs(op), input_spatial=tuple(x._value.shape[-rank - 1:-1]))
    return sum_to(execute("AvgPoolGrad", (grad,), attrs), x._value.shape, batch_ndim(op, grad))


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    g = op.inputs[0]
    return sum_to(execute("AvgPool", (grad,), _window_attrs(op)), g._value.shape, batch_ndim(op, grad))


# ------------------------------------------------------------ public API ---
def _pool(op_type, op, input, ksize, strides, padding, data_format, rank):
    x = W.float_input(op, input)
    first = W.channels_first(data_format, rank, op)
    W.check_rank(op, x, rank, data_format)
    ksize = W.spatial_ints(ksize, rank, first, "ksize", op)
    strides = W.spatial_ints(strides, rank, first, "strides", op)
    x = W.to_channels_last(x, first)
    explicit = op_type == "MaxPool"
    pads = W.resolve_padding(padding, x._value.shape[1:-1], ksize, strides, first, op, explicit=explicit)
    if explicit and any(b > k or a > k for (b, a), k in zip(pads, ksize)):
        raise InvalidArgumentError(f"{op}: explicit padding {padding!r} must not be larger than the window "
                                   f"{list(ksize)}")
    y = execute(op_type, (x,), {"ksize": ksize, "strides": strides, "padding": tuple(tuple(p) for p in pads)})
    return W.from_channels_last(y, first)


def _rank_of(op, input, data_format):
    x = W.float_input(op, input)
    rank = x._value.ndim - 2
    if rank not in (1, 2, 3):
        raise InvalidArgumentError(f"{op}: input must have rank 3, 4 or 5 (1 to 3 spatial dimensions), got shape "
                                   f"{x.shape}")
    if data_format is not None:
        data_format = W.generic_format(data_format, rank)
    return x, rank, data_format


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    return _pool("MaxPool", "max_pool1d", input, ksize, strides, padding, data_format, 1)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    return _pool("MaxPool", "max_pool2d", input, ksize, strides, padding, data_format, 2)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    return _pool("MaxPool", "max_pool3d", input, ksize, strides, padding, data_format, 3)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """N-D max pooling, N = 1, 2 or 3 taken from the input's rank."""
    x, rank, data_format = _rank_of("max_pool", input, data_format)
    return _pool("MaxPool", "max_pool", x, ksize, strides, padding, data_format, rank)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    return _pool("AvgPool", "avg_pool1d", input, ksize, strides, padding, data_format, 1)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    return _pool("AvgPool", "avg_pool2d", input, ksize, strides, padding, data_format, 2)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    return _pool("AvgPool", "avg_pool3d", input, ksize, strides, padding, data_format, 3)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """N-D average pooling, N = 1, 2 or 3 taken from the input's rank."""
    x, rank, data_format = _rank_of("avg_pool", input, data_format)
    return _pool("AvgPool", "avg_pool", x, ksize, strides, padding, data_format, rank)

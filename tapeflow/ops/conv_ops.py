"""Convolution ops (tf.nn.conv1d/2d/3d, convolution, the transposed, depthwise and separable forms).

Three ops, channels-last, for one to three spatial dimensions, with explicit
(before, after) padding pairs and an optional number of channel groups:

    Conv(x, w)                   y = B(x, w), bilinear
    ConvBackpropInput(dy, w)     the adjoint of B in x: conv_transpose
    ConvBackpropFilter(x, dy)    the adjoint of B in w

The gradient of each is made of the three again (B's adjoints' adjoints are B),
so derivatives of any order stay within this family.

A public convolution (one group, float32/float64) records its windows (im2col)
as an op of their own, so the filter gradient reads the forward's windows
instead of gathering them again:

    ConvWindows(x)                the windows, (N, *OS, taps * C)
    ConvWindowsBackprop(cols)     its adjoint (col2im)
    ConvOfWindows(x, cols, w)     B(x, w) given cols = ConvWindows(x): cols times the filter matrix

ConvOfWindows's gradient gives x the whole input gradient (ConvBackpropInput)
and the windows none, as they are a function of x; its filter gradient is
ConvBackpropFilter of the windows with a 1x1 window (their product with the
cotangent). Higher orders reach the windows through that product, and x
through ConvWindows's gradient. A depthwise convolution
is Conv with one group per input channel. The public functions resolve
TensorFlow's arguments (``window_args``) and transpose channels-first tensors.

Stacked cotangents: the ops accept extra leading axes on either operand (one
stacked operand is folded into the batch or handled by the kernel; both
stacked loop over the stack), so the gradients are batch-aware.
"""
import numpy as np

from ..framework.batching import register_batching_rule
from ..framework.errors import InvalidArgumentError
from . import array_ops, window_args as W
from .common import RegisterGradient, batch_ndim, execute, int_list, is_tensor_like, register_op, to_tensor
from .reduction_ops import sum_to


def _kernels():
    """The kernel module, imported on first use (it imports numba)."""
    from ..kernels import conv
    return conv


def over_stacks(a, b, rank, fn, fold_first=True):
    """``fn(a, b)`` on operands with ``rank + 2`` core axes and possibly extra leading (stacked) axes.

    A stack on ``a`` alone is folded into its batch axis (``fold_first``: the op
    is computed example by example in ``a``); otherwise ``fn`` runs per stacked row.
    """
    core = rank + 2
    la, lb = a.ndim - core, b.ndim - core
    if la == 0 and lb == 0:
        return fn(a, b)
    if lb == 0 and fold_first:
        lead = a.shape[:la + 1]
        out = fn(a.reshape((int(np.prod(lead)),) + a.shape[la + 1:]), b)
        return out.reshape(lead + out.shape[1:])
    lead = np.broadcast_shapes(a.shape[:la], b.shape[:lb])
    a = np.broadcast_to(a, lead + a.shape[la:])
    b = np.broadcast_to(b, lead + b.shape[lb:])
    if not all(lead):
        sample = fn(np.zeros(a.shape[len(lead):], a.dtype), np.zeros(b.shape[len(lead):], b.dtype))
        return np.zeros(lead + sample.shape, sample.dtype)
    rows = [fn(a[i], b[i]) for i in np.ndindex(lead)]
    return np.stack(rows).reshape(lead + rows[0].shape)


@register_op("Conv")
def _conv_fwd(x, w, strides, dilations, padding, groups):
    K = _kernels()
    return over_stacks(x, w, len(strides), lambda a, b: K.conv(a, b, strides, dilations, padding, groups))


@register_op("ConvBackpropInput")
def _conv_backprop_input_fwd(dy, w, strides, dilations, padding, groups, input_spatial):
    K = _kernels()
    return over_stacks(dy, w, len(strides), lambda a, b: K.conv_backprop_input(
        a, b, input_spatial, strides, dilations, padding, groups))


@register_batching_rule("Conv", "ConvBackpropInput")
def _conv_rows(op, batched):
    """Each example's output comes from its own input and the filter: rows stay independent while the
    filter does not depend on the source. (ConvBackpropFilter sums over the examples: it has no rule.)"""
    x, w = op.inputs
    return (not batched[1] and x._value.ndim == op.outputs[0]._value.ndim
            and op.outputs[0]._value.shape[:1] == x._value.shape[:1])


@register_op("ConvBackpropFilter")
def _conv_backprop_filter_fwd(x, dy, strides, dilations, padding, groups, filter_spatial):
    K = _kernels()
    rank = len(strides)
    if x.ndim == rank + 2:  # the kernel takes a stack of cotangents itself, reading x's windows once
        return K.conv_backprop_filter(x, dy, filter_spatial, strides, dilations, padding, groups)
    return over_stacks(x, dy, rank, lambda a, b: K.conv_backprop_filter(
        a, b, filter_spatial, strides, dilations, padding, groups), fold_first=False)


@register_op("ConvWindows")
def _conv_windows_fwd(x, kernel, strides, dilations, padding):
    K = _kernels()
    _check_window_attrs("ConvWindows", x, kernel, strides, dilations, padding)
    return _fold_stack(x, len(kernel), lambda a: K.windows(a, kernel, strides, dilations, padding))


@register_op("ConvWindowsBackprop")
def _conv_windows_backprop_fwd(cols, kernel, strides, dilations, padding, input_spatial):
    K = _kernels()
    _check_window_attrs("ConvWindowsBackprop", cols, kernel, strides, dilations, padding)
    taps = int(np.prod(kernel))
    expected = tuple(K.output_size(s, k, st, d, b, a)
                     for s, k, st, d, (b, a) in zip(input_spatial, kernel, strides, dilations, padding))
    if len(input_spatial) != len(kernel) or cols.shape[-len(kernel) - 1:-1] != expected or cols.shape[-1] % taps:
        raise InvalidArgumentError(
            f"ConvWindowsBackprop: windows of shape {cols.shape} do not fit an input of spatial shape "
            f"{tuple(input_spatial)} (expected spatial shape {expected} and a depth that is a multiple of {taps})")
    return _fold_stack(cols, len(kernel), lambda a: K.windows_backprop(
        a, input_spatial, kernel, strides, dilations, padding))


def _check_window_attrs(op, a, kernel, strides, dilations, padding):
    """The attributes agree with each other and with ``a``'s rank (graphs come from files)."""
    rank = len(kernel)
    if not (len(strides) == len(dilations) == len(padding) == rank) or a.ndim < rank + 2:
        raise InvalidArgumentError(f"{op}: kernel {tuple(kernel)}, strides {tuple(strides)}, dilations "
                                   f"{tuple(dilations)} and padding {tuple(padding)} must all have one entry per "
                                   f"spatial dimension of the operand (shape {a.shape})")


def _fold_stack(a, rank, fn):
    """``fn`` on ``a`` with any leading (stacked) axes folded into its batch axis: the windows of
    each example are its own."""
    lead = a.shape[:a.ndim - rank - 1]
    out = fn(a.reshape((int(np.prod(lead)),) + a.shape[len(lead):]))
    return out.reshape(lead + out.shape[1:])


@register_batching_rule("ConvWindows", "ConvWindowsBackprop")
def _windows_rows(op, batched):
    """Each example's windows come from that example alone, and back."""
    return op.outputs[0]._value.shape[:1] == op.inputs[0]._value.shape[:1]


def _window_attrs(op, **extra):
    attrs = {k: op.attrs[k] for k in ("kernel", "strides", "dilations", "padding")}
    attrs.update(extra)
    return attrs


@RegisterGradient("ConvWindows")
def _conv_windows_grad(op, grad):
    x = op.inputs[0]
    rank = len(op.attrs["kernel"])
    dx = execute("ConvWindowsBackprop", (grad,), _window_attrs(op, input_spatial=_spatial(x, rank)))
    return sum_to(dx, x._value.shape, batch_ndim(op, grad))


@RegisterGradient("ConvWindowsBackprop")
def _conv_windows_backprop_grad(op, grad):
    cols = op.inputs[0]
    return sum_to(execute("ConvWindows", (grad,), _window_attrs(op)), cols._value.shape, batch_ndim(op, grad))


def _attrs(op, **extra):
    attrs = {k: op.attrs[k] for k in ("strides", "dilations", "padding", "groups")}
    attrs.update(extra)
    return attrs


def _spatial(t, rank, filter_=False):
    shape = t._value.shape
    return tuple(shape[-rank - 2:-2]) if filter_ else tuple(shape[-rank - 1:-1])


def _backprop_input(dy, w, op, input_spatial):
    return execute("ConvBackpropInput", (dy, w), _attrs(op, input_spatial=input_spatial))


def _backprop_filter(x, dy, op, filter_spatial):
    return execute("ConvBackpropFilter", (x, dy), _attrs(op, filter_spatial=filter_spatial))


def _conv(x, w, op):
    return execute("Conv", (x, w), _attrs(op))


@RegisterGradient("Conv")
def _conv_grad(op, grad):
    x, w = op.inputs
    nb = batch_ndim(op, grad)
    rank = len(op.attrs["strides"])
    skip = op.skip_input_indices
    dx = None if 0 in skip else sum_to(_backprop_input(grad, w, op, _spatial(x, rank)), x._value.shape, nb)
    dw = None if 1 in skip else sum_to(_backprop_filter(x, grad, op, _spatial(w, rank, True)), w._value.shape, nb)
    return dx, dw


@RegisterGradient("ConvBackpropInput")
def _conv_backprop_input_grad(op, grad):
    # z = B_x^T(dy, w) gives <g, z> = <B(g, w), dy>.
    dy, w = op.inputs
    nb = batch_ndim(op, grad)
    rank = len(op.attrs["strides"])
    skip = op.skip_input_indices
    d_dy = None if 0 in skip else sum_to(_conv(grad, w, op), dy._value.shape, nb)
    d_w = None if 1 in skip else sum_to(_backprop_filter(grad, dy, op, _spatial(w, rank, True)), w._value.shape, nb)
    return d_dy, d_w


@RegisterGradient("ConvBackpropFilter")
def _conv_backprop_filter_grad(op, grad):
    # dw = B_w^T(x, dy) gives <g, dw> = <B(x, g), dy>.
    x, dy = op.inputs
    nb = batch_ndim(op, grad)
    rank = len(op.attrs["strides"])
    skip = op.skip_input_indices
    d_x = None if 0 in skip else sum_to(_backprop_input(dy, grad, op, _spatial(x, rank)), x._value.shape, nb)
    d_dy = None if 1 in skip else sum_to(_conv(x, grad, op), dy._value.shape, nb)
    return d_x, d_dy


# ------------------------------------------------------------ public API ---
def _pack_attrs(strides, dilations, pads, groups, **extra):
    attrs = {"strides": tuple(strides), "dilations": tuple(dilations),
             "padding": tuple(tuple(p) for p in pads), "groups": int(groups)}
    attrs.update(extra)
    return attrs


def _spans(kernel, dilations):
    return tuple((k - 1) * d + 1 for k, d in zip(kernel, dilations))


def _groups(op, channels, w):
    """The number of channel groups: input channels / filter input channels."""
    in_per_group, out_channels = w._value.shape[-2], w._value.shape[-1]
    if in_per_group < 1 or channels % in_per_group:
        raise InvalidArgumentError(f"{op}: the input depth {channels} must be a multiple of the filter's input "
                                   f"depth {in_per_group} (filter shape {w.shape})")
    groups = channels // in_per_group
    if out_channels % groups:
        raise InvalidArgumentError(f"{op}: the filter's {out_channels} output channels must split evenly into "
                                   f"{groups} groups of input channels")
    return groups


def _check_filter(op, w, rank, name="filters"):
    if w._value.ndim != rank + 2:
        raise InvalidArgumentError(f"{op}: {name} must be a tensor of rank {rank + 2}, got shape {w.shape}")
    if 0 in w._value.shape[:rank]:
        raise InvalidArgumentError(f"{op}: {name} must not have a zero-sized window, got shape {w.shape}")


def _convolve(op, input, filters, strides, padding, data_format, dilations, rank):
    """The convolution of a channels-last or channels-first input, with extra leading batch axes allowed."""
    x, w = W.float_operands(op, input, filters)
    first = W.channels_first(data_format, rank, op)
    W.check_rank(op, x, rank, data_format, extra_batch_dims=True)
    _check_filter(op, w, rank)
    strides = W.spatial_ints(strides, rank, first, "strides", op)
    dilations = W.spatial_ints(dilations, rank, first, "dilations", op)
    x, batch = W.fold_batch(x, rank)
    x = W.to_channels_last(x, first)
    groups = _groups(op, x._value.shape[-1], w)
    kernel = w._value.shape[:rank]
    pads = W.resolve_padding(padding, x._value.shape[1:-1], _spans(kernel, dilations), strides, first, op)
    if _through_windows(x, kernel, strides, dilations, pads, groups):
        y = _conv_of_windows(x, w, strides, dilations, pads)
    else:
        y = execute("Conv", (x, w), _pack_attrs(strides, dilations, pads, groups))
    return W.unfold_batch(W.from_channels_last(y, first), batch)


# A tape keeps a windowed convolution's windows (taps times the input's size) until the backward;
# beyond this many bytes the convolution is one Conv op, whose filter gradient gathers them again.
WINDOWS_KEPT_BYTES = 64 << 20


def _through_windows(x, kernel, strides, dilations, pads, groups):
    """Whether the convolution runs as ConvOfWindows(x, ConvWindows(x), w): the same products in the
    same order as the Conv op, so the same numbers."""
    value = x._value
    if groups != 1 or value.dtype not in (np.float32, np.float64):
        return False
    if all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not any(b or a for b, a in pads):
        return False    # a pointwise convolution is its own window matrix
    out = [(s + b + a - (k - 1) * d - 1) // st + 1 for s, k, st, d, (b, a) in zip(
        value.shape[1:-1], kernel, strides, dilations, pads)]
    rows = value.shape[0] * int(np.prod([max(o, 0) for o in out]))
    return rows * int(np.prod(kernel)) * value.shape[-1] * value.itemsize <= WINDOWS_KEPT_BYTES


def _conv_of_windows(x, w, strides, dilations, pads):
    """Conv(x, w) as ConvOfWindows(x, ConvWindows(x), w)."""
    rank = len(strides)
    kernel = w._value.shape[:rank]
    attrs = {"strides": tuple(strides), "dilations": tuple(dilations), "padding": tuple(tuple(p) for p in pads)}
    windows = execute("ConvWindows", (x,), dict(attrs, kernel=tuple(kernel)))
    return execute("ConvOfWindows", (x, windows, w), attrs)


def _pointwise_attrs(rank, **extra):
    ones = (1,) * rank
    return _pack_attrs(ones, ones, ((0, 0),) * rank, 1, **extra)


@register_op("ConvOfWindows")
def _conv_of_windows_fwd(x, windows, w, strides, dilations, padding):
    """Conv(x, w) given ``windows``, x's ConvWindows with these attributes: their product with the filter
    as a (taps * C, O) matrix."""
    K = _kernels()
    rank = len(strides)
    _check_window_attrs("ConvOfWindows", x, w.shape[:rank], strides, dilations, padding)
    out_spatial = tuple(K.output_size(s, k, st, d, b, a) for s, k, st, d, (b, a) in zip(
        x.shape[-rank - 1:-1], w.shape[:rank], strides, dilations, padding))
    expected = x.shape[:-rank - 1] + out_spatial + (int(np.prod(w.shape[:rank])) * x.shape[-1],)
    if w.ndim != rank + 2 or windows.shape != expected or w.shape[-2] != x.shape[-1]:
        raise InvalidArgumentError(f"ConvOfWindows: windows of shape {windows.shape} and a filter of shape "
                                   f"{w.shape} do not fit an input of shape {x.shape} (expected windows of shape "
                                   f"{expected} and a filter of input depth {x.shape[-1]})")
    matrix = w.reshape((1,) * rank + (-1, w.shape[-1]))
    return over_stacks(windows, matrix, rank, lambda a, b: K.conv(a, b, (1,) * rank, (1,) * rank,
                                                                  ((0, 0),) * rank))


@register_batching_rule("ConvOfWindows")
def _conv_of_windows_rows(op, batched):
    x = op.inputs[0]
    return not batched[2] and op.outputs[0]._value.shape[:1] == x._value.shape[:1]


@RegisterGradient("ConvOfWindows")
def _conv_of_windows_grad(op, grad):
    """The windows get no cotangent: they are a function of x, which receives the whole derivative
    (the input gradient of the full convolution, one op). The filter gradient is the windows'
    product with the cotangent, reshaped to the filter's shape."""
    x, windows, w = op.inputs
    nb = batch_ndim(op, grad)
    rank = len(op.attrs["strides"])
    skip = op.skip_input_indices
    attrs = _pack_attrs(op.attrs["strides"], op.attrs["dilations"], op.attrs["padding"], 1)
    dx = None
    if 0 not in skip:
        dx = execute("ConvBackpropInput", (grad, w), dict(attrs, input_spatial=_spatial(x, rank)))
        dx = sum_to(dx, x._value.shape, nb)
    dw = None
    if 2 not in skip:
        dw = execute("ConvBackpropFilter", (windows, grad), _pointwise_attrs(rank, filter_spatial=(1,) * rank))
        dw = sum_to(array_ops.reshape(dw, dw._value.shape[:dw._value.ndim - rank - 2] + w._value.shape),
                    w._value.shape, nb)
    return dx, None, dw


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """1-D convolution of (N, W, C) (or "NCW") with filters (KW, C, O)."""
    return _convolve("conv1d", input, filters, stride, padding, _format_1d(data_format), dilations, 1)


def _format_1d(data_format):
    """conv1d takes the 2-D names too, as TensorFlow does."""
    return {"NHWC": "NWC", "NCHW": "NCW"}.get(data_format, data_format)


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution of (N, H, W, C) (or "NCHW") with filters (KH, KW, C, O)."""
    return _convolve("conv2d", input, filters, strides, padding, data_format, dilations, 2)


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """3-D convolution of (N, D, H, W, C) (or "NCDHW") with filters (KD, KH, KW, C, O)."""
    return _convolve("conv3d", input, filters, strides, padding, data_format, dilations, 3)


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None):
    """N-D convolution, N = 1, 2 or 3 taken from the filter's rank."""
    w = to_tensor(filters) if is_tensor_like(filters) else np.asarray(filters)
    rank = np.ndim(w) - 2
    if rank not in (1, 2, 3):
        raise InvalidArgumentError(f"convolution: filters must have rank 3 to 5 (1 to 3 spatial dimensions), "
                                   f"got shape {tuple(np.shape(w))}")
    return _convolve("convolution", input, filters, strides, padding, W.generic_format(data_format, rank),
                     dilations, rank)


# ------------------------------------------------------- transposed conv ---
def _conv_transpose(op, input, filters, output_shape, strides, padding, data_format, dilations, rank):
    x, w = W.float_operands(op, input, filters)
    first = W.channels_first(data_format, rank, op)
    W.check_rank(op, x, rank, data_format)
    _check_filter(op, w, rank)
    strides = W.spatial_ints(strides, rank, first, "strides", op)
    dilations = W.spatial_ints(dilations, rank, first, "dilations", op)
    x = W.to_channels_last(x, first)
    in_channels, out_channels = w._value.shape[-1], w._value.shape[-2]
    if x._value.shape[-1] != in_channels:
        raise InvalidArgumentError(f"{op}: the input has {x._value.shape[-1]} channels but the filter (shape "
                                   f"{w.shape}, [..., output channels, input channels]) expects {in_channels}")
    out_spatial = W.output_shape_spatial(output_shape, rank, first, x._value.shape[0], out_channels, op)
    kernel = w._value.shape[:rank]
    spans = _spans(kernel, dilations)
    pads = W.resolve_padding(padding, out_spatial, spans, strides, first, op)
    forward = tuple((s + b + a - span) // st + 1 for s, span, st, (b, a) in zip(out_spatial, spans, strides, pads))
    if forward != x._value.shape[1:-1]:
        raise InvalidArgumentError(
            f"{op}: output_shape {list(int_list(output_shape))} does not match the input: a "
            f"convolution of that shape with these strides and padding has spatial shape {list(forward)}, "
            f"the input's is {list(x._value.shape[1:-1])}")
    y = execute("ConvBackpropInput", (x, w), _pack_attrs(strides, dilations, pads, 1, input_spatial=out_spatial))
    return W.from_channels_last(y, first)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC", dilations=None,
                     name=None):
    return _conv_transpose("conv1d_transpose", input, filters, output_shape, strides, padding,
                           _format_1d(data_format), dilations, 1)


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None,
                     name=None):
    return _conv_transpose("conv2d_transpose", input, filters, output_shape, strides, padding, data_format,
                           dilations, 2)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC", dilations=None,
                     name=None):
    return _conv_transpose("conv3d_transpose", input, filters, output_shape, strides, padding, data_format,
                           dilations, 3)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None, dilations=None,
                   name=None):
    rank = np.ndim(to_tensor(filters)._value if is_tensor_like(filters) else filters) - 2
    if rank not in (1, 2, 3):
        raise InvalidArgumentError("conv_transpose: filters must have rank 3 to 5 (1 to 3 spatial dimensions)")
    return _conv_transpose("conv_transpose", input, filters, output_shape, strides, padding,
                           W.generic_format(data_format, rank), dilations, rank)


# ------------------------------------------------- depthwise, separable ---
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):
    """Each input channel convolved with its own ``channel_multiplier`` filters: filter (KH, KW, C, M)
    gives C * M output channels, channel c * M + m from input channel c."""
    op = "depthwise_conv2d"
    x, w = W.float_operands(op, input, filter, "filter")
    _check_filter(op, w, 2, "filter")
    kh, kw, c, m = w._value.shape
    channel_axis = 1 if W.channels_first(data_format, 2, op) else -1
    W.check_rank(op, x, 2, data_format)
    if x._value.shape[channel_axis] != c:
        raise InvalidArgumentError(f"{op}: the input has {x._value.shape[channel_axis]} channels but the filter "
                                   f"(shape {w.shape}, [height, width, in_channels, channel_multiplier]) has {c}")
    grouped = array_ops.reshape(w, (kh, kw, 1, c * m))
    return _convolve(op, x, grouped, strides, padding, data_format, dilations, 2)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,
                     dilations=None, name=None):
    """depthwise_conv2d followed by a 1x1 convolution with ``pointwise_filter`` (1, 1, C * M, O)."""
    op = "separable_conv2d"
    x, pointwise = W.float_operands(op, input, pointwise_filter, "pointwise_filter")
    _check_filter(op, pointwise, 2, "pointwise_filter")
    if pointwise._value.shape[:2] != (1, 1):
        raise InvalidArgumentError(f"{op}: pointwise_filter must have a 1x1 window, got shape {pointwise.shape}")
    depthwise = depthwise_conv2d(x, depthwise_filter, strides, padding, data_format, dilations)
    return _convolve(op, depthwise, pointwise, 1, "VALID", data_format, None, 2)


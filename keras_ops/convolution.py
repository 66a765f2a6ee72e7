"""``keras.ops`` convolutions and pooling: conv, conv_transpose, depthwise_conv, separable_conv, max_pool,
average_pool, with Keras's argument names and defaults, on tapeflow's conv and pooling ops (whose
gradients are ops again, so derivatives of any order flow).

The number of spatial axes comes from the input's rank (3 to 5); ``data_format``
None means ``keras.config.image_data_format()``. Kernels are laid out as in
Keras: ``spatial + (in_channels / groups, out)`` for conv,
``spatial + (out, in)`` for conv_transpose, ``spatial + (in, multiplier)`` for
depthwise, and a ``(1, ..., 1, in * multiplier, out)`` pointwise kernel.
"""
from tapeflow.ops import array_ops as A
from tapeflow.ops import conv_ops as C
from tapeflow.ops import pooling_ops as P

from .config import image_data_format
from .dtypes import promote, to_float
from .symbolic import records_operations

_TF_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _data_format(data_format):
    data_format = image_data_format() if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                         f"Received: data_format={data_format}")
    return data_format


def _spatial_rank(x, op):
    rank = x.ndim - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"{op}: inputs must have rank 3, 4 or 5 (batch, 1 to 3 spatial axes, channels); received "
                         f"shape {tuple(x.shape)}")
    return rank


def _tuple(value, rank, name, op):
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    if len(values) != rank or not all(isinstance(v, int) and v >= 1 for v in values):
        raise ValueError(f"{op}: `{name}` must be a positive int or a tuple of {rank} positive ints; received "
                         f"{name}={value}")
    return values


def _padding(padding, op):
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"{op}: `padding` must be 'valid' or 'same'; received padding={padding!r}")
    return padding


def _operands(op, inputs, *kernels):
    """Inputs and kernels as tensors of one floating dtype (ints become floatx)."""
    tensors = promote(inputs, *kernels)
    return [to_float(t) for t in tensors]


def _window(op, x, strides, padding, data_format, dilation_rate=1):
    rank = _spatial_rank(x, op)
    data_format = _data_format(data_format)
    return (rank, _tuple(strides, rank, "strides", op), _padding(padding, op),
            _TF_FORMATS[rank][data_format == "channels_first"], _tuple(dilation_rate, rank, "dilation_rate", op))


def _channels(x, fmt):
    return x.shape[1 if fmt.startswith("NC") else -1]


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """N-D convolution (cross-correlation) of ``inputs`` with ``kernel``; groups = in_channels / kernel's."""
    x, w = _operands("conv", inputs, kernel)
    rank, strides, padding, fmt, dilations = _window("conv", x, strides, padding, data_format, dilation_rate)
    if w.ndim != rank + 2:
        raise ValueError(f"conv: the kernel must have rank {rank + 2} for inputs of rank {x.ndim}; received "
                         f"kernel shape {tuple(w.shape)}")
    if _channels(x, fmt) % w.shape[-2]:
        raise ValueError(f"conv: the inputs have {_channels(x, fmt)} channels, which must be a multiple of the "
                         f"kernel's input channels ({w.shape[-2]}, the channels per group); received inputs of "
                         f"shape {tuple(x.shape)} and kernel shape {tuple(w.shape)}")
    return C.convolution(x, w, strides=strides, padding=padding.upper(), data_format=fmt, dilations=dilations)


def _transposed_length(length, kernel, padding, output_padding, stride, dilation):
    """Keras's output length of a transposed convolution along one axis."""
    span = (kernel - 1) * dilation + 1
    if output_padding is None:
        return length * stride + max(span - stride, 0) if padding == "valid" else length * stride
    pad = span // 2 if padding == "same" else 0
    return (length - 1) * stride + span - 2 * pad + output_padding


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    """The transposed convolution (the gradient of ``conv`` with respect to its input); kernel
    ``spatial + (out_channels, in_channels)``."""
    op = "conv_transpose"
    x, w = _operands(op, inputs, kernel)
    rank, strides, padding, fmt, dilations = _window(op, x, strides, padding, data_format, dilation_rate)
    if w.ndim != rank + 2:
        raise ValueError(f"{op}: the kernel must have rank {rank + 2} for inputs of rank {x.ndim}; received "
                         f"kernel shape {tuple(w.shape)}")
    if output_padding is not None:
        output_padding = (output_padding,) * rank if isinstance(output_padding, int) else tuple(output_padding)
        if len(output_padding) != rank or any(p < 0 or p >= s for p, s in zip(output_padding, strides)):
            raise ValueError(f"{op}: `output_padding` must hold {rank} values, each >= 0 and less than the stride; "
                             f"received output_padding={output_padding}, strides={strides}")
    first = fmt.startswith("NC")
    spatial = x.shape[2:] if first else x.shape[1:-1]
    pads = output_padding or (None,) * rank
    lengths = [_transposed_length(n, k, padding, p, s, d)
               for n, k, p, s, d in zip(spatial, w.shape[:rank], pads, strides, dilations)]
    out_channels = w.shape[-2]
    output_shape = ([x.shape[0], out_channels] + lengths) if first else ([x.shape[0]] + lengths + [out_channels])
    return C.conv_transpose(x, w, output_shape, strides=strides, padding=padding.upper(), data_format=fmt,
                            dilations=dilations)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Each input channel convolved with its own ``multiplier`` filters (kernel ``spatial + (in, multiplier)``):
    output channel ``c * multiplier + m`` comes from input channel ``c``."""
    op = "depthwise_conv"
    x, w = _operands(op, inputs, kernel)
    rank, strides, padding, fmt, dilations = _window(op, x, strides, padding, data_format, dilation_rate)
    if w.ndim != rank + 2:
        raise ValueError(f"{op}: the kernel must have rank {rank + 2} for inputs of rank {x.ndim}; received "
                         f"kernel shape {tuple(w.shape)}")
    channels, multiplier = w.shape[-2], w.shape[-1]
    if _channels(x, fmt) != channels:
        raise ValueError(f"{op}: the inputs have {_channels(x, fmt)} channels but the "
                         f"kernel (shape {tuple(w.shape)}, spatial + (in_channels, multiplier)) has {channels}")
    # A grouped convolution with one group per input channel.
    grouped = A.reshape(w, tuple(w.shape[:rank]) + (1, channels * multiplier))
    return C.convolution(x, grouped, strides=strides, padding=padding.upper(), data_format=fmt,
                         dilations=dilations)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """``depthwise_conv`` then a 1x...x1 ``conv`` with ``pointwise_kernel``."""
    op = "separable_conv"
    x, depthwise, pointwise = _operands(op, inputs, depthwise_kernel, pointwise_kernel)
    rank = _spatial_rank(x, op)
    if pointwise.ndim != rank + 2 or any(d != 1 for d in pointwise.shape[:rank]):
        raise ValueError(f"{op}: the pointwise kernel must have shape (1,) * {rank} + (in * multiplier, out); "
                         f"received {tuple(pointwise.shape)}")
    y = depthwise_conv(x, depthwise, strides, padding, data_format, dilation_rate)
    return conv(y, pointwise, 1, "valid", data_format)


def _pool(op, pool, inputs, pool_size, strides, padding, data_format):
    x = to_float(inputs)
    rank = _spatial_rank(x, op)
    pool_size = _tuple(pool_size, rank, "pool_size", op)
    strides = pool_size if strides is None else _tuple(strides, rank, "strides", op)
    fmt = _TF_FORMATS[rank][_data_format(data_format) == "channels_first"]
    return pool(x, pool_size, strides, _padding(padding, op).upper(), data_format=fmt)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The maximum over each window; ``strides`` defaults to ``pool_size``."""
    return _pool("max_pool", P.max_pool, inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The mean over each window (with "same" padding, over the window's real cells only)."""
    return _pool("average_pool", P.avg_pool, inputs, pool_size, strides, padding, data_format)


records_operations(globals(), "keras.src.ops.nn")   # called on KerasTensors: graph operations

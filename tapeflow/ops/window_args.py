"""Arguments of the sliding-window ops (convolutions, pooling) in TensorFlow's terms.

The ops themselves work channels-last with explicit (before, after) padding
pairs; these helpers turn a public call's ``data_format``, ``strides``,
``dilations``/``ksize`` and ``padding`` ("VALID", "SAME" or an explicit list)
into that form, and move a channels-first tensor's channels last and back.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError, dtype_word
from . import array_ops
from .common import int_list, is_tensor_like, to_tensor

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def channels_first(data_format, rank, op):
    """Whether ``data_format`` (None means channels-last) puts channels before the spatial axes."""
    if data_format is None:
        return False
    last, first = _FORMATS[rank]
    if data_format == last:
        return False
    if data_format == first:
        return True
    raise InvalidArgumentError(f"{op}: data_format must be {last!r} or {first!r} for {rank} spatial dimension"
                               f"{'s' if rank > 1 else ''}, got {data_format!r}")


def generic_format(data_format, rank):
    """The data_format of the rank-generic functions (convolution, max_pool, ...): None, or any name,
    channels-first when it starts with "NC"."""
    if data_format is None:
        return None
    return _FORMATS[rank][1] if data_format.startswith("NC") else _FORMATS[rank][0]


def float_operands(op, x, w, w_name="filters"):
    """Converts the input and a filter; both must share one floating-point dtype."""
    x = to_tensor(x)
    w = to_tensor(w) if is_tensor_like(w) else to_tensor(w, dtype=x.dtype)
    if x._value.dtype.kind != "f":
        raise InvalidArgumentError(f"{op}: input must be a floating-point tensor, got {x.dtype.name}")
    if w._value.dtype != x._value.dtype:
        raise InvalidArgumentError(f"{op}: {w_name} must have the input's dtype: the input is a "
                                   f"{dtype_word(x.dtype)} tensor but {w_name} is a {dtype_word(w.dtype)} tensor")
    return x, w


def float_input(op, x):
    x = to_tensor(x)
    if x._value.dtype.kind != "f":
        raise InvalidArgumentError(f"{op}: input must be a floating-point tensor, got {x.dtype.name}")
    return x


def check_rank(op, x, rank, data_format, extra_batch_dims=False):
    ndim = x._value.ndim
    if ndim == rank + 2 or (extra_batch_dims and ndim > rank + 2):
        return
    what = f"at least {rank + 2}" if extra_batch_dims else f"{rank + 2}"
    layout = _FORMATS[rank][1 if data_format and data_format.startswith("NC") else 0]
    raise InvalidArgumentError(f"{op}: input must be a tensor of rank {what} ({layout}), got shape {x.shape}")


def to_channels_last(x, first):
    """Moves the channel axis of an (N, C, *S) tensor last (no-op for channels-last)."""
    if not first:
        return x
    nd = x._value.ndim
    return array_ops.transpose(x, [0] + list(range(2, nd)) + [1])


def from_channels_last(y, first):
    if not first:
        return y
    nd = y._value.ndim
    return array_ops.transpose(y, [0, nd - 1] + list(range(1, nd - 1)))


def fold_batch(x, rank):
    """An input with extra leading batch axes as a single batch axis; returns it and those axes."""
    shape = x._value.shape
    batch = shape[:len(shape) - rank - 1]
    if len(batch) == 1:
        return x, None
    return array_ops.reshape(x, (int(np.prod(batch)),) + shape[len(batch):]), batch


def unfold_batch(y, batch):
    if batch is None:
        return y
    return array_ops.reshape(y, tuple(batch) + y._value.shape[1:])


def spatial_ints(value, rank, first, name, op, default=1):
    """``strides``/``dilations``/``ksize``: an int or a list of 1, ``rank`` or ``rank + 2`` ints,
    as ``rank`` positive ints; in the long form the batch and channel entries must be 1."""
    if value is None:
        return (default,) * rank
    values = int_list(value)
    if len(values) == 1:
        values = values * rank
    elif len(values) == rank + 2:
        other = (values[0], values[1]) if first else (values[0], values[-1])
        if other != (1, 1):
            raise InvalidArgumentError(f"{op}: {name} {list(values)} must be 1 in the batch and channel "
                                       f"dimensions")
        values = values[2:] if first else values[1:-1]
    elif len(values) != rank:
        raise InvalidArgumentError(f"{op}: {name} must be an int or a list of 1, {rank} or {rank + 2} ints, "
                                   f"got {list(values)}")
    if any(v < 1 for v in values):
        raise InvalidArgumentError(f"{op}: {name} must be positive, got {list(values)}")
    return tuple(values)


def resolve_padding(padding, in_spatial, spans, strides, first, op, explicit=True):
    """One (before, after) pair per spatial axis for padding "VALID", "SAME" or an explicit list.

    "SAME" gives ceil(size / stride) outputs and pads as TensorFlow does: the odd
    cell goes after. ``spans`` are the windows' extents (dilated filter sizes).
    """
    rank = len(in_spatial)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            pads = ((0, 0),) * rank
        elif mode == "SAME":
            pads = []
            for size, span, stride in zip(in_spatial, spans, strides):
                total = max((-(-size // stride) - 1) * stride + span - size, 0)
                pads.append((total // 2, total - total // 2))
            pads = tuple(pads)
        else:
            raise InvalidArgumentError(f"{op}: padding must be 'VALID', 'SAME'"
                                       f"{' or a list of pairs' if explicit else ''}, got {padding!r}")
    else:
        if not explicit:
            raise InvalidArgumentError(f"{op}: padding must be 'VALID' or 'SAME', got {padding!r}")
        pads = _explicit_padding(padding, rank, first, op)
    for size, span, stride, (before, after) in zip(in_spatial, spans, strides, pads):
        if size + before + after < span:
            raise InvalidArgumentError(
                f"{op}: the window (extent {span}) is larger than the padded input (size {size} + padding "
                f"{before + after}): the output size would be negative")
    return pads


def _explicit_padding(padding, rank, first, op):
    try:
        pairs = [tuple(int(v) for v in pair) for pair in padding]
    except TypeError:
        pairs = None
    if pairs is None or len(pairs) != rank + 2 or any(len(p) != 2 for p in pairs):
        raise InvalidArgumentError(f"{op}: explicit padding must be a list of {rank + 2} [before, after] pairs "
                                   f"(one per dimension of the input), got {padding!r}")
    other = (pairs[0], pairs[1]) if first else (pairs[0], pairs[-1])
    if other != ((0, 0), (0, 0)):
        raise InvalidArgumentError(f"{op}: explicit padding of the batch and channel dimensions must be [0, 0], "
                                   f"got {padding!r}")
    spatial = pairs[2:] if first else pairs[1:-1]
    if any(v < 0 for pair in spatial for v in pair):
        raise InvalidArgumentError(f"{op}: explicit padding must be non-negative, got {padding!r}")
    return tuple(spatial)


def output_shape_spatial(output_shape, rank, first, batch, channels, op):
    """The spatial part of a transposed convolution's ``output_shape`` (full, or spatial only)."""
    shape = int_list(output_shape)
    if len(shape) == rank:
        return shape
    if len(shape) != rank + 2:
        raise InvalidArgumentError(f"{op}: output_shape must have {rank + 2} entries, got {list(shape)}")
    out_batch, out_channels = (shape[0], shape[1]) if first else (shape[0], shape[-1])
    if out_batch != batch:
        raise InvalidArgumentError(f"{op}: output_shape {list(shape)} has batch size {out_batch} but the input "
                                   f"has {batch}")
    if out_channels != channels:
        raise InvalidArgumentError(f"{op}: output_shape {list(shape)} has {out_channels} channels but the filter "
                                   f"makes {channels}")
    spatial = shape[2:] if first else shape[1:-1]
    if any(s < 1 for s in spatial):
        raise InvalidArgumentError(f"{op}: output_shape {list(shape)} must be positive")
    return spatial

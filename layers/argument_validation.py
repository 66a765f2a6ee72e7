"""Keras's argument forms: an int or a tuple of ints per spatial axis, padding and data_format names."""
import numbers

from . import backend


def standardize_tuple(value, n, name, allow_zero=False):
    """``value`` (an int, or an iterable of ``n`` ints) as a tuple of ``n`` ints, each > 0 (>= 0 with
    ``allow_zero``)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (int(value),) * n
    else:
        try:
            value = tuple(value)
        except TypeError:
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}")
        if len(value) != n or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}")
        value = tuple(int(v) for v in value)
    bad = [v for v in value if v < 0 or (v == 0 and not allow_zero)]
    if bad:
        rule = "`value >= 0`" if allow_zero else "`value > 0`"
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value} "
                         f"including values {bad} that do not satisfy {rule}")
    return value


def standardize_padding(padding, allow_causal=False):
    mode = str(padding).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if not isinstance(padding, str) or mode not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(repr(a) for a in allowed)}. "
                         f"Received: padding={padding}")
    return mode


def standardize_data_format(data_format):
    if data_format is None:
        return backend.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                         f"Received: data_format={data_format}")
    return data_format


def tf_data_format(data_format, rank):
    """The tf.nn name of a Keras data_format for ``rank`` spatial axes ("NHWC", "NCW", ...)."""
    spatial = {1: "W", 2: "HW", 3: "DHW"}[rank]
    return f"N{spatial}C" if data_format == "channels_last" else f"NC{spatial}"


def conv_output_length(length, kernel_size, padding, stride, dilation=1):
    """The output length of a convolution or pooling window along one axis (None if unknown)."""
    if length is None:
        return None
    span = (kernel_size - 1) * dilation + 1
    if padding == "valid":
        return max(0, (length - span) // stride + 1)
    return -(-length // stride)  # "same" and "causal"


def deconv_output_length(length, kernel_size, padding, output_padding, stride, dilation=1):
    """The output length of a transposed convolution along one axis (Keras's formula)."""
    if length is None:
        return None
    span = (kernel_size - 1) * dilation + 1
    if output_padding is None:
        if padding == "valid":
            return length * stride + max(span - stride, 0)
        return length * stride
    pad = span // 2 if padding == "same" else 0
    return (length - 1) * stride + span - 2 * pad + output_padding

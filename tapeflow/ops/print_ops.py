"""tf.print as an op (``PrintV2``): a traced function prints at every call, not once at trace time.

Tensors are formatted as TensorFlow formats them: numbers in their shortest
round-tripping form (``2``, ``0.1``, ``0.333333343``), and each dimension longer
than ``2 * summarize`` elided to its first and last ``summarize`` entries.
"""
import sys

import numpy as np

from .common import execute, no_gradient, register_op, to_tensor

_STREAMS = {"stderr": lambda: sys.stderr, "stdout": lambda: sys.stdout}


def _number(value):
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        short = "%.6g" % value if value.dtype.itemsize <= 4 else "%.15g" % value
        if type(value)(short) != value and not np.isnan(value):
            short = "%.9g" % value if value.dtype.itemsize <= 4 else "%.17g" % value
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(short, short)
    if isinstance(value, np.complexfloating):
        return f"({_number(value.real)},{_number(value.imag)})"
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", "replace")
    return str(value)


_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}


def _quoted(value):
    """A string element as TensorFlow prints it inside a tensor: in double quotes, with quotes,
    backslashes and line breaks escaped; other bytes are written as they are."""
    return '"' + value.decode("utf-8", "replace").translate(_ESCAPES) + '"'


def format_tensor(array, summarize=3, quote_strings=True):
    """One tensor as tf.print shows it (``summarize=-1`` shows every element). String elements are
    quoted, except a lone scalar string (``quote_strings=False``), which tf.print writes as it is."""
    array = np.asarray(array)
    if array.dtype.kind == "O":
        element = _quoted if quote_strings or array.ndim else _number
    else:
        element = _number
    if array.ndim == 0:
        return element(array[()])

    def rows(a, depth):
        n = a.shape[0]
        keep = range(n) if summarize < 0 or n <= 2 * summarize else list(range(summarize)) + [None] + list(
            range(n - summarize, n))
        if a.ndim == 1:
            return "[" + " ".join("..." if i is None else element(a[i]) for i in keep) + "]"
        glue = "\n" * (a.ndim - 1) + " " * (depth + 1)
        return "[" + glue.join("..." if i is None else rows(a[i], depth + 1) for i in keep) + "]"
    return rows(array, 0)


@register_op("PrintV2", num_outputs=-1, at_trace=lambda *tensors, **attrs: ())
def _print_fwd(*tensors, template, sep, end, stream, summarize):
    values = iter(tensors)
    quote = len(template) > 1    # a lone scalar string is printed as it is
    pieces = [format_tensor(next(values), summarize, quote) if piece is None else piece for piece in template]
    _STREAMS[stream]().write(sep.join(pieces) + end)
    return ()


no_gradient("PrintV2")


def print_(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: prints Python values and tensors (to sys.stderr by default) each time it runs."""
    stream = "stderr" if output_stream is None else next(
        (key for key, get in _STREAMS.items() if output_stream is get()), None)
    if stream is None:
        raise ValueError(f"tf.print: output_stream must be sys.stdout or sys.stderr, got {output_stream!r}")
    template, tensors = [], []
    for value in inputs:
        if isinstance(value, str):
            template.append(value)
        elif isinstance(value, bytes):     # a Python value, printed as Python shows it
            template.append(str(value))
        else:
            template.append(None)
            tensors.append(to_tensor(value))
    execute("PrintV2", tuple(tensors), {"template": tuple(template), "sep": str(sep), "end": str(end),
                                        "stream": stream, "summarize": -1 if summarize is None else int(summarize)})

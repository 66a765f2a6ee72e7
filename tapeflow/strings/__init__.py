"""tf.strings: string ops on bytes, with TensorFlow's semantics.

Elementwise ops take dense tensors or RaggedTensors (applied to the flat values, the row
partition kept). Splitting ops return RaggedTensors built with tapeflow.ragged's public
constructors: a scalar input gives a dense vector, an input of rank r a RaggedTensor of rank r + 1.
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..ops import string_ops as _ops
from ..ops.common import execute as _execute, to_tensor as _to_tensor
from ..ragged import RaggedTensor, map_flat_values as _map_flat_values

__all__ = ["as_string", "bytes_split", "format", "join", "length", "lower", "reduce_join", "regex_full_match",
           "regex_replace", "split", "strip", "substr", "to_hash_bucket_fast", "to_number", "unicode_decode",
           "unicode_split", "upper"]


def _elementwise(fn):
    """``fn`` with RaggedTensor inputs (first argument) mapped over their flat values."""
    def op(input, *args, **kwargs):
        if isinstance(input, RaggedTensor):
            return _map_flat_values(lambda values: fn(values, *args, **kwargs), input)
        return fn(input, *args, **kwargs)
    op.__name__, op.__qualname__, op.__doc__ = fn.__name__, fn.__name__, fn.__doc__
    return op


def _length(input, unit="BYTE", name=None):
    """Length of each string in bytes (``unit="BYTE"``) or Unicode code points (``"UTF8_CHAR"``)."""
    return _ops.length(input, unit)


def _lower(input, encoding="", name=None):
    """Lower-cases ASCII letters (every letter with ``encoding="utf-8"``)."""
    return _ops.lower(input, encoding)


def _upper(input, encoding="", name=None):
    """Upper-cases ASCII letters (every letter with ``encoding="utf-8"``)."""
    return _ops.upper(input, encoding)


def _strip(input, name=None):
    """Removes leading and trailing ASCII whitespace."""
    return _ops.strip(input)


def _regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces matches of ``pattern`` (Python ``re`` syntax on bytes, close to RE2's) with ``rewrite``
    (``\\1`` names a group)."""
    return _ops.regex_replace(input, pattern, rewrite, replace_global)


def _regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern``."""
    return _ops.regex_full_match(input, pattern)


def _to_number(input, out_type=dtypes.float32, name=None):
    """Parses each string as a number of ``out_type`` (float32, float64, int32 or int64)."""
    return _ops.to_number(input, out_type)


def _to_hash_bucket_fast(input, num_buckets, name=None):
    """FarmHash Fingerprint64 of each string modulo ``num_buckets`` (int64), as TensorFlow computes it."""
    return _ops.to_hash_bucket_fast(input, num_buckets)


def _substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TensorFlow's argument name
    """The substring of ``len`` bytes or characters starting at ``pos`` (negative: from the end)."""
    return _ops.substr(input, pos, len, unit)


def _as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Numbers and booleans as strings, formatted as C's printf does (``%f``, ``%e``, ``%g``, ``%d``)."""
    return _ops.as_string(input, precision, scientific, shortest, width, fill)


length = _elementwise(_length)
lower = _elementwise(_lower)
upper = _elementwise(_upper)
strip = _elementwise(_strip)
regex_replace = _elementwise(_regex_replace)
regex_full_match = _elementwise(_regex_full_match)
to_number = _elementwise(_to_number)
to_hash_bucket_fast = _elementwise(_to_hash_bucket_fast)
substr = _elementwise(_substr)
as_string = _elementwise(_as_string)
format = _ops.string_format  # noqa: A001 - TensorFlow's name


def join(inputs, separator="", name=None):
    """Concatenates the strings of ``inputs`` elementwise (scalars broadcast), with ``separator``
    between them. RaggedTensor inputs must share one row partition."""
    inputs = list(inputs)
    if any(isinstance(x, RaggedTensor) for x in inputs):
        return _map_flat_values(lambda *values: _ops.string_join(values, separator), *inputs)
    return _ops.string_join(inputs, separator)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along ``axis`` (all axes when None) with ``separator`` between them."""
    if isinstance(inputs, RaggedTensor):
        if inputs.ragged_rank != 1 or inputs.flat_values.shape.rank != 1 or axis not in (1, -1):
            raise InvalidArgumentError("strings.reduce_join: a RaggedTensor input is supported for a 2-D "
                                       "RaggedTensor joined along axis 1 (or -1)")
        splits = inputs.row_splits.numpy()
        values = inputs.flat_values.numpy()
        sep = separator.encode("utf-8") if isinstance(separator, str) else bytes(separator)
        rows = np.empty(len(splits) - 1, dtype=object)
        rows[:] = [sep.join(values[a:b]) for a, b in zip(splits[:-1], splits[1:])]
        return _to_tensor(rows.reshape(-1, 1) if keepdims else rows)
    return _ops.reduce_join(inputs, axis, keepdims, separator)


# ------------------------------------------------------------------ splitting ---
def _split_into_rows(input, op_type, attrs, what):
    """Runs a flat splitting op on every string of ``input``; the pieces of each string form a row."""
    outer_splits = []
    if isinstance(input, RaggedTensor):
        outer_splits = list(input.nested_row_splits)
        flat = input.flat_values
    else:
        flat = _ops.string_tensor(input, what)
    shape = tuple(flat._value.shape)
    if not isinstance(input, RaggedTensor):
        if len(shape) == 0:
            values, _ = _execute(op_type, (flat,), attrs)
            return values
        for axis in range(len(shape) - 1):   # dense outer dimensions: rows of uniform length
            rows = int(np.prod(shape[:axis + 1]))
            outer_splits.append(_to_tensor(np.arange(rows + 1, dtype=np.int64) * shape[axis + 1]))
    elif len(shape) != 1:
        raise InvalidArgumentError(f"{what}: a RaggedTensor input must have 1-D flat values")
    if len(shape) > 1:
        from ..ops.array_ops import reshape
        flat = reshape(flat, [-1])
    values, row_splits = _execute(op_type, (flat,), attrs)
    return RaggedTensor.from_nested_row_splits(values, outer_splits + [row_splits])


def split(input, sep=None, maxsplit=-1, name=None):
    """Splits each string at ``sep`` (runs of ASCII whitespace when None, with no empty pieces;
    an empty string gives no pieces). Returns a RaggedTensor (a vector for a scalar input)."""
    sep_text = "" if sep is None else _ops._attr_text(sep, "strings.split: sep")
    if sep is not None and not sep_text:
        raise InvalidArgumentError("strings.split: sep must not be empty (use None to split at whitespace)")
    return _split_into_rows(input, "StringSplitFlat", {"sep": sep_text, "maxsplit": int(maxsplit)}, "strings.split")


def _check_encoding(input_encoding, what):
    if str(input_encoding).replace("-", "").upper() != "UTF8":
        raise InvalidArgumentError(f"{what}: only input_encoding='UTF-8' is supported, got {input_encoding!r}")


def bytes_split(input, name=None):
    """Each string as its single bytes."""
    return _split_into_rows(input, "UnicodeSplitFlat", {"unit": "BYTE"}, "strings.bytes_split")


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """Each UTF-8 string as its characters (each a UTF-8 string); invalid bytes become U+FFFD."""
    _check_encoding(input_encoding, "strings.unicode_split")
    _check_errors(errors, replacement_char, "strings.unicode_split")
    return _split_into_rows(input, "UnicodeSplitFlat", {"unit": "CHAR"}, "strings.unicode_split")


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False,
                   name=None):
    """Each UTF-8 string as its code points (int32); invalid bytes become U+FFFD."""
    _check_encoding(input_encoding, "strings.unicode_decode")
    _check_errors(errors, replacement_char, "strings.unicode_decode")
    if replace_control_characters:
        raise InvalidArgumentError("strings.unicode_decode: replace_control_characters=True is not supported")
    return _split_into_rows(input, "UnicodeSplitFlat", {"unit": "CODEPOINT"}, "strings.unicode_decode")


def _check_errors(errors, replacement_char, what):
    if errors != "replace" or replacement_char != 65533:
        raise InvalidArgumentError(f"{what}: only errors='replace' with replacement_char=65533 is supported")

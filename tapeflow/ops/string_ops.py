"""String ops on TensorFlow's string representation: object arrays whose elements are ``bytes``.

Every forward returns an ndarray (never a bare ``bytes``: numpy ufuncs on 0-d object arrays
return the element itself). None of these ops is differentiable. Ops that fail on bad data
(``StringToNumber``, ``Substr``) compute a placeholder result while tracing, where inputs are
empty strings, and raise at run time.
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from .common import execute, no_gradient, register_op, to_tensor

_NON_DIFFERENTIABLE = []


def _string_op(op_type, num_outputs=1, at_trace=None):
    _NON_DIFFERENTIABLE.append(op_type)
    return register_op(op_type, num_outputs=num_outputs, at_trace=at_trace, pure=at_trace is None)


def _map(fn, array, otype=object):
    """``fn`` on every element of ``array``, as an ndarray of ``otype`` with its shape."""
    array = np.asarray(array)
    out = np.empty(array.shape, dtype=otype)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        flat[i] = fn(item)
    return out


def string_tensor(x, what):
    t = to_tensor(x, dtype=dtypes.string) if not hasattr(x, "dtype") else to_tensor(x)
    if t.dtype != dtypes.string:
        raise InvalidArgumentError(f"{what}: expected a string tensor, got dtype {t.dtype.name}")
    return t


# ------------------------------------------------------------------ joining ---
@_string_op("StringJoin")
def _join_fwd(*inputs, separator):
    separator = _attr_bytes(separator)
    arrays = np.broadcast_arrays(*[np.asarray(a) for a in inputs])
    shape = arrays[0].shape if arrays else ()
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    columns = [a.reshape(-1) for a in arrays]
    for i in range(flat.size):
        flat[i] = separator.join(c[i] for c in columns)
    return out


def string_join(inputs, separator="", name=None):
    tensors = tuple(string_tensor(x, "strings.join") for x in inputs)
    shapes = [t._value.shape for t in tensors]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise InvalidArgumentError(f"strings.join: inputs must be scalars or have one shape, got "
                                   f"{[list(s) for s in shapes]}") from None
    return execute("StringJoin", tensors, {"separator": _attr_text(separator, "strings.join: separator")})


@_string_op("ReduceJoin")
def _reduce_join_fwd(x, axes, keepdims, separator):
    x, separator = np.asarray(x), _attr_bytes(separator)
    if not axes:
        return x.copy()
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + list(axes))
    lead = moved.shape[:len(kept)]
    width = int(np.prod([x.shape[a] for a in axes]))
    out = np.empty(lead, dtype=object)
    flat_out, flat_rows = out.reshape(-1), moved.reshape(out.size, width)
    for i in range(flat_out.size):
        flat_out[i] = separator.join(flat_rows[i])
    if keepdims:
        out = out.reshape(tuple(1 if a in axes else d for a, d in enumerate(x.shape)))
    return out


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    t = string_tensor(inputs, "strings.reduce_join")
    ndim = t._value.ndim
    if axis is None:
        axes = tuple(range(ndim))
    else:
        raw = axis if isinstance(axis, (list, tuple)) else [axis]
        axes = []
        for a in raw:
            a = int(a)
            if not -ndim <= a < ndim:
                raise InvalidArgumentError(f"strings.reduce_join: axis {a} is out of bounds for a tensor of rank {ndim}")
            axes.append(a % ndim)
        axes = tuple(sorted(set(axes)))
    return execute("ReduceJoin", (t,), {"axes": axes, "keepdims": bool(keepdims), "separator": _attr_text(separator, "strings.reduce_join: separator")})


# ----------------------------------------------------------- elementwise ---
def _utf8(item, errors="strict"):
    return item.decode("utf-8", errors)


@_string_op("StringLength")
def _length_fwd(x, unit):
    if unit == "BYTE":
        return _map(len, x, np.int32)
    return _map(lambda s: len(_utf8(s, "replace")), x, np.int32)


def length(input, unit="BYTE", name=None):
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return execute("StringLength", (string_tensor(input, "strings.length"),), {"unit": unit})


@_string_op("StringLower")
def _lower_fwd(x, encoding):
    if encoding == "utf-8":
        return _map(lambda s: _utf8(s).lower().encode("utf-8"), x)
    return _map(bytes.lower, x)     # ASCII letters only, as TensorFlow without an encoding


@_string_op("StringUpper")
def _upper_fwd(x, encoding):
    if encoding == "utf-8":
        return _map(lambda s: _utf8(s).upper().encode("utf-8"), x)
    return _map(bytes.upper, x)


def _encoding(encoding, what):
    encoding = (encoding or "").lower()
    if encoding not in ("", "utf-8"):
        raise InvalidArgumentError(f"{what}: encoding must be '' or 'utf-8', got {encoding!r}")
    return encoding


def lower(input, encoding="", name=None):
    return execute("StringLower", (string_tensor(input, "strings.lower"),),
                   {"encoding": _encoding(encoding, "strings.lower")})


def upper(input, encoding="", name=None):
    return execute("StringUpper", (string_tensor(input, "strings.upper"),),
                   {"encoding": _encoding(encoding, "strings.upper")})


@_string_op("StringStrip")
def _strip_fwd(x):
    return _map(bytes.strip, x)     # ASCII whitespace


def strip(input, name=None):
    return execute("StringStrip", (string_tensor(input, "strings.strip"),))


@_string_op("StaticRegexReplace")
def _regex_replace_fwd(x, pattern, rewrite, replace_global):
    import re
    compiled, rewrite = re.compile(_attr_bytes(pattern)), _attr_bytes(rewrite)
    count = 0 if replace_global else 1
    return _map(lambda s: compiled.sub(rewrite, s, count=count), x)


def _static_string(value, what):
    if hasattr(value, "dtype"):
        value = to_tensor(value)._value
        if np.ndim(value) != 0:
            raise InvalidArgumentError(f"{what} must be a scalar string")
        value = value[()] if isinstance(value, np.ndarray) else value
    return _attr_text(value, what)


def _compile(pattern, what):
    import re   # not at module level: string_ops loads with tapeflow
    try:
        re.compile(_attr_bytes(pattern))
    except re.error as err:
        raise InvalidArgumentError(f"{what}: invalid pattern {pattern!r}: {err}") from None
    return pattern


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    pattern = _compile(_static_string(pattern, "regex_replace: pattern"), "regex_replace")
    rewrite = _static_string(rewrite, "regex_replace: rewrite")
    return execute("StaticRegexReplace", (string_tensor(input, "regex_replace"),),
                   {"pattern": pattern, "rewrite": rewrite, "replace_global": bool(replace_global)})


@_string_op("StaticRegexFullMatch")
def _regex_full_match_fwd(x, pattern):
    import re
    compiled = re.compile(_attr_bytes(pattern))
    return _map(lambda s: compiled.fullmatch(s) is not None, x, np.bool_)


def regex_full_match(input, pattern, name=None):
    pattern = _compile(_static_string(pattern, "regex_full_match: pattern"), "regex_full_match")
    return execute("StaticRegexFullMatch", (string_tensor(input, "regex_full_match"),), {"pattern": pattern})


_SPACE = rb"[ \t\n\r\f\v]*"
_NUMBER_SYNTAX = {   # what C's strtod / strtol accept (ASCII digits only, no underscores), around whitespace
    "int": _SPACE + rb"[+-]?[0-9]+" + _SPACE,
    "float": _SPACE + rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)" + _SPACE,
    "hex": _SPACE + rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?" + _SPACE,
}
_COMPILED_SYNTAX = {}


def _parse_number(s, integer):
    """``s`` as a Python int or float, with the syntax TensorFlow's StringToNumber accepts."""
    import re
    if not _COMPILED_SYNTAX:
        _COMPILED_SYNTAX.update({k: re.compile(v, re.IGNORECASE) for k, v in _NUMBER_SYNTAX.items()})
    if integer:
        if _COMPILED_SYNTAX["int"].fullmatch(s):
            return int(s)
    elif _COMPILED_SYNTAX["float"].fullmatch(s):
        return float(s)
    elif _COMPILED_SYNTAX["hex"].fullmatch(s):
        return float.fromhex(s.strip().decode("ascii"))
    raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {s.decode('utf-8', 'replace')}")


def _to_number_fwd(x, out_type):
    np_type = np.dtype(out_type)
    integer = np_type.kind in "iu"
    out = np.empty(np.shape(x), dtype=np_type)
    flat = out.reshape(-1)
    for i, s in enumerate(np.asarray(x).reshape(-1)):
        value = _parse_number(s, integer)
        if integer and not np.iinfo(np_type).min <= value <= np.iinfo(np_type).max:
            raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {s.decode()}")
        with np.errstate(over="ignore"):    # 1e40 as float32 is inf, as in TensorFlow
            flat[i] = value
    return out


_to_number_fwd = _string_op("StringToNumber", at_trace=lambda x, out_type: np.zeros(np.shape(x), out_type))(
    _to_number_fwd)


def to_number(string_tensor_, out_type=dtypes.float32, name=None):
    out_type = dtypes.as_dtype(out_type)
    if out_type.name not in ("float32", "float64", "int32", "int64"):
        raise InvalidArgumentError(f"strings.to_number: out_type must be float32, float64, int32 or int64, "
                                   f"got {out_type.name}")
    return execute("StringToNumber", (string_tensor(string_tensor_, "strings.to_number"),),
                   {"out_type": out_type.name})


@_string_op("StringToHashBucketFast")
def _hash_bucket_fast_fwd(x, num_buckets):
    from ..kernels.farmhash import fingerprint64   # loaded on first use: import tapeflow stays light
    return _map(lambda s: fingerprint64(s) % num_buckets, x, np.int64)


def to_hash_bucket_fast(input, num_buckets, name=None):
    num_buckets = int(num_buckets)
    if num_buckets < 1:
        raise InvalidArgumentError(f"strings.to_hash_bucket_fast: num_buckets must be >= 1, got {num_buckets}")
    return execute("StringToHashBucketFast", (string_tensor(input, "strings.to_hash_bucket_fast"),),
                   {"num_buckets": num_buckets})


# ------------------------------------------------------------- substrings ---
def _substr_fwd(x, pos, length, unit):
    x, pos, length = np.broadcast_arrays(np.asarray(x), np.asarray(pos), np.asarray(length))
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (s, p, n) in enumerate(zip(x.reshape(-1), pos.reshape(-1), length.reshape(-1))):
        units = s if unit == "BYTE" else _utf8(s)
        size, p, n = len(units), int(p), int(n)
        start = p + size if p < 0 else p
        if not 0 <= start <= size:
            raise InvalidArgumentError(f"pos {p} out of range for string b'{s.decode('utf-8', 'replace')}' "
                                       f"at index {i}")
        piece = units[start:start + max(n, 0)]
        flat[i] = piece if unit == "BYTE" else piece.encode("utf-8")
    return out


_substr_fwd = _string_op("Substr", at_trace=lambda x, pos, length, unit: np.full(
    np.broadcast_shapes(np.shape(x), np.shape(pos), np.shape(length)), b"", dtype=object))(_substr_fwd)


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TensorFlow's argument name
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"strings.substr: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    x = string_tensor(input, "strings.substr")
    pos_t, len_t = to_tensor(pos), to_tensor(len)
    if pos_t.dtype not in (dtypes.int32, dtypes.int64) or len_t.dtype != pos_t.dtype:
        raise InvalidArgumentError("strings.substr: pos and len must be int32 or int64 tensors of one dtype")
    if pos_t._value.shape != len_t._value.shape:
        raise InvalidArgumentError(f"strings.substr: pos and len must have the same shape, got "
                                   f"{list(pos_t._value.shape)} and {list(len_t._value.shape)}")
    return execute("Substr", (x, pos_t, len_t), {"unit": unit})


# ----------------------------------------------------------------- formatting ---
def _pad_spec(width, fill):
    """printf's width flags: ``fill`` "0" pads with zeros, anything else with spaces."""
    return "" if width < 0 else ("0" if fill == "0" else "") + str(width)


def _float_text(value, precision, scientific, shortest, width, fill):
    spec = "e" if scientific else "g" if shortest else "f"
    return format(value, _pad_spec(width, fill) + ("" if precision < 0 else f".{precision}") + spec)


@_string_op("AsString")
def _as_string_fwd(x, precision, scientific, shortest, width, fill):
    x = np.asarray(x)
    kind = x.dtype.kind
    if kind == "b":
        return _map(lambda v: b"true" if v else b"false", x)
    if kind in "iu":
        spec = _pad_spec(width, fill)
        return _map(lambda v: format(int(v), spec).encode("ascii"), x)
    if kind == "f":
        return _map(lambda v: _float_text(float(v), precision, scientific, shortest, width, fill).encode("ascii"), x)
    if kind == "c":
        return _map(lambda v: ("(" + _float_text(float(v.real), precision, scientific, shortest, width, fill) + ","
                               + _float_text(float(v.imag), precision, scientific, shortest, width, fill)
                               + ")").encode("ascii"), x)
    return x.copy()


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    t = to_tensor(input)
    if t.dtype == dtypes.string:
        raise InvalidArgumentError("as_string: the input is already a string tensor; its dtype must be numeric or bool")
    if scientific and shortest:
        raise InvalidArgumentError("as_string: cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise InvalidArgumentError(f"as_string: fill must be at most one character, got {fill!r}")
    if precision > -1 and not t.dtype.is_floating and not t.dtype.is_complex:
        raise InvalidArgumentError("as_string: precision not supported for a non-floating-point dtype")
    return execute("AsString", (t,), {"precision": int(precision), "scientific": bool(scientific),
                                      "shortest": bool(shortest), "width": int(width), "fill": str(fill)})


@_string_op("StringFormat")
def _format_fwd(*inputs, template, placeholder, summarize):
    from .print_ops import format_tensor
    pieces = template.split(placeholder)
    text = pieces[0]
    for value, piece in zip(inputs, pieces[1:]):
        text += format_tensor(value, summarize, quote_strings=True) + piece
    return np.array(text.encode("utf-8"), dtype=object)


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    tensors = tuple(to_tensor(x) for x in inputs)
    if template.count(placeholder) != len(tensors):
        raise InvalidArgumentError(f"strings.format: {len(tensors)} tensors to format into a template with "
                                   f"{template.count(placeholder)} placeholders: {template!r}")
    return execute("StringFormat", tensors, {"template": template, "placeholder": placeholder,
                                             "summarize": -1 if summarize is None else int(summarize)})


# -------------------------------------------------------------- splitting ---
@_string_op("StringSplitFlat", num_outputs=2)
def _split_flat_fwd(x, sep, maxsplit):
    """Splits a vector of strings at ``sep`` (at runs of whitespace when empty): (all pieces, row splits)."""
    sep = _attr_bytes(sep)
    pieces, splits = [], [0]
    for s in np.asarray(x).reshape(-1):
        if sep:
            parts = s.split(sep, maxsplit)        # an empty string is one empty piece
        else:
            parts = s.split(None, maxsplit)    # runs of ASCII whitespace, none empty
        pieces.extend(parts)
        splits.append(len(pieces))
    values = np.empty(len(pieces), dtype=object)
    values[:] = pieces
    return values, np.array(splits, dtype=np.int64)


@_string_op("UnicodeSplitFlat", num_outputs=2)
def _unicode_split_flat_fwd(x, unit):
    """Splits a vector of strings into bytes ("BYTE"), characters ("CHAR") or code points ("CODEPOINT")."""
    pieces, splits = [], [0]
    for s in np.asarray(x).reshape(-1):
        if unit == "BYTE":
            pieces.extend(s[i:i + 1] for i in range(len(s)))
        elif unit == "CHAR":
            pieces.extend(c.encode("utf-8") for c in _utf8(s, "replace"))
        else:
            pieces.extend(ord(c) for c in _utf8(s, "replace"))
        splits.append(len(pieces))
    values = np.array(pieces, dtype=np.int32) if unit == "CODEPOINT" else np.empty(len(pieces), dtype=object)
    if unit != "CODEPOINT":
        values[:] = pieces
    return values, np.array(splits, dtype=np.int64)


def _attr_text(value, what="a string argument"):
    """A str or bytes argument as an attribute: traced graphs store attributes as JSON, so bytes
    that are not UTF-8 travel as surrogate escapes (``_attr_bytes`` restores them exactly)."""
    if isinstance(value, bytes):
        return bytes(value).decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return value
    raise TypeError(f"{what}: expected a str or bytes, got {type(value).__name__}")


def _attr_bytes(text):
    return text.encode("utf-8", "surrogateescape")


for _op_type in _NON_DIFFERENTIABLE:
    no_gradient(_op_type)

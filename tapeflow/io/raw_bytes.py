"""Byte-level tf.io functions: decode_raw, read_file / write_file and web-safe base64.

They run eagerly on the values of their inputs (string tensors are object arrays of ``bytes``) and are
not recorded as ops in a traced graph.
"""
import base64
import binascii
import os

import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant, convert_to_tensor
from ..framework.errors import InvalidArgumentError, NotFoundError

_RAW_DTYPES = (dtypes.uint8, dtypes.int8, dtypes.uint16, dtypes.int16, dtypes.uint32, dtypes.int32, dtypes.uint64,
               dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def string_array(value, what):
    """The object array of ``bytes`` behind a string tensor (or a Python string / list of them)."""
    if isinstance(value, (str, bytes)):
        value = value.encode("utf-8") if isinstance(value, str) else value
        array = np.empty((), dtype=object)
        array[()] = value
        return array
    tensor = convert_to_tensor(value, dtype=dtypes.string) if not hasattr(value, "dtype") else value
    if getattr(tensor, "dtype", None) != dtypes.string:
        raise InvalidArgumentError(f"{what}: expected a string tensor, got dtype {tensor.dtype.name}")
    return np.asarray(tensor.numpy(), dtype=object)


def string_constant(array):
    return constant(np.asarray(array, dtype=object), dtype=dtypes.string)


def _scalar_text(value, what):
    array = string_array(value, what)
    if array.ndim != 0:
        raise InvalidArgumentError(f"{what}: expected a scalar string, got shape {list(array.shape)}")
    return array[()].decode("utf-8")


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Reinterprets the bytes of each string as a vector of ``out_type``: shape ``input.shape + [n]``."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in _RAW_DTYPES:
        raise TypeError(f"decode_raw: out_type must be one of {[d.name for d in _RAW_DTYPES]}, got "
                        f"{out_type.name}")
    strings = string_array(input_bytes, "decode_raw")
    item = np.dtype(out_type._np).newbyteorder("<" if little_endian else ">")
    if fixed_length is not None:
        fixed_length = int(fixed_length)
        if fixed_length < 0 or fixed_length % item.itemsize:
            raise InvalidArgumentError(f"decode_raw: fixed_length ({fixed_length}) must be a non-negative "
                                       f"multiple of the size of {out_type.name} ({item.itemsize})")
        rows = [s[:fixed_length].ljust(fixed_length, b"\0") for s in strings.reshape(-1)]
        width = fixed_length
    else:
        rows = list(strings.reshape(-1))
        width = len(rows[0]) if rows else 0
        for s in rows:
            if len(s) % item.itemsize:
                raise InvalidArgumentError(f"Input to DecodeRaw has length {len(s)} that is not a multiple of "
                                           f"{item.itemsize}, the size of {out_type.name}")
            if len(s) != width:
                raise InvalidArgumentError(f"DecodeRaw requires input strings to all be the same size, but "
                                           f"element 0 has size {width} != {len(s)}")
    values = np.frombuffer(b"".join(rows), dtype=item).astype(out_type._np)
    return constant(values.reshape(strings.shape + (width // item.itemsize,)), dtype=out_type)


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """Web-safe base64 (``-`` and ``_`` for ``+`` and ``/``) of each string, unpadded unless ``pad``."""
    strings = string_array(input, "encode_base64")
    out = np.empty(strings.shape, dtype=object)
    for i, s in enumerate(strings.reshape(-1)):
        encoded = base64.urlsafe_b64encode(s)
        out.reshape(-1)[i] = encoded if pad else encoded.rstrip(b"=")
    return string_constant(out)


def decode_base64(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """Decodes web-safe base64 strings, padded or not."""
    strings = string_array(input, "decode_base64")
    out = np.empty(strings.shape, dtype=object)
    for i, s in enumerate(strings.reshape(-1)):
        body = s.rstrip(b"=")
        if len(body) % 4 == 1 or any(c not in _WEB_SAFE for c in body) or len(s) - len(body) > 2:
            raise InvalidArgumentError(f"Invalid character found in base64: {s[:64]!r}")
        try:
            out.reshape(-1)[i] = base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise InvalidArgumentError(f"Invalid base64 data: {s[:64]!r}") from None
    return string_constant(out)


_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def read_file(filename, name=None):
    """The whole content of a file, as a scalar string tensor."""
    path = _scalar_text(filename, "read_file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    return string_constant(np.array(data, dtype=object))


def write_file(filename, contents, name=None):
    """Writes ``contents`` (a scalar string) to ``filename`` atomically, creating parent directories."""
    path = _scalar_text(filename, "write_file")
    array = string_array(contents, "write_file")
    if array.ndim != 0:
        raise InvalidArgumentError(f"write_file: contents must be a scalar string, got shape {list(array.shape)}")
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "wb") as f:
        f.write(array[()])
    os.replace(temporary, path)

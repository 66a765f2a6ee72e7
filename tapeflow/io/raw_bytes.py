"""Byte-level tf.io functions: decode_raw, web-safe base64, serialize_tensor / parse_tensor (ops of
``tapeflow/ops/bytes_ops.py``, so they run inside tf.function too) and read_file / write_file (eager).

String tensors are object arrays of ``bytes``.
"""
import os

import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant, convert_to_tensor
from ..framework.errors import InvalidArgumentError, NotFoundError
from ..ops import bytes_ops
from ..ops.common import execute
from ..ops.string_ops import string_tensor


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
    if out_type.name not in bytes_ops.RAW_DTYPES:
        raise TypeError(f"decode_raw: out_type must be one of {list(bytes_ops.RAW_DTYPES)}, got {out_type.name}")
    if fixed_length is None:
        fixed_length = -1
    else:
        fixed_length = int(fixed_length)
        if fixed_length < 0 or fixed_length % np.dtype(out_type._np).itemsize:
            raise InvalidArgumentError(f"decode_raw: fixed_length ({fixed_length}) must be a non-negative "
                                       f"multiple of the size of {out_type.name} ({np.dtype(out_type._np).itemsize})")
    return execute("DecodeRaw", (string_tensor(input_bytes, "decode_raw"),),
                   {"out_type": out_type.name, "little_endian": bool(little_endian), "fixed_length": fixed_length})


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """Web-safe base64 (``-`` and ``_`` for ``+`` and ``/``) of each string, unpadded unless ``pad``."""
    return execute("EncodeBase64", (string_tensor(input, "encode_base64"),), {"pad": bool(pad)})


def decode_base64(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """Decodes web-safe base64 strings, padded or not."""
    return execute("DecodeBase64", (string_tensor(input, "decode_base64"),), {})


def serialize_tensor(tensor, name=None):
    """The scalar string of TensorFlow's serialized TensorProto of ``tensor`` (parse it with parse_tensor)."""
    return execute("SerializeTensor", (convert_to_tensor(tensor),), {})


def parse_tensor(serialized, out_type, name=None):
    """The tensor that ``serialize_tensor`` (TensorFlow's or ours) wrote into ``serialized``; its dtype must
    be ``out_type``."""
    return execute("ParseTensor", (string_tensor(serialized, "parse_tensor"),),
                   {"out_type": dtypes.as_dtype(out_type).name})


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

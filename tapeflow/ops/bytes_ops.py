"""tf.io's byte-level ops on string tensors: DecodeRaw, EncodeBase64 / DecodeBase64, SerializeTensor / ParseTensor.

Ops, so that they run inside tf.function and traced datasets as TensorFlow's do. Strings are object arrays of
``bytes``. None is differentiable. The ones that fail on bad data compute a placeholder while tracing (the
trace's inputs may be placeholders) and raise when the graph runs.

SerializeTensor / ParseTensor speak TensorFlow's ``TensorProto`` through the maintained protobuf classes that
tensorboard ships (``tensorboard.compat.proto.tensor_pb2``), imported on first use.
"""
import base64
import binascii

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from .common import no_gradient, register_op

RAW_DTYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float16", "float32",
              "float64", "complex64", "complex128")
WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

def _op(op_type, placeholder):
    """An op that raises on bad data at run time; while tracing, bad data gives ``placeholder(*inputs, **attrs)``."""
    def decorator(forward):
        def at_trace(*inputs, **attrs):
            try:
                return forward(*inputs, **attrs)
            except InvalidArgumentError:
                return placeholder(*inputs, **attrs)
        return register_op(op_type, at_trace=at_trace)(forward)
    return decorator


def _strings_map(fn, strings):
    strings = np.asarray(strings, dtype=object)
    out = np.empty(strings.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(strings.reshape(-1)):
        flat[i] = fn(s)
    return out


# ------------------------------------------------------------------------------------- decode_raw ---
@_op("DecodeRaw", lambda strings, out_type, little_endian, fixed_length: np.zeros(
    np.shape(strings) + (0,), dtypes.as_dtype(out_type)._np))
def _decode_raw_fwd(strings, out_type, little_endian, fixed_length):
    """Each string's bytes as a vector of ``out_type``: shape ``strings.shape + [n]``. ``fixed_length`` -1:
    the strings' own (equal) length; else each is cut or zero-padded to that many bytes."""
    strings = np.asarray(strings, dtype=object)
    item = np.dtype(dtypes.as_dtype(out_type)._np).newbyteorder("<" if little_endian else ">")
    if fixed_length >= 0:
        rows = [s[:fixed_length].ljust(fixed_length, b"\0") for s in strings.reshape(-1)]
        width = fixed_length
    else:
        rows = list(strings.reshape(-1))
        width = len(rows[0]) if rows else 0
        for s in rows:
            if len(s) % item.itemsize:
                raise InvalidArgumentError(f"Input to DecodeRaw has length {len(s)} that is not a multiple of "
                                           f"{item.itemsize}, the size of {out_type}")
            if len(s) != width:
                raise InvalidArgumentError(f"DecodeRaw requires input strings to all be the same size, but "
                                           f"element 0 has size {width} != {len(s)}")
    values = np.frombuffer(b"".join(rows), dtype=item).astype(item.newbyteorder("="))
    return values.reshape(strings.shape + (width // item.itemsize,))


# ----------------------------------------------------------------------------------------- base64 ---
@register_op("EncodeBase64", pure=True)
def _encode_base64_fwd(strings, pad):
    """Web-safe base64 (``-`` and ``_`` for ``+`` and ``/``), unpadded unless ``pad``."""
    def encode(s):
        encoded = base64.urlsafe_b64encode(s)
        return encoded if pad else encoded.rstrip(b"=")
    return _strings_map(encode, strings)


def _decode_base64(s):
    body = s.rstrip(b"=")
    if len(body) % 4 == 1 or any(c not in WEB_SAFE for c in body) or len(s) - len(body) > 2:
        raise InvalidArgumentError(f"Invalid character found in base64: {s[:64]!r}")
    try:
        return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    except binascii.Error:
        raise InvalidArgumentError(f"Invalid base64 data: {s[:64]!r}") from None


@_op("DecodeBase64", lambda strings: np.full(np.shape(strings), b"", dtype=object))
def _decode_base64_fwd(strings):
    """Decodes web-safe base64 strings, padded or not."""
    return _strings_map(_decode_base64, strings)


# ----------------------------------------------------------------------------------- TensorProto ---
def _protos():
    try:
        from tensorboard.compat.proto import tensor_pb2, types_pb2
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError('tf.io.serialize_tensor and parse_tensor need the `tensorboard` package (TensorFlow\'s '
                          'TensorProto): pip install "tapeflow[tfcheckpoint]"') from e
    return tensor_pb2, types_pb2


_PROTO_DTYPES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_HALF": "float16", "DT_INT8": "int8",
                 "DT_INT16": "int16", "DT_INT32": "int32", "DT_INT64": "int64", "DT_UINT8": "uint8",
                 "DT_UINT16": "uint16", "DT_UINT32": "uint32", "DT_UINT64": "uint64", "DT_BOOL": "bool",
                 "DT_COMPLEX64": "complex64", "DT_COMPLEX128": "complex128", "DT_STRING": "string"}
_TYPED_VALUES = {"float32": "float_val", "float64": "double_val", "int8": "int_val", "int16": "int_val",
                 "int32": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
                 "uint32": "uint32_val", "uint64": "uint64_val", "bool": "bool_val", "float16": "half_val",
                 "complex64": "scomplex_val", "complex128": "dcomplex_val", "string": "string_val"}


def _dtype_name(array):
    return "string" if array.dtype == object else array.dtype.name


@register_op("SerializeTensor", pure=True)
def _serialize_tensor_fwd(x):
    """The bytes of TensorFlow's TensorProto of ``x``: numbers as little-endian ``tensor_content``, strings as
    ``string_val``, as tf.io.serialize_tensor writes them."""
    tensor_pb2, types_pb2 = _protos()
    x = np.asarray(x)
    name = _dtype_name(x)
    proto = tensor_pb2.TensorProto(dtype=types_pb2.DataType.Value(_dtype_code(name)))
    proto.tensor_shape.SetInParent()
    for size in x.shape:
        proto.tensor_shape.dim.add(size=size)
    if name == "string":
        proto.string_val.extend(x.reshape(-1).tolist())
    else:
        proto.tensor_content = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("<")).tobytes()
    out = np.empty((), dtype=object)
    out[()] = proto.SerializeToString()
    return out


_PROTO_CODES = {name: code for code, name in _PROTO_DTYPES.items()}


def _dtype_code(name):
    if name not in _PROTO_CODES:
        raise InvalidArgumentError(f"serialize_tensor: tensors of dtype {name} are not supported")
    return _PROTO_CODES[name]


def _numpy_dtype(name):
    return np.dtype(object) if name == "string" else np.dtype(dtypes.as_dtype(name)._np)


@_op("ParseTensor", lambda serialized, out_type: np.zeros((0,), _numpy_dtype(out_type)))
def _parse_tensor_fwd(serialized, out_type):
    """The tensor a serialized TensorProto holds; its dtype must be ``out_type``. Values may come as
    ``tensor_content`` or as typed values, of which the last repeats to fill the shape (none: zeros)."""
    tensor_pb2, types_pb2 = _protos()
    serialized = np.asarray(serialized, dtype=object)
    if serialized.ndim:
        raise InvalidArgumentError(f"Expected `serialized` to be a scalar, got shape: {list(serialized.shape)}")
    data = serialized[()]
    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(data)
    except Exception:  # protobuf's DecodeError and the errors of its C implementation
        raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto ({len(data)} bytes)") from None
    name = _PROTO_DTYPES.get(types_pb2.DataType.Name(proto.dtype) if proto.dtype in types_pb2.DataType.values()
                             else "", None)
    if name is None:
        raise InvalidArgumentError(f"Cannot parse tensor from proto: unsupported dtype {proto.dtype}")
    if name != out_type:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({_short(name)}) and dtype "
                                   f"({_short(out_type)})")
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if any(size < 0 for size in shape):
        raise InvalidArgumentError(f"Cannot parse tensor from proto: negative dimension in shape {list(shape)}")
    count = int(np.prod(shape, dtype=object))
    dtype = _numpy_dtype(name)
    if proto.tensor_content:
        if name == "string" or count * dtype.itemsize != len(proto.tensor_content):
            raise InvalidArgumentError(f"Cannot parse tensor from proto: {len(proto.tensor_content)} bytes of "
                                       f"tensor_content for shape {list(shape)} of {name}")
        return np.frombuffer(proto.tensor_content, dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    return _typed_values(proto, name, dtype, count).reshape(shape)


def _short(name):
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)


def _typed_values(proto, name, dtype, count):
    values = list(getattr(proto, _TYPED_VALUES[name]))
    if name == "float16":      # half_val holds the float16 bit patterns in int32s
        if any(not 0 <= v < 2 ** 16 for v in values):
            raise InvalidArgumentError("Cannot parse tensor from proto: a half_val is not a float16 bit pattern")
        values = np.array(values, np.uint16).view(np.float16)
    elif name.startswith("complex"):   # real and imaginary parts in turn
        if len(values) % 2:
            raise InvalidArgumentError(f"Cannot parse tensor from proto: an odd number ({len(values)}) of "
                                       f"{_TYPED_VALUES[name]} parts")
        values = np.array(values, dtype=dtype.type(0).real.dtype).view(dtype)
    out = np.full(count, b"", dtype=object) if name == "string" else np.zeros(count, dtype)
    n = min(count, len(values))
    if n:
        out[:n] = np.asarray(values[:n], dtype=dtype)
        out[n:] = values[n - 1]          # the last value fills the rest of the shape
    return out


for _op_type in ("DecodeRaw", "EncodeBase64", "DecodeBase64", "SerializeTensor", "ParseTensor"):
    no_gradient(_op_type)

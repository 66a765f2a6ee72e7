"""``tf.io.serialize_tensor`` / ``parse_tensor``: a tensor as the bytes of TensorFlow's TensorProto.

Written by hand on the protobuf wire format (no protobuf runtime needed), with TensorFlow's layout: field 1
the dtype enum, field 2 the shape (one ``dim`` message per dimension, its size in field 1), then the values
as little-endian ``tensor_content`` (field 4, left out when empty) or, for strings, one ``string_val``
(field 8) per element. Parsing checks every length against the bytes at hand before allocating, and refuses
TensorProto value fields it does not read (``float_val`` and friends) by name.
"""
import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant, convert_to_tensor
from ..framework.errors import InvalidArgumentError
from .raw_bytes import string_array

_ENUM = {dtypes.float32: 1, dtypes.float64: 2, dtypes.int32: 3, dtypes.uint8: 4, dtypes.int16: 5, dtypes.int8: 6,
         dtypes.string: 7, dtypes.complex64: 8, dtypes.int64: 9, dtypes.bool: 10, dtypes.uint16: 17,
         dtypes.complex128: 18, dtypes.float16: 19, dtypes.uint32: 22, dtypes.uint64: 23}
_BY_ENUM = {v: k for k, v in _ENUM.items()}
_VALUE_FIELDS = {5: "float_val", 6: "double_val", 7: "int_val", 10: "int64_val", 11: "bool_val", 13: "half_val",
                 9: "scomplex_val", 12: "dcomplex_val", 16: "uint32_val", 17: "uint64_val",
                 14: "resource_handle_val", 15: "variant_val"}


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def serialize_tensor(tensor, name=None):
    """The TensorProto bytes of ``tensor``, as a scalar string tensor (identical to TensorFlow's)."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype not in _ENUM:
        raise InvalidArgumentError(f"serialize_tensor: unsupported dtype {tensor.dtype.name}")
    value = np.asarray(tensor.numpy())
    dims = b"".join(_field(2, _varint(8) + _varint(d) if d else b"") for d in value.shape)
    out = _varint(8) + _varint(_ENUM[tensor.dtype]) + _field(2, dims)
    if tensor.dtype == dtypes.string:
        out += b"".join(_field(8, bytes(s)) for s in value.reshape(-1))
    elif value.size:
        out += _field(4, np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes())
    result = np.empty((), dtype=object)
    result[()] = out
    return constant(result, dtype=dtypes.string)


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def varint(self):
        shift = result = 0
        while True:
            if self.pos >= len(self.data) or shift > 63:
                raise InvalidArgumentError("Could not parse `serialized` as TensorProto: a truncated or overlong "
                                           "varint")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result

    def fields(self):
        """(number, wire type, value): a varint's int or a length-delimited field's bytes."""
        while self.pos < len(self.data):
            key = self.varint()
            number, wire = key >> 3, key & 7
            if wire == 0:
                yield number, wire, self.varint()
            elif wire == 2:
                length = self.varint()
                if length > len(self.data) - self.pos:
                    raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto: field {number} has "
                                               f"length {length}, beyond the {len(self.data) - self.pos} bytes left")
                yield number, wire, self.data[self.pos:self.pos + length]
                self.pos += length
            elif wire in (1, 5):
                size = 8 if wire == 1 else 4
                if size > len(self.data) - self.pos:
                    raise InvalidArgumentError("Could not parse `serialized` as TensorProto: truncated field")
                yield number, wire, self.data[self.pos:self.pos + size]
                self.pos += size
            else:
                raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto: wire type {wire}")


def _shape(data):
    shape = []
    for number, wire, value in _Reader(data).fields():
        if number == 2 and wire == 2:
            size = 0
            for n, w, v in _Reader(value).fields():
                if n == 1 and w == 0:
                    size = v - (1 << 64) if v >= 1 << 63 else v
            if size < 0:
                raise InvalidArgumentError(f"parse_tensor: a dimension of size {size}")
            shape.append(size)
        elif number == 3 and wire == 0 and value:
            raise InvalidArgumentError("parse_tensor: the tensor's shape is of unknown rank")
    return tuple(shape)


def parse_tensor(serialized, out_type, name=None):
    """The tensor whose TensorProto bytes are ``serialized``; its dtype must be ``out_type``."""
    out_type = dtypes.as_dtype(out_type)
    data = string_array(serialized, "parse_tensor")
    if data.ndim != 0:
        raise InvalidArgumentError(f"parse_tensor: serialized must be a scalar string, got shape {list(data.shape)}")
    enum, shape, content, strings = 0, (), b"", []
    for number, wire, value in _Reader(data[()]).fields():
        if number == 1 and wire == 0:
            enum = value
        elif number == 2 and wire == 2:
            shape = _shape(value)
        elif number == 4 and wire == 2:
            content = value
        elif number == 8 and wire == 2:
            strings.append(bytes(value))
        elif number in _VALUE_FIELDS:
            raise InvalidArgumentError(f"parse_tensor: TensorProto field {_VALUE_FIELDS[number]} is not supported "
                                       f"(tapeflow reads tensor_content and string_val)")
    dtype = _BY_ENUM.get(enum)
    if dtype is None:
        raise InvalidArgumentError(f"parse_tensor: unsupported TensorProto dtype enum {enum}")
    if dtype != out_type:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({dtype.name}) and dtype "
                                   f"({out_type.name})")
    count = 1
    for d in shape:
        count *= d
    if dtype == dtypes.string:
        if len(strings) != count:
            raise InvalidArgumentError(f"parse_tensor: shape {list(shape)} needs {count} strings, got {len(strings)}")
        values = np.empty(count, dtype=object)
        values[:] = strings
        return constant(values.reshape(shape), dtype=dtype)
    item = np.dtype(dtype._np).newbyteorder("<")
    if len(content) != count * item.itemsize:
        raise InvalidArgumentError(f"parse_tensor: shape {list(shape)} of {dtype.name} needs "
                                   f"{count * item.itemsize} bytes of tensor_content, got {len(content)}")
    values = np.frombuffer(content, dtype=item).astype(dtype._np)
    return constant(values.reshape(shape), dtype=dtype)

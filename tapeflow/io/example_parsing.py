"""``tf.io.parse_example`` / ``parse_single_example``: serialized ``tf.train.Example`` protos to tensors.

A ``FixedLenFeature`` becomes a dense tensor of its shape (its default when the feature is absent), a
``VarLenFeature`` a ``tf.SparseTensor``, as TensorFlow does. Values come from the feature's list of the
matching kind: float32 from ``float_list``, int64 from ``int64_list``, string from ``bytes_list``.
"""
import collections

import numpy as np

from ..framework import dtypes
from ..framework.conversion import constant
from ..framework.errors import InvalidArgumentError
from ..sparse import SparseTensor
from . import example_protos
from .raw_bytes import string_array

_KINDS = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TYPE_WORDS = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of a fixed number of values, parsed to a dense tensor of ``shape``."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed to a ``tf.SparseTensor``."""


def _check_dtype(key, dtype):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _KINDS:
        raise ValueError(f"Unsupported dtype {dtype.name} for feature {key!r}: use tf.float32, tf.int64 or "
                         f"tf.string.")
    return dtype


class _Fixed:
    def __init__(self, key, spec):
        self.key, self.dtype = key, _check_dtype(key, spec.dtype)
        if spec.shape is None or any(d is None for d in list(spec.shape)):
            raise ValueError(f"FixedLenFeature {key!r} needs a fully defined shape, got {spec.shape}")
        self.shape = tuple(int(d) for d in list(spec.shape))
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.default = None
        if spec.default_value is not None:
            default = np.asarray(spec.default_value.numpy() if hasattr(spec.default_value, "numpy")
                                 else spec.default_value, dtype=self.dtype._np)
            if default.size not in (1, self.size):
                raise ValueError(f"Default value for {key!r} has {default.size} values; its shape "
                                 f"{list(self.shape)} needs {self.size}")
            self.default = np.broadcast_to(default.reshape(-1), (self.size,)).reshape(self.shape)

    def values(self, example, index):
        values = _values(example, self.key, self.dtype)
        if values is None:
            if self.default is None:
                raise InvalidArgumentError(f"Feature: {self.key} (data type: {self.dtype.name}) "
                                           f"is required but could not be found.")
            return self.default
        if len(values) != self.size:
            raise InvalidArgumentError(f"Key: {self.key}, Index: {index}.  Number of {_word(self.dtype)} values "
                                       f"!= expected.  Values size: {len(values)} but output shape: "
                                       f"{list(self.shape)}")
        return np.asarray(values, dtype=self.dtype._np).reshape(self.shape)

    def output(self, rows, batch_shape):
        return constant(np.asarray(rows, dtype=self.dtype._np).reshape(batch_shape + self.shape), dtype=self.dtype)


class _VarLen:
    def __init__(self, key, spec):
        self.key, self.dtype = key, _check_dtype(key, spec.dtype)

    def values(self, example, index):
        values = _values(example, self.key, self.dtype)
        return [] if values is None else values

    def output(self, rows, batch_shape):
        width = max((len(r) for r in rows), default=0)
        indices = [[*([b] if batch_shape else []), j] for b, row in enumerate(rows) for j in range(len(row))]
        flat = np.empty(len(indices), dtype=self.dtype._np)
        flat[:] = [v for row in rows for v in row]
        return SparseTensor(constant(np.asarray(indices, np.int64).reshape(-1, len(batch_shape) + 1)),
                            constant(flat, dtype=self.dtype), constant(np.asarray([*batch_shape, width], np.int64)))


def _word(dtype):
    return _TYPE_WORDS[_KINDS[dtype]]


def _values(example, key, dtype):
    """The values of ``example``'s feature ``key`` (a list), None when absent; a kind mismatch is an error."""
    features = example.features.feature
    if key not in features:
        return None
    feature = features[key]
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    if kind != _KINDS[dtype]:
        raise InvalidArgumentError(f"Key: {key}.  Data types don't match. Data type: {_TYPE_WORDS[kind]} but "
                                   f"expected type: {_word(dtype)}")
    return list(getattr(feature, kind).value)


def _parsers(features):
    if not isinstance(features, dict) or not features:
        raise ValueError(f"`features` must be a non-empty dict of FixedLenFeature / VarLenFeature, got {features!r}")
    parsers = {}
    for key, spec in features.items():
        if isinstance(spec, FixedLenFeature):
            parsers[key] = _Fixed(key, spec)
        elif isinstance(spec, VarLenFeature):
            parsers[key] = _VarLen(key, spec)
        else:
            raise ValueError(f"Unsupported feature type for {key!r}: {type(spec).__name__} (use FixedLenFeature "
                             f"or VarLenFeature)")
    return parsers


def _decode(serialized):
    try:
        return example_protos.Example.FromString(serialized)
    except example_protos.DecodeError:
        raise InvalidArgumentError(f"Could not parse example input, value: {serialized[:64]!r}") from None


def _parse(serialized, features, batched):
    parsers = _parsers(features)
    strings = string_array(serialized, "parse_example")
    if strings.ndim != (1 if batched else 0):
        what = "a vector" if batched else "a scalar"
        raise InvalidArgumentError(f"serialized must be {what} of strings, got shape {list(strings.shape)}")
    examples = [_decode(s) for s in strings.reshape(-1)]
    batch_shape = strings.shape
    out = {}
    for key, parser in parsers.items():
        out[key] = parser.output([parser.values(e, i) for i, e in enumerate(examples)], batch_shape)
    return out


def parse_example(serialized, features, example_names=None, name=None):
    """Parses a vector of serialized Examples: dense features get a leading batch dimension."""
    return _parse(serialized, features, batched=True)


def parse_single_example(serialized, features, example_names=None, name=None):
    """Parses one serialized Example (a scalar string)."""
    return _parse(serialized, features, batched=False)

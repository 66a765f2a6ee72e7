"""tf.io: raw bytes (decode_raw, base64, files, serialized tensors), TFRecord files and tf.train.Example parsing.

The Example functions need the optional ``protobuf`` package and import it on first use.
"""
from .raw_bytes import (decode_base64, decode_raw, encode_base64, parse_tensor, read_file,  # noqa: F401
                        serialize_tensor, write_file)
from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator  # noqa: F401

_LAZY = {"parse_example": "parse_example", "parse_single_example": "parse_single_example",
         "FixedLenFeature": "FixedLenFeature", "VarLenFeature": "VarLenFeature"}


def __getattr__(name):
    if name in _LAZY:
        from . import example_parsing
        value = getattr(example_parsing, _LAZY[name])
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tapeflow.io' has no attribute {name!r}")

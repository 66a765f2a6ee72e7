"""tf.io.serialize_tensor / parse_tensor: the same bytes as TensorFlow 2.21 (tests/fixtures/tf_io)."""
import os

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "tf_io")
CASES = [line.split(" ", 1) for line in open(os.path.join(HERE, "serialize_tensor.txt")).read().splitlines()]


def _tensor(dtype, shape):
    n = int(np.prod(shape))
    if dtype == "string":
        if shape == ():
            return tf.constant(b"hi")
        values = np.empty(n, dtype=object)
        values[:] = [b"x%d" % i for i in range(n)]
        return tf.constant(values.reshape(shape), dtype=tf.string)
    return tf.cast(tf.reshape(tf.range(1, n + 1, dtype=tf.float64), shape), getattr(tf, dtype))


@pytest.mark.parametrize("dtype,rest", CASES)
def test_serialize_tensor_bytes_match_tensorflow_and_parse_back(dtype, rest):
    shape_text, hex_bytes = rest.rsplit(" ", 1)
    shape = tuple(int(d) for d in shape_text.strip("()").split(",") if d.strip())
    tensor = _tensor(dtype, shape)
    assert tf.io.serialize_tensor(tensor).numpy().hex() == hex_bytes
    parsed = tf.io.parse_tensor(tf.constant(bytes.fromhex(hex_bytes)), getattr(tf, dtype))
    assert parsed.dtype == tensor.dtype and parsed.shape == tensor.shape
    assert np.array_equal(parsed.numpy(), tensor.numpy())


def test_parse_tensor_refuses_damaged_or_mismatched_bytes():
    good = bytes.fromhex(dict((f"{d} {r.rsplit(' ', 1)[0]}", r.rsplit(" ", 1)[1]) for d, r in CASES)["int32 (2, 3)"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Type mismatch.*int32.*float32"):
        tf.io.parse_tensor(good, tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="length 24, beyond"):
        tf.io.parse_tensor(good[:-4], tf.int32)
    dim = bytes.fromhex("08") + bytes.fromhex("8080808080808001")       # size 2**49
    shape = b"\x12" + bytes([len(dim)]) + dim
    lying_shape = b"\x08\x03\x12" + bytes([len(shape)]) + shape + good[12:]   # with 24 bytes of content
    with pytest.raises(tf.errors.InvalidArgumentError, match="needs .* bytes of tensor_content, got 24"):
        tf.io.parse_tensor(lying_shape, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="float_val"):
        tf.io.parse_tensor(bytes.fromhex("080112002d0000803f"), tf.float32)

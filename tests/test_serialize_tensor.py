"""tf.io.serialize_tensor / parse_tensor against TensorFlow 2.21 (tests/fixtures/tf_io/serialize_tensor.json,
written by make_serialize_fixtures.py there), and tf.io's byte ops inside tf.function."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import keras_scenarios as S  # noqa: E402
from tapeflow.framework.errors import InvalidArgumentError

REF = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "tf_io", "serialize_tensor.json")))
TENSORS = S.SERIALIZED_TENSORS


@pytest.mark.parametrize("key", sorted(TENSORS))
def test_serialized_bytes_equal_tensorflows_and_parse_back(key):
    values, dtype = TENSORS[key]
    t = tf.constant(values, dtype=dtype)
    data = tf.io.serialize_tensor(t)
    assert data.shape == () and data.dtype == tf.string
    assert data.numpy().hex() == REF["serialized"][key]
    back = tf.io.parse_tensor(bytes.fromhex(REF["serialized"][key]), dtype)
    assert back.dtype == t.dtype and back.shape == t.shape
    assert np.array_equal(back.numpy(), t.numpy())


@pytest.mark.parametrize("key", sorted(REF["typed"]))
def test_typed_value_protos_parse_as_tensorflow_does(key):
    case = REF["typed"][key]
    out = tf.io.parse_tensor(bytes.fromhex(case["proto"]), case["out_type"]).numpy()
    assert list(out.shape) == case["shape"]
    flat = out.reshape(-1)
    if case["out_type"] == "string":
        assert [v.hex() for v in flat] == case["values"]
    elif case["out_type"].startswith("complex"):
        assert [[v.real, v.imag] for v in flat] == case["values"]
    else:
        assert flat.tolist() == case["values"]


@pytest.mark.parametrize("key", sorted(REF["errors"]))
def test_bad_protos_raise_invalid_argument(key):
    case = REF["errors"][key]
    with pytest.raises(InvalidArgumentError, match=case["message"][:20].replace("(", r"\(")):
        tf.io.parse_tensor(bytes.fromhex(case["serialized"]), case["out_type"])


def test_parse_tensor_wants_a_scalar():
    data = tf.io.serialize_tensor(tf.constant([1.0]))
    with pytest.raises(InvalidArgumentError, match="scalar"):
        tf.io.parse_tensor(tf.stack([data, data]), tf.float32)


def test_random_bytes_never_escape_as_anything_but_invalid_argument():
    rng = np.random.default_rng(0)
    good = bytes.fromhex(REF["serialized"]["matrix_float"])
    for _ in range(300):
        data = bytearray(good)
        for i in rng.integers(0, len(data), rng.integers(1, 4)):
            data[i] = int(rng.integers(0, 256))
        try:
            out = tf.io.parse_tensor(bytes(data), tf.float32)
        except InvalidArgumentError:
            continue
        assert out.dtype == tf.float32


def test_byte_ops_run_inside_tf_function():
    @tf.function
    def roundtrip(x):
        data = tf.io.serialize_tensor(x)
        return tf.io.parse_tensor(data, tf.float32), tf.io.decode_base64(tf.io.encode_base64(data))

    x = tf.constant([[1.0, -2.0]])
    back, data = roundtrip(x)
    assert np.array_equal(back.numpy(), x.numpy())
    assert data.numpy() == tf.io.serialize_tensor(x).numpy()
    y = tf.constant([[3.0, 4.0]])
    assert np.array_equal(roundtrip(y)[0].numpy(), y.numpy())        # the graph runs again on new data

    @tf.function
    def decode(s):
        return tf.io.decode_raw(s, tf.int16)

    assert decode(tf.constant(b"\x01\x00\x02\x00")).numpy().tolist() == [1, 2]
    assert decode(tf.constant(b"\x05\x00\x07\x00")).numpy().tolist() == [5, 7]
    with pytest.raises(InvalidArgumentError, match="multiple of 2"):
        decode(tf.constant(b"\x05\x00\x07"))


def test_parse_tensor_in_a_traced_graph_raises_on_bad_data_at_run_time():
    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def parse(s):
        return tf.io.parse_tensor(s, tf.float32)

    good = tf.io.serialize_tensor(tf.constant([2.5]))
    assert parse(good).numpy().tolist() == [2.5]
    with pytest.raises(InvalidArgumentError, match="Type mismatch"):
        parse(tf.io.serialize_tensor(tf.constant([2.5], tf.float64)))


def test_dataset_of_serialized_tensors_parses_in_map():
    tensors = [np.arange(n, dtype=np.float32) for n in (1, 3, 2)]
    serialized = [tf.io.serialize_tensor(t).numpy() for t in tensors]
    ds = tf.data.Dataset.from_tensor_slices(serialized).map(lambda s: tf.io.parse_tensor(s, tf.float32))
    assert [a.tolist() for a in ds.as_numpy_iterator()] == [t.tolist() for t in tensors]


def test_a_bytes_scalar_keeps_its_trailing_nul_bytes():
    # numpy's bytes dtype drops trailing NULs; TensorFlow keeps them (serialized protos often end in one)
    assert tf.strings.length(b"a\x00\x00").numpy() == 3
    assert tf.constant(b"a\x00", tf.string).numpy() == b"a\x00"
    assert tf.io.decode_raw(b"\x01\x00", tf.uint8).numpy().tolist() == [1, 0]


def test_a_saved_model_with_byte_ops_reloads_and_runs(tmp_path):
    class Parser(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def parse(self, s):
            return tf.io.parse_tensor(tf.io.decode_base64(s), tf.float32)

    tf.saved_model.save(Parser(), str(tmp_path / "parser"))
    loaded = tf.saved_model.load(str(tmp_path / "parser"))
    data = tf.io.encode_base64(tf.io.serialize_tensor(tf.constant([1.0, 2.0])))
    assert loaded.parse(data).numpy().tolist() == [1.0, 2.0]


def test_typed_values_that_cannot_be_their_dtype_raise_invalid_argument():
    from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2, types_pb2

    def proto(dtype, size, **values):
        shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=size)])
        return tensor_pb2.TensorProto(dtype=dtype, tensor_shape=shape, **values).SerializeToString()

    with pytest.raises(InvalidArgumentError, match="odd number"):
        tf.io.parse_tensor(proto(types_pb2.DT_COMPLEX64, 2, scomplex_val=[1.0, 2.0, 3.0]), tf.complex64)
    for bits in (70000, -1):
        with pytest.raises(InvalidArgumentError, match="float16 bit pattern"):
            tf.io.parse_tensor(proto(types_pb2.DT_HALF, 2, half_val=[bits]), tf.float16)
    assert tf.io.parse_tensor(proto(types_pb2.DT_FLOAT, 0, float_val=[1.0]), tf.float32).shape == (0,)

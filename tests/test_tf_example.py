"""tf.train.Example messages and tf.io.parse_example against TensorFlow 2.21 (tests/fixtures/tf_io)."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "tf_io")
REF = json.load(open(os.path.join(HERE, "reference.json")))
SPEC = {"id": tf.io.FixedLenFeature([2], tf.int64),
        "score": tf.io.FixedLenFeature([2], tf.float32),
        "name": tf.io.VarLenFeature(tf.string),
        "missing": tf.io.FixedLenFeature([], tf.int64, default_value=7)}


def example(i):
    return tf.train.Example(features=tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, -i * 1000])),
        "score": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5 * i, 1.25])),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n%d" % i] * i)),
    }))


def test_examples_serialize_to_tensorflows_bytes():
    # A map's order on the wire is random per process in protobuf's upb runtime (TensorFlow's too), so the
    # byte comparison uses deterministic=True (sorted keys); TF's own bytes parse back to equal messages.
    for i in range(3):
        assert example(i).SerializeToString(deterministic=True).hex() == REF["examples_deterministic_hex"][i]
        assert tf.train.Example.FromString(bytes.fromhex(REF["examples_hex"][i])) == example(i)


def test_a_tensorflow_written_example_file_reads_and_tapeflow_writes_it_identically(tmp_path):
    path = str(tmp_path / "examples.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(3):
            writer.write(bytes.fromhex(REF["examples_hex"][i]))
    assert open(path, "rb").read() == open(os.path.join(HERE, "examples.tfrecord"), "rb").read()
    records = [r.numpy() for r in tf.data.TFRecordDataset(os.path.join(HERE, "examples.tfrecord"))]
    assert [tf.train.Example.FromString(r) for r in records] == [example(i) for i in range(3)]


def test_parse_example_matches_tensorflow():
    records = tf.constant([r.numpy() for r in tf.data.TFRecordDataset(os.path.join(HERE, "examples.tfrecord"))])
    batch = tf.io.parse_example(records, SPEC)
    ref = REF["parse_example"]
    assert batch["id"].dtype == tf.int64 and batch["id"].numpy().tolist() == ref["id"]
    assert batch["score"].dtype == tf.float32 and batch["score"].numpy().tolist() == ref["score"]
    assert batch["missing"].numpy().tolist() == ref["missing"]
    assert isinstance(batch["name"], tf.SparseTensor)
    assert batch["name"].indices.numpy().tolist() == ref["name_indices"]
    assert [v.decode() for v in batch["name"].values.numpy()] == ref["name_values"]
    assert batch["name"].dense_shape.numpy().tolist() == ref["name_shape"]


def test_parse_single_example_in_a_dataset_map():
    single = tf.io.parse_single_example(example(2).SerializeToString(), SPEC)
    assert single["name"].indices.numpy().tolist() == REF["parse_single"]["name_indices"]
    assert single["name"].dense_shape.numpy().tolist() == REF["parse_single"]["name_shape"]
    assert single["missing"].shape == () and int(single["missing"]) == 7
    dense = {"id": SPEC["id"], "score": SPEC["score"]}
    parsed = tf.data.TFRecordDataset(os.path.join(HERE, "examples.tfrecord")).map(
        lambda x: tf.io.parse_single_example(x, dense))
    assert [e["id"].numpy().tolist() for e in parsed] == REF["parse_example"]["id"]


def test_default_values_broadcast_to_the_shape():
    out = tf.io.parse_single_example(example(0).SerializeToString(),
                                     {"a": tf.io.FixedLenFeature([2, 2], tf.float32, default_value=1.5),
                                      "b": tf.io.FixedLenFeature([2], tf.string, default_value=[b"x", b"y"])})
    assert out["a"].numpy().tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert list(out["b"].numpy()) == [b"x", b"y"]


@pytest.mark.parametrize("case,spec", [
    ("missing_required", {"nope": tf.io.FixedLenFeature([], tf.int64)}),
    ("wrong_size", {"id": tf.io.FixedLenFeature([3], tf.int64)}),
    ("wrong_type", {"id": tf.io.FixedLenFeature([2], tf.float32)})])
def test_bad_examples_raise_invalid_argument_as_tensorflow(case, spec):
    kind, message = REF["error/" + case]
    assert kind == "InvalidArgumentError"
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.io.parse_single_example(example(1).SerializeToString(), spec)
    key_part = message.split("}} ")[1].split(".")[0]     # "Feature: nope (data type: int64) is required ..." / "Key: id"
    assert key_part.split(",")[0] in str(info.value)
    if case != "wrong_size":     # TF's wording for a wrong count is an internal one; ours names the counts
        assert message.split("}} ")[1].split(" [Op:")[0] in str(info.value)


def test_undecodable_bytes_and_bad_specs_are_refused():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example input"):
        tf.io.parse_single_example(b"\xff\xff\xff", {"a": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(ValueError, match="Unsupported dtype"):
        tf.io.parse_single_example(b"", {"a": tf.io.FixedLenFeature([], tf.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="vector"):
        tf.io.parse_example(b"", {"a": tf.io.VarLenFeature(tf.int64)})
    empty = tf.io.parse_example(tf.constant([b"", b""]), {"a": tf.io.VarLenFeature(tf.int64)})["a"]
    assert empty.indices.shape == (0, 2) and empty.dense_shape.numpy().tolist() == [2, 0]
    assert np.asarray(empty.values.numpy()).dtype == np.int64


def test_protobuf_loads_only_when_examples_are_used():
    import subprocess
    import sys
    code = ("import sys, tapeflow as tf; tf.io.decode_raw; tf.data.TFRecordDataset; tf.train.Checkpoint; "
            "assert 'google.protobuf' not in sys.modules; tf.train.Example; "
            "assert 'google.protobuf' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)

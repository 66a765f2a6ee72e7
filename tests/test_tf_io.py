"""tf.io byte functions and TFRecord files against TensorFlow 2.21's outputs (tests/fixtures/tf_io)."""
import gzip
import json
import os
import struct

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "tf_io")
REF = json.load(open(os.path.join(HERE, "reference.json")))
RECORDS = [b"", b"a", b"hello tfrecord", bytes(range(256)) * 3]
RAW = bytes(range(1, 25))


@pytest.mark.parametrize("key", sorted(k for k in REF if k.startswith("decode_raw/") and k.count("/") == 2))
def test_decode_raw_matches_tensorflow(key):
    _, name, little = key.split("/")
    out = tf.io.decode_raw(tf.constant([RAW, RAW[::-1]]), getattr(tf, name), little_endian=little == "True")
    value = out.numpy()
    assert out.dtype == getattr(tf, name)
    assert (str(value.dtype), list(value.shape), value.tobytes().hex()) == (
        REF[key]["dtype"], REF[key]["shape"], REF[key]["hex"])


def test_decode_raw_fixed_length_pads_and_truncates():
    out = tf.io.decode_raw(tf.constant([b"\x01\x02\x03", b"\x04"]), tf.uint8, fixed_length=4)
    assert out.numpy().tolist() == REF["decode_raw/fixed"]
    assert tf.io.decode_raw(tf.constant(b"\x01\x02\x03\x04\x05"), tf.uint8, fixed_length=2).numpy().tolist() == [1, 2]


def test_decode_raw_refuses_bad_lengths():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple of 4"):
        tf.io.decode_raw(tf.constant(b"abc"), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        tf.io.decode_raw(tf.constant([b"ab", b"abcd"]), tf.int16)
    with pytest.raises(TypeError, match="out_type"):
        tf.io.decode_raw(tf.constant(b"ab"), tf.string)


def test_base64_is_web_safe_and_matches_tensorflow():
    values = [b"", b"a", b"ab", b"abc", b"\xff\xfe\xfd?>", bytes(range(40))]
    assert [v.decode() for v in tf.io.encode_base64(tf.constant(values)).numpy()] == REF["base64"]
    assert [v.decode() for v in tf.io.encode_base64(tf.constant(values), pad=True).numpy()] == REF["base64_pad"]
    assert list(tf.io.decode_base64(tf.constant(REF["base64"])).numpy()) == values
    assert list(tf.io.decode_base64(tf.constant(REF["base64_pad"])).numpy()) == values
    with pytest.raises(tf.errors.InvalidArgumentError, match="base64"):
        tf.io.decode_base64(tf.constant(b"ab+/"))     # the standard alphabet is not web-safe


def test_write_file_then_read_file(tmp_path):
    path = str(tmp_path / "sub" / "blob.bin")
    tf.io.write_file(path, tf.constant(bytes(range(256))))
    out = tf.io.read_file(path)
    assert out.dtype == tf.string and out.numpy() == bytes(range(256))
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.read_file(str(tmp_path / "missing"))


@pytest.mark.parametrize("name,compression", [("plain", None), ("gzip", "GZIP"), ("zlib", "ZLIB")])
def test_tfrecord_files_of_tensorflow_read_and_write_identically(tmp_path, name, compression):
    reference = os.path.join(HERE, f"records_{name}.tfrecord")
    dataset = tf.data.TFRecordDataset(reference, compression_type=compression)
    assert dataset.element_spec == tf.TensorSpec((), tf.string)
    assert [r.numpy() for r in dataset] == RECORDS
    path = str(tmp_path / "out.tfrecord")
    with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type=compression)) as writer:
        for record in RECORDS:
            writer.write(record)
    assert open(path, "rb").read() == open(reference, "rb").read()


def test_tfrecord_dataset_reads_several_files_in_order(tmp_path):
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"{i}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1], "GZIP") as writer:
            writer.write(b"file%d" % i)
            writer.flush()
            writer.write(tf.constant(b"second"))
    got = [r.numpy() for r in tf.data.TFRecordDataset(paths, compression_type="GZIP")]
    assert got == [b"file0", b"second", b"file1", b"second"]


def _damaged(tmp_path, data):
    path = str(tmp_path / "damaged.tfrecord")
    open(path, "wb").write(data)
    return path


def test_a_flipped_bit_is_refused_naming_file_and_record_offset(tmp_path):
    data = bytearray(open(os.path.join(HERE, "records_plain.tfrecord"), "rb").read())
    data[40] ^= 1                       # TensorFlow: DataLossError "corrupted record at 33"
    path = _damaged(tmp_path, bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=f"{path}: corrupted record at 33"):
        list(tf.data.TFRecordDataset(path))
    data[40] ^= 1
    data[50] ^= 4                       # inside the third record's data
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 33 .*data's CRC"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, bytes(data))))


def test_truncated_and_lying_lengths_are_refused_without_allocating(tmp_path):
    plain = open(os.path.join(HERE, "records_plain.tfrecord"), "rb").read()
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 33"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, plain[:60])))
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 33"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, plain[:37])))
    from tapeflow.io.tfrecord import _crc
    huge = struct.pack("<Q", 1 << 60)             # a valid CRC over an absurd length
    lying = huge + struct.pack("<I", _crc(huge)) + b"x" * 8
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, lying)))
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, gzip.compress(lying)), compression_type="GZIP"))
    with pytest.raises(tf.errors.DataLossError, match="compressed stream"):
        list(tf.data.TFRecordDataset(_damaged(tmp_path, gzip.compress(plain)[:-30]), compression_type="GZIP"))


def test_tfrecord_errors_for_missing_files_and_bad_compression(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.data.TFRecordDataset(str(tmp_path / "nope.tfrecord")))
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression_type"):
        tf.data.TFRecordDataset("x", compression_type="BZIP2")
    writer = tf.io.TFRecordWriter(str(tmp_path / "w.tfrecord"))
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(b"x")
    assert np.asarray(list(tf.io.tf_record_iterator(str(tmp_path / "w.tfrecord")))).size == 0

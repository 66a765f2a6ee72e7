"""Damaged and hostile TensorFlow checkpoints: every block handle, varint, entry, offset, size, checksum and
object-graph reference is checked before use; each problem is a FileFormatError naming the file, the key and
what is wrong, and a failed restore changes nothing. A bounded fuzz run (bit flips, overwrites and
truncations of a checkpoint TensorFlow wrote, some with checksums fixed up) ends in a clear error or a
restore, never anything else; it runs in subprocesses so that a crash or a hang fails the test."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError, OversizedContentError, UnsupportedContentError
from tapeflow.saving.crc32c import crc32c, masked
from tapeflow.saving.tf_bundle_protos import BundleHeaderProto, TrackableObjectGraph, types_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from tf_bundle_files import MODULE, block, read_bundle, table, write_bundle  # noqa: E402

W = "net/w/.ATTRIBUTES/VARIABLE_VALUE"
FLAGS = "net/table/c.Sd/.ATTRIBUTES/VARIABLE_VALUE"


def live_objects():
    net = tf.Module()
    net.w = tf.Variable(np.full((2, 3), 7.0, np.float32))
    net.sub = tf.Module()
    net.sub.b = tf.Variable(np.full(2, 7.0))
    net.vs = [tf.Variable(7, dtype=tf.int32), tf.Variable(np.int64(7))]
    net.table = {"a.b": tf.Variable(np.full(4, 7, np.float16)), "c/d": tf.Variable([False, True, False])}
    checkpoint = tf.train.Checkpoint(net=net, step=tf.Variable(np.int64(7)))
    variables = [net.w, net.sub.b, *net.vs, *net.table.values(), checkpoint.step, checkpoint.save_counter]
    return checkpoint, variables


def assert_refused(prefix, match, error=FileFormatError):
    """Restoring ``prefix`` raises ``error`` matching ``match`` and naming the file; nothing changes."""
    checkpoint, variables = live_objects()
    before = [np.array(v) for v in variables]
    with pytest.raises(error, match=match) as info:
        checkpoint.restore(prefix)
    assert os.path.basename(prefix) in str(info.value)
    for variable, value in zip(variables, before):
        np.testing.assert_array_equal(np.array(variable), value)


def test_crc32c_is_castagnoli():
    assert crc32c(b"123456789") == 0xE3069283        # the standard check value of CRC-32C
    assert crc32c(b"6789", crc32c(b"12345")) == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA            # RFC 3720's test vector: 32 zero bytes
    assert masked(0) == 0xA282EAD8

    def bitwise(data):     # the definition: one bit at a time, reflected polynomial 0x82F63B78
        crc = 0xFFFFFFFF
        for byte in data:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        return crc ^ 0xFFFFFFFF
    rng = np.random.default_rng(0)
    for n in [*range(20), 63, 64, 65, 1001]:     # every tail length of the eight-byte steps
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert crc32c(data) == bitwise(data)
        assert crc32c(data[n // 3:], crc32c(data[:n // 3])) == bitwise(data)


def test_rewritten_with_many_blocks_and_shared_key_prefixes_restores_the_same(tmp_path):
    tensors, graph = read_bundle()
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph)
    checkpoint, variables = live_objects()
    checkpoint.restore(prefix).assert_consumed()
    expected, _ = read_bundle()
    np.testing.assert_array_equal(np.array(checkpoint.net.w), expected[W])
    assert tf.train.list_variables(prefix) == tf.train.list_variables(MODULE)


def set_dims(entry, dims):
    del entry.shape.dim[:]
    for size in dims:
        entry.shape.dim.add(size=size)


def edit_entry(target, change):
    def edit(key, entry):
        if key == target:
            change(entry)
    return edit


@pytest.mark.parametrize("key, change, match, error", [
    (W, lambda e: setattr(e, "offset", 10 ** 6), r"'net/w/.*' \(bytes 1000000\.\.1000024\) lies outside its data "
     r"file 'ckpt\.data-00000-of-00001' of \d+ bytes", FileFormatError),
    (W, lambda e: setattr(e, "offset", -8), "has a negative offset", FileFormatError),
    (W, lambda e: setattr(e, "size", 28), r"'net/w/.*' declares 28 bytes, but a float32 tensor of shape \[2, 3\] "
     "has 24", FileFormatError),
    (W, lambda e: set_dims(e, [1 << 40, 1 << 40]), r"declares 24 bytes, but a float32 tensor of shape "
     r"\[1099511627776, 1099511627776\] has", FileFormatError),
    (W, lambda e: set_dims(e, [-1, 3]), "unknown or negative dimension", FileFormatError),
    (W, lambda e: setattr(e.shape, "unknown_rank", True), "unknown or negative dimension", FileFormatError),
    (W, lambda e: setattr(e, "dtype", types_pb2.DT_RESOURCE), r"'net/w/.*' holds DT_RESOURCE, not the numbers",
     UnsupportedContentError),
    (W, lambda e: setattr(e, "dtype", 4321), r"holds 4321, not the numbers", UnsupportedContentError),
    (W, lambda e: e.slices.append(b"\x0a\x00"), "a slice of a partitioned variable", UnsupportedContentError),
    (W, lambda e: setattr(e, "shard_id", 3), r"lies in shard 3, but the bundle has 1 shard", FileFormatError),
    (W, lambda e: setattr(e, "crc32c", e.crc32c ^ 1), r"the data of 'net/w/.*' is damaged", FileFormatError),
    ("_CHECKPOINTABLE_OBJECT_GRAPH", lambda e: set_dims(e, [2]), "should be a scalar string tensor",
     FileFormatError),
    ("_CHECKPOINTABLE_OBJECT_GRAPH", lambda e: setattr(e, "dtype", types_pb2.DT_FLOAT),
     r"'_CHECKPOINTABLE_OBJECT_GRAPH' declares \d+ bytes, but a float32 tensor of shape \[\] has 4", FileFormatError),
    ("_CHECKPOINTABLE_OBJECT_GRAPH", lambda e: setattr(e, "crc32c", 0), "data of '_CHECKPOINTABLE.*' is damaged",
     FileFormatError),
])
def test_hostile_entries_are_refused(tmp_path, key, change, match, error):
    tensors, graph = read_bundle()
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph, edit=edit_entry(key, change))
    assert_refused(prefix, match, error)


def test_bool_tensor_with_other_bytes_is_refused(tmp_path):
    tensors, graph = read_bundle()
    tensors[FLAGS] = np.array([1, 2, 0], np.uint8)
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph, edit=edit_entry(FLAGS, lambda e: setattr(e, "dtype", types_pb2.DT_BOOL)))
    assert_refused(prefix, r"the bool tensor 'net/table/c\.Sd/.*' holds bytes other than 0 and 1")


@pytest.mark.parametrize("header, match, error", [
    (BundleHeaderProto(num_shards=1, endianness=1), "stored big-endian", UnsupportedContentError),
    (BundleHeaderProto(num_shards=0), "declares 0 data shards", FileFormatError),
    (BundleHeaderProto(num_shards=-3), "declares -3 data shards", FileFormatError),
    (BundleHeaderProto(num_shards=1, version={"producer": 9, "min_consumer": 7}),
     "for readers of version >= 7; this reader is version 1", UnsupportedContentError),
    (BundleHeaderProto(num_shards=1, version={"producer": 1, "bad_consumers": [1]}), "this reader is version 1",
     UnsupportedContentError),
])
def test_hostile_headers_are_refused(tmp_path, header, match, error):
    tensors, graph = read_bundle()
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph, header=header)
    assert_refused(prefix, match, error)


def edited_graph(change):
    tensors, serialized = read_bundle()
    graph = TrackableObjectGraph.FromString(serialized)
    change(graph)
    return tensors, graph.SerializeToString()


def add_child(graph, node, child_id, name):
    child = graph.nodes[node].children.add()
    child.node_id, child.local_name = child_id, name


@pytest.mark.parametrize("change, match", [
    (lambda g: add_child(g, 1, 10 ** 6, "ghost"), r"node 1 of the object graph has a malformed child \('ghost' -> "
     r"node 1000000"),
    (lambda g: add_child(g, 1, 2, "w"), "node 1 of the object graph has two children named 'w'"),
    (lambda g: add_child(g, 1, 2, ""), "malformed child"),
    (lambda g: setattr(g.nodes[2].attributes[0], "checkpoint_key", "../../etc/passwd"),
     r"names the value '\.\./\.\./etc/passwd', which is not in the index"),
    (lambda g: g.ClearField("nodes"), "the object graph has no nodes"),
])
def test_hostile_object_graphs_are_refused(tmp_path, change, match):
    tensors, graph = edited_graph(change)
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph)
    assert_refused(prefix, match)


def test_object_graph_larger_than_its_tensors_justify_is_refused_before_decoding(tmp_path):
    tensors, graph = read_bundle()
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph + b"\x22\x00" * (1 << 20))   # a valid proto: empty unknown fields
    assert_refused(prefix, r"the object graph takes \d+ bytes, more than the 1085440 that a checkpoint of 9 "
                   "tensors is allowed", OversizedContentError)


def test_cyclic_object_graph_restores_without_looping(tmp_path):
    tensors, graph = edited_graph(lambda g: add_child(g, 4, 0, "loop"))   # net/sub/loop -> the root
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph)
    checkpoint, _ = live_objects()
    checkpoint.restore(prefix).assert_consumed()
    np.testing.assert_array_equal(np.array(checkpoint.net.w), tensors[W])


def test_a_graph_mapping_a_key_to_a_tensor_of_another_shape_changes_nothing(tmp_path):
    def swap(graph):
        w_node = next(n for n in graph.nodes if n.attributes and n.attributes[0].checkpoint_key == W)
        w_node.attributes[0].checkpoint_key = "net/sub/b/.ATTRIBUTES/VARIABLE_VALUE"
    tensors, graph = edited_graph(swap)
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph)
    assert_refused(prefix, r"net\.w: the variable has shape \(2, 3\), the checkpoint has shape \(2,\)")


def test_compressed_blocks_and_missing_files_are_refused(tmp_path):
    tensors, graph = read_bundle()
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, tensors, graph, compression=1)
    assert_refused(prefix, "is compressed \\(snappy\\); tapeflow reads uncompressed tables only",
                   UnsupportedContentError)
    write_bundle(prefix, tensors, graph)
    os.remove(prefix + ".data-00000-of-00001")
    assert_refused(prefix, r"its data file 'ckpt\.data-00000-of-00001' is missing")


def test_name_based_checkpoint_without_object_graph_is_refused(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with open(prefix + ".index", "wb") as f:
        f.write(table([(b"", BundleHeaderProto(num_shards=1).SerializeToString())]))
    assert_refused(prefix, "it has no object graph", UnsupportedContentError)


def raw_table(entries_block):
    """A one-data-block table around the given block contents (checksums valid)."""
    out = bytearray()

    def put(contents):
        offset = len(out)
        out.extend(contents + b"\x00" + masked(crc32c(contents + b"\x00")).to_bytes(4, "little"))
        return bytes([offset, len(contents)]) if offset < 128 and len(contents) < 128 else None
    data = put(entries_block)
    meta = put(block([]))
    index = put(block([(b"\xff", data)], restart_interval=1))
    handles = meta + index
    return bytes(out) + handles + bytes(40 - len(handles)) + (0xDB4775248B80FB57).to_bytes(8, "little")


@pytest.mark.parametrize("contents, match", [
    (block([(b"b", b"1"), (b"a", b"2")]), r"the key b'a' is not after b'b' \(keys must be sorted and unique\)"),
    (block([(b"a", b"1"), (b"a", b"2")]), "is not after"),
    (b"\x05\x01\x01xy" + (0).to_bytes(4, "little") + (1).to_bytes(4, "little"), "shares 5 bytes with a key of 0"),
    (b"\x00\x01\x01ab\x00\x09\x01xy" + (0).to_bytes(4, "little") + (1).to_bytes(4, "little"),
     "runs past the end of the block"),
    (b"\x00\x01\x01ab" + (2).to_bytes(4, "little") + (1).to_bytes(4, "little"),
     "restart points that are not at entries"),
    (b"\x00\x01\x01ab" + (0).to_bytes(4, "little") + (1000).to_bytes(4, "little"), "declares 1000 restart points"),
    (b"\x00\x01\xff\xff\xff\xff\xff\xff\x01ab" + (0).to_bytes(4, "little") + (1).to_bytes(4, "little"),
     "longer than 32 bits"),
    (b"\x01", "too short"),
])
def test_malformed_blocks_are_refused(tmp_path, contents, match):
    prefix = str(tmp_path / "ckpt")
    with open(prefix + ".index", "wb") as f:
        f.write(raw_table(contents))
    assert_refused(prefix, match)


def test_block_handles_outside_the_file_are_refused(tmp_path):
    prefix = str(tmp_path / "ckpt")
    index = bytearray(open(MODULE + ".index", "rb").read())
    footer = len(index) - 48
    index[footer:footer + 40] = b"\xff\xff\xff\xff\x0f\x05" + bytes(34)   # metaindex at 2**32 - 1
    with open(prefix + ".index", "wb") as f:
        f.write(index)
    assert_refused(prefix, r"the metaindex block \(bytes 4294967295\.\..*\) lies outside the file")
    index[footer:footer + 40] = b"\xff" * 40
    with open(prefix + ".index", "wb") as f:
        f.write(index)
    assert_refused(prefix, "varint")


def test_protobuf_and_tensorboard_stay_out_of_import_tapeflow_and_their_absence_is_explained():
    code = ("import sys, tapeflow as tf; tf.train.Checkpoint\n"
            "assert not any(m.startswith(('google.protobuf', 'tensorboard')) for m in sys.modules), 'imported'\n"
            "sys.modules['google.protobuf'] = None\n"
            "try:\n    import tapeflow.saving.tf_bundle\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pip install 'tapeflow[tfcheckpoint]'" in out.stdout


# ------------------------------------------------------------------ fuzz ---
WORKERS = [{"index": 100, "data": 60}, {"index-valid-crc": 120, "graph-valid-crc": 120}]
TIMEOUT = 120


def fuzz(modes):
    """{mode: [outcome]} of ``modes`` {mode: number of cases}, run in one worker process."""
    command = [sys.executable, os.path.join(HERE, "tf_bundle_files.py"), "--fuzz",
               *(f"{mode}:{count}" for mode, count in modes.items())]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hang in fuzz modes {list(modes)}: {len((e.stdout or b'').splitlines())} cases answered "
                    f"within {TIMEOUT} s")
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != sum(modes.values()):
        pytest.fail(f"crash (exit {out.returncode}) in fuzz modes {list(modes)} after {len(lines)} cases: "
                    f"{out.stderr[-1500:]}")
    results = {mode: [] for mode in modes}
    for line in lines:
        mode, _, outcome = line.split(" ", 2)
        results[mode].append(outcome)
    return results


def test_fuzzed_checkpoints_end_in_a_clear_error_or_a_restore():
    results = {}
    with ThreadPoolExecutor(len(WORKERS)) as pool:
        for answer in pool.map(fuzz, WORKERS):
            results.update(answer)
    for mode, outcomes in results.items():
        obscure = [o for o in outcomes if not o.startswith(("ok", "clear"))]
        assert not obscure, f"{mode}: {obscure[:5]}"
        assert sum(o.startswith("clear") for o in outcomes) > len(outcomes) // 2, mode
    # with checksums fixed up, the mutations reach the block parser, the entry and graph decoders
    index_errors = " ".join(results["index-valid-crc"])
    assert "shares" in index_errors and "is not a BundleEntryProto" in index_errors
    assert "is not a TrackableObjectGraph" in " ".join(results["graph-valid-crc"])

"""Writing TensorFlow checkpoint bundles for tests: LevelDB tables (several data blocks, restart points,
prefix-compressed keys) holding BundleEntryProtos, and the data file, from arrays and an object graph. The
writer follows the documented format; that it matches TensorFlow is checked by re-writing a checkpoint
TensorFlow wrote and restoring it (tests/test_tf_bundle_hostile.py). Also the seeded mutations of the fuzz
test: ``python tf_bundle_files.py --fuzz MODE:COUNT ...`` prints one outcome per case."""
import os
import random
import shutil
import struct
import sys

import numpy as np

from tapeflow.saving.crc32c import crc32c, masked
from tapeflow.saving.tf_bundle import GRAPH_KEY, BundleReader
from tapeflow.saving.tf_bundle_protos import BundleEntryProto, BundleHeaderProto, types_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "fixtures", "tf_checkpoints", "module", "ckpt-1")
DTYPES = {np.dtype(np.float32): types_pb2.DT_FLOAT, np.dtype(np.float64): types_pb2.DT_DOUBLE,
          np.dtype(np.float16): types_pb2.DT_HALF, np.dtype(np.int32): types_pb2.DT_INT32,
          np.dtype(np.int64): types_pb2.DT_INT64, np.dtype(np.bool_): types_pb2.DT_BOOL,
          np.dtype(np.uint8): types_pb2.DT_UINT8}
MAGIC = struct.pack("<Q", 0xDB4775248B80FB57)


def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def block(entries, restart_interval=2):
    out, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % restart_interval:
            while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
                shared += 1
        else:
            restarts.append(len(out))
        out += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        previous = key
    restarts = restarts or [0]
    return bytes(out) + struct.pack(f"<{len(restarts)}I", *restarts) + struct.pack("<I", len(restarts))


def table(entries, per_block=3, compression=0):
    """The bytes of a table holding ``entries`` [(key, value)] (sorted by the caller)."""
    out = bytearray()

    def put(contents):
        offset = len(out)
        out.extend(contents + bytes([compression]))
        out.extend(struct.pack("<I", masked(crc32c(contents + bytes([compression])))))
        return varint(offset) + varint(len(contents))
    index = []
    for start in range(0, len(entries), per_block):
        chunk = entries[start:start + per_block]
        index.append((chunk[-1][0], put(block(chunk))))
    metaindex = put(block([]))
    handles = metaindex + put(block(index, restart_interval=1))
    return bytes(out) + handles + bytes(40 - len(handles)) + MAGIC


def string_tensor(data):
    length = struct.pack("<I", len(data))
    length_crc = crc32c(length)
    body = varint(len(data)) + struct.pack("<I", masked(length_crc)) + data
    return body, masked(crc32c(body[len(varint(len(data))):], length_crc))


def write_bundle(prefix, tensors, graph, edit=None, header=None, compression=0):
    """Writes ``<prefix>.index`` and one data file; ``edit(key, entry)`` may change an entry before it is
    written, ``header`` replaces the BundleHeaderProto."""
    data, entries = bytearray(), {}
    for key in sorted(tensors):
        array = np.asarray(tensors[key])
        raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
        entry = BundleEntryProto(dtype=DTYPES[array.dtype], offset=len(data), size=len(raw),
                                 crc32c=masked(crc32c(raw)))
        for size in array.shape:
            entry.shape.dim.add(size=size)
        entries[key] = entry
        data += raw
    body, crc = string_tensor(graph)
    entries[GRAPH_KEY] = BundleEntryProto(dtype=types_pb2.DT_STRING, offset=len(data), size=len(body), crc32c=crc)
    data += body
    for key, entry in entries.items():
        if edit is not None:
            edit(key, entry)
    header = header if header is not None else BundleHeaderProto(num_shards=1)
    if not header.HasField("version"):
        header.version.producer = 1
    items = [(b"", header.SerializeToString())]
    items += [(key.encode(), entries[key].SerializeToString()) for key in sorted(entries)]
    with open(prefix + ".index", "wb") as f:
        f.write(table(items, compression=compression))
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)


def read_bundle(prefix=MODULE):
    """(tensors, serialized object graph) of a bundle."""
    with BundleReader(prefix) as reader:
        tensors = {key: reader.read(key) for key, (_, dtype) in reader.entries().items() if key != GRAPH_KEY}
        return tensors, reader.get_tensor(GRAPH_KEY)


# ------------------------------------------------------------------ fuzz ---
def mutate(data, rng, start=0, end=None):
    """``data`` with 1-4 bit flips or an overwrite of 1-8 bytes in ``data[start:end]``, or (when no ``end``
    is given) a truncation."""
    data = bytearray(data)
    bounded = end is not None
    end = len(data) if end is None else end
    kind = rng.random()
    if kind < 0.5:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(start, end)
            data[i] ^= 1 << rng.randrange(8)
    elif kind < 0.85 or bounded:
        i = rng.randrange(start, end)
        n = min(rng.randint(1, 8), end - i)
        data[i:i + n] = bytes(rng.randrange(256) for _ in range(n))
    else:
        del data[rng.randrange(len(data)):]
    return bytes(data)


def first_block_size(index):
    """The size of the first data block of a table with one data block: it ends where the metaindex block
    (whose offset leads the footer) begins, less its 5-byte trailer."""
    pos, shift, offset = len(index) - 48, 0, 0
    while True:
        byte = index[pos]
        offset |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return offset - 5


def with_block_crc(data, size):
    """``data`` with the trailer CRC of its first block (``size`` bytes at offset 0) recomputed."""
    return data[:size + 1] + struct.pack("<I", masked(crc32c(data[:size + 1]))) + data[size + 5:]


def fuzz_case(mode, seed, workdir):
    """Restores a mutated copy of the module fixture: ``ok``, ``clear`` (FileFormatError or OSError, nothing
    changed) or ``obscure: ...`` (anything else, or a failed restore that changed something)."""
    import tapeflow as tf
    from tapeflow.saving import FileFormatError

    rng = random.Random(f"{mode}-{seed}")
    prefix = os.path.join(workdir, f"{mode}-{seed}")
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(MODULE + suffix, prefix + suffix)
    if mode == "index":
        data = open(MODULE + ".index", "rb").read()
        open(prefix + ".index", "wb").write(mutate(data, rng))
    elif mode == "index-valid-crc":
        data = open(MODULE + ".index", "rb").read()
        size = first_block_size(data)
        open(prefix + ".index", "wb").write(with_block_crc(mutate(data, rng, 0, size), size))
    elif mode == "data":
        data = open(MODULE + ".data-00000-of-00001", "rb").read()
        open(prefix + ".data-00000-of-00001", "wb").write(mutate(data, rng))
    elif mode == "graph-valid-crc":
        tensors, graph = read_bundle()
        write_bundle(prefix, tensors, mutate(graph, rng))
    else:
        raise ValueError(mode)

    net = tf.Module()
    net.w = tf.Variable(np.zeros((2, 3), np.float32))
    net.sub = tf.Module()
    net.sub.b = tf.Variable(np.zeros(2))
    net.vs = [tf.Variable(0, dtype=tf.int32), tf.Variable(np.int64(0))]
    net.table = {"a.b": tf.Variable(np.zeros(4, np.float16)), "c/d": tf.Variable([False] * 3)}
    step = tf.Variable(np.int64(0))
    checkpoint = tf.train.Checkpoint(net=net, step=step)
    live = [net.w, net.sub.b, *net.vs, *net.table.values(), step, checkpoint.save_counter]
    before = [np.array(v) for v in live]
    try:
        checkpoint.restore(prefix)
        return "ok"
    except (FileFormatError, OSError) as e:
        if any(not np.array_equal(np.array(v), b) for v, b in zip(live, before)):
            return f"obscure: a failed restore changed variables ({e})"
        return f"clear {type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - the point is to report it
        return f"obscure: {type(e).__name__}: {e}"


if __name__ == "__main__" and sys.argv[1:2] == ["--fuzz"]:
    import tempfile
    with tempfile.TemporaryDirectory() as workdir:
        for spec in sys.argv[2:]:       # MODE:COUNT ...
            mode, count = spec.split(":")
            for seed in range(int(count)):
                outcome = "".join(c if c.isprintable() else "?" for c in fuzz_case(mode, seed, workdir))
                print(f"{mode} {seed} {outcome}", flush=True)

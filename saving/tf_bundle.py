"""Reading TensorFlow's checkpoint format: the ``<prefix>.index`` + ``<prefix>.data-<i>-of-<n>`` bundle.

The ``.index`` file is an SSTable (see sstable) mapping each tensor's key to a ``BundleEntryProto``
(dtype, shape, shard, offset, size, masked CRC-32C of the bytes); the empty key holds the
``BundleHeaderProto`` (number of shards, endianness, version). The data files hold the tensors' raw
little-endian bytes. The object graph is a string tensor under ``_CHECKPOINTABLE_OBJECT_GRAPH``: the
varint length, the masked CRC-32C of that length as a uint32, then a serialized ``TrackableObjectGraph``.

``BundleReader`` serves the same interface as tapeflow's own checkpoint reader (``nodes``, ``header``,
``read``, ``keys``), so restoring (checkpoint_restore) does not care which format it reads. Every entry is
checked when the index is opened (dtype, shape, shard, that ``offset + size`` lies inside the data file
and that ``size`` is what the shape and dtype make it); a tensor's bytes are checked against their CRC
when read. Nothing is read outside the index and its data files.
"""
import os
import struct

import numpy as np

from .checkpoint_file import Node
from .crc32c import crc32c, masked
from .errors import FileContentError, OversizedContentError, UnsupportedContentError
from .sstable import Table, _Problem, varint
from .tf_bundle_protos import BundleEntryProto, BundleHeaderProto, DecodeError, TrackableObjectGraph, types_pb2
from .trackable_graph import escape

GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VALUE_ATTRIBUTE = "VARIABLE_VALUE"
BUNDLE_VERSION = 1                  # the newest bundle version this reader understands
MAX_INDEX_BYTES = 1 << 30
MAX_GRAPH_BYTES = 1 << 28
# The object graph may take 1 MiB plus 4 KiB per tensor of the index (real graphs take a few hundred bytes
# per variable): decoding it then costs memory in proportion to the checkpoint's declared tensors.
GRAPH_BYTES_BASE, GRAPH_BYTES_PER_TENSOR = 1 << 20, 4096
MAX_SHARDS = 1 << 16
_T = types_pb2
DTYPES = {_T.DT_FLOAT: np.float32, _T.DT_DOUBLE: np.float64, _T.DT_HALF: np.float16,
          _T.DT_INT8: np.int8, _T.DT_INT16: np.int16, _T.DT_INT32: np.int32, _T.DT_INT64: np.int64,
          _T.DT_UINT8: np.uint8, _T.DT_UINT16: np.uint16, _T.DT_UINT32: np.uint32, _T.DT_UINT64: np.uint64,
          _T.DT_BOOL: np.bool_}


def index_of(prefix):
    return prefix + ".index"


def data_file_of(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def is_bundle(prefix):
    return os.path.isfile(index_of(prefix))


class _Entry:
    __slots__ = ("dtype", "shape", "shard", "offset", "size", "crc")

    def __init__(self, dtype, shape, shard, offset, size, crc):
        self.dtype, self.shape, self.shard, self.offset, self.size, self.crc = dtype, shape, shard, offset, size, crc


class BundleReader:
    """A TensorFlow checkpoint ``prefix`` opened for reading: ``nodes``, ``header(key)``, ``read(key)``,
    ``keys()`` and ``entries()`` (every tensor's key, shape and dtype)."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.path = index_of(prefix)
        self._files = {}
        try:
            table = Table(self._read_index(), self.path)
            self.num_shards = self._read_header(table)
            self._entries = self._read_entries(table)
            self.nodes = self._read_graph()
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        files, self._files = self._files, {}
        for f in files.values():
            f.close()

    def _fail(self, message, cls=FileContentError):
        raise cls(f"Cannot read the TensorFlow checkpoint '{self.prefix}' ({os.path.basename(self.path)}): "
                  f"{message}")

    # ------------------------------------------------------------ index ---
    def _read_index(self):
        with open(self.path, "rb") as f:
            data = f.read(MAX_INDEX_BYTES + 1)
        if len(data) > MAX_INDEX_BYTES:
            self._fail(f"the index is larger than {MAX_INDEX_BYTES} bytes.", OversizedContentError)
        return data

    def _read_header(self, table):
        raw = table.get(b"")
        if raw is None:
            self._fail("the index has no header entry (the empty key).")
        header = BundleHeaderProto()
        try:
            header.ParseFromString(raw)
        except DecodeError as e:
            self._fail(f"the header entry is not a BundleHeaderProto ({e}).")
        if not 1 <= header.num_shards <= MAX_SHARDS:
            self._fail(f"the header declares {header.num_shards} data shards (1 to {MAX_SHARDS} expected).")
        if header.endianness != 0:
            self._fail("its tensors are stored big-endian; tapeflow reads little-endian bundles only.",
                       UnsupportedContentError)
        version = header.version
        if version.min_consumer > BUNDLE_VERSION or BUNDLE_VERSION in version.bad_consumers:
            self._fail(f"it was written by bundle version {version.producer} for readers of version >= "
                       f"{version.min_consumer}; this reader is version {BUNDLE_VERSION}.", UnsupportedContentError)
        return header.num_shards

    def _read_entries(self, table):
        entries, sizes = {}, {}
        for raw_key, raw in table.items():
            if not raw_key:
                continue
            try:
                key = raw_key.decode("utf-8")
            except UnicodeDecodeError:
                self._fail(f"the key {raw_key[:80]!r} is not UTF-8.")
            entries[key] = self._entry(key, raw, sizes)
        return entries

    def _entry(self, key, raw, sizes):
        proto = BundleEntryProto()
        try:
            proto.ParseFromString(raw)
        except DecodeError as e:
            self._fail(f"the entry of '{key}' is not a BundleEntryProto ({e}).")
        if proto.slices:
            self._fail(f"'{key}' is a slice of a partitioned variable; tapeflow reads whole tensors only.",
                       UnsupportedContentError)
        if proto.shape.unknown_rank or any(d.size < 0 for d in proto.shape.dim):
            self._fail(f"'{key}' has an unknown or negative dimension in its shape.")
        shape = tuple(d.size for d in proto.shape.dim)
        if not 0 <= proto.shard_id < self.num_shards:
            self._fail(f"'{key}' lies in shard {proto.shard_id}, but the bundle has {self.num_shards} shard(s).")
        if proto.offset < 0 or proto.size < 0:
            self._fail(f"'{key}' has a negative offset or size ({proto.offset}, {proto.size}).")
        if proto.dtype in DTYPES:
            dtype = np.dtype(DTYPES[proto.dtype])
            expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if proto.size != expected:
                self._fail(f"'{key}' declares {proto.size} bytes, but a {dtype.name} tensor of shape {list(shape)} "
                           f"has {expected}.")
        elif proto.dtype == _T.DT_STRING:
            dtype = None
        else:
            dtype = _T.DataType.Name(proto.dtype) if proto.dtype in _T.DataType.values() else proto.dtype
            dtype = f"unsupported:{dtype}"
        data_size = self._data_size(proto.shard_id, sizes)
        if proto.offset > data_size or proto.size > data_size - proto.offset:
            self._fail(f"'{key}' (bytes {proto.offset}..{proto.offset + proto.size}) lies outside its data file "
                       f"'{os.path.basename(data_file_of(self.prefix, proto.shard_id, self.num_shards))}' "
                       f"of {data_size} bytes.")
        return _Entry(dtype, shape, proto.shard_id, proto.offset, proto.size, proto.crc32c)

    def _data_size(self, shard, sizes):
        if shard not in sizes:
            sizes[shard] = os.fstat(self._data_file(shard).fileno()).st_size
        return sizes[shard]

    def _data_file(self, shard):
        f = self._files.get(shard)
        if f is None:
            path = data_file_of(self.prefix, shard, self.num_shards)
            if not os.path.isfile(path):
                self._fail(f"its data file '{os.path.basename(path)}' is missing.")
            f = self._files[shard] = open(path, "rb")
        return f

    def _bytes(self, key, entry):
        """The entry's bytes as a uint8 array (read straight into it: one buffer of the tensor's size)."""
        f = self._data_file(entry.shard)
        data = np.empty(entry.size, np.uint8)
        view, done = memoryview(data), 0
        while done < entry.size:
            n = os.preadv(f.fileno(), [view[done:]], entry.offset + done)
            if not n:
                self._fail(f"its data file ended while reading '{key}' (it shrank while being read).")
            done += n
        return data

    def _check_crc(self, key, entry, crc):
        if masked(crc) != entry.crc:
            self._fail(f"the data of '{key}' is damaged (its CRC-32C does not match).")

    # ------------------------------------------------------------ graph ---
    def _graph_bytes(self):
        entry = self._entries.get(GRAPH_KEY)
        if entry is None:
            self._fail(f"it has no object graph ('{GRAPH_KEY}'); it was not written by tf.train.Checkpoint "
                       "(a name-based TF1 checkpoint?), and tapeflow restores object-based checkpoints only.",
                       UnsupportedContentError)
        if entry.dtype is not None or entry.shape != ():
            self._fail(f"'{GRAPH_KEY}' should be a scalar string tensor.")
        limit = min(MAX_GRAPH_BYTES, GRAPH_BYTES_BASE + GRAPH_BYTES_PER_TENSOR * len(self._entries))
        if entry.size > limit:
            self._fail(f"the object graph takes {entry.size} bytes, more than the {limit} that a checkpoint of "
                       f"{len(self._entries)} tensors is allowed.", OversizedContentError)
        data = self._bytes(GRAPH_KEY, entry).tobytes()
        try:
            length, pos = varint(data, 0, len(data))
        except _Problem as e:
            self._fail(f"the object graph's length is malformed ({e}).")
        if length >= 1 << 32 or pos + 4 + length != len(data):
            self._fail(f"the object graph's length ({length}) does not match its entry's {len(data)} bytes.")
        # A string tensor's checksum covers its lengths as uint32s, their checksum, then the strings.
        length_crc = crc32c(struct.pack("<I", length))
        (stored,) = struct.unpack_from("<I", data, pos)
        if masked(length_crc) != stored:
            self._fail("the object graph's length is damaged (its CRC-32C does not match).")
        self._check_crc(GRAPH_KEY, entry, crc32c(data[pos:], length_crc))
        return data[pos + 4:]

    def _read_graph(self):
        graph = TrackableObjectGraph()
        try:
            graph.ParseFromString(self._graph_bytes())
        except (DecodeError, RecursionError) as e:
            self._fail(f"the object graph is not a TrackableObjectGraph ({e}).")
        count = len(graph.nodes)
        if not count:
            self._fail("the object graph has no nodes.")
        return [self._node(i, node, count) for i, node in enumerate(graph.nodes)]

    def _node(self, i, node, count):
        children, names = [], set()
        for child in node.children:
            name = escape(child.local_name)
            if not child.local_name or not 0 <= child.node_id < count:
                self._fail(f"node {i} of the object graph has a malformed child ({child.local_name!r} -> node "
                           f"{child.node_id}, with {count} nodes).")
            if name in names:
                self._fail(f"node {i} of the object graph has two children named {child.local_name!r}.")
            names.add(name)
            children.append((name, child.node_id))
        key = None
        for attribute in node.attributes:
            if attribute.name != VALUE_ATTRIBUTE:
                continue  # other saveables (Python state, tables) have no tapeflow counterpart
            key = attribute.checkpoint_key
            entry = self._entries.get(key)
            if entry is None or key == GRAPH_KEY:
                self._fail(f"node {i} of the object graph names the value '{key[:200]}', which is not in the index.")
        return Node(children, key)

    # ----------------------------------------------------------- values ---
    def _numeric(self, key):
        entry = self._entries.get(key)
        if entry is None:
            self._fail(f"it has no value '{key}'.")
        if not isinstance(entry.dtype, np.dtype):
            what = "strings" if entry.dtype is None else entry.dtype.split(":", 1)[1]
            self._fail(f"'{key}' holds {what}, not the numbers of a variable.", UnsupportedContentError)
        return entry

    def header(self, key):
        """(shape, numpy dtype) of the value at ``key``, from its index entry alone."""
        entry = self._numeric(key)
        return entry.shape, entry.dtype

    def read(self, key):
        entry = self._numeric(key)
        data = self._bytes(key, entry)
        self._check_crc(key, entry, crc32c(data))
        if entry.dtype == np.bool_ and data.max(initial=0) > 1:
            self._fail(f"the bool tensor '{key}' holds bytes other than 0 and 1.")
        value = data.view(entry.dtype.newbyteorder("<")).reshape(entry.shape)
        return value if value.dtype.isnative else value.astype(entry.dtype)

    def keys(self):
        return [node.key for node in self.nodes if node.key is not None]

    def entries(self):
        """{key: (shape, dtype name)} of every tensor in the bundle, the object graph included."""
        out = {}
        for key, entry in self._entries.items():
            name = entry.dtype.name if isinstance(entry.dtype, np.dtype) else entry.dtype or "string"
            out[key] = (entry.shape, name)
        return out

    def get_tensor(self, key):
        """The value at ``key``; the object graph's serialized bytes for ``_CHECKPOINTABLE_OBJECT_GRAPH``."""
        if key == GRAPH_KEY:
            return self._graph_bytes()
        return self.read(key)

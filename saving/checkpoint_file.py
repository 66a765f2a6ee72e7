"""tapeflow's checkpoint file: one HDF5 file, ``<prefix>.h5``, holding values under TensorFlow's keys.

* ``/_CHECKPOINTABLE_OBJECT_GRAPH``: the object graph, UTF-8 JSON stored as a uint8 dataset (TensorFlow
  stores a proto under the same key): ``{"format": "tapeflow.train.Checkpoint", "version": 1, "nodes": [...]}``,
  each node ``{"children": [[name, node id], ...]}`` plus ``"key"`` on a variable's node; node 0 is
  the root.
* each variable's value as a dataset at its key, e.g.
  ``/model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``.

Reading goes through ``h5_reader`` (never libhdf5, which trusts the files it reads): it never leaves the
file (links, external storage and virtual datasets are refused) and checks every address and size. A
value's shape and dtype come from the dataset's header, so they are checked against the variable before
its data is read.
"""
import json

import h5py
import numpy as np

from . import h5_reader
from .errors import FileContentError
from .release import replacing

GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
FORMAT = "tapeflow.train.Checkpoint"
VERSION = 1
SUFFIX = ".h5"
_MAX_KEY_LENGTH = 65536
_MAX_GRAPH_BYTES = 1 << 28


def file_of(prefix):
    return prefix + SUFFIX


def write_checkpoint(prefix, graph):
    """Writes the values of ``graph`` (a trackable_graph.ObjectGraph) to ``<prefix>.h5``, atomically."""
    nodes = []
    values = []
    variable_nodes = {i for i, _ in graph.variables()}
    for i, edges in enumerate(graph.edges):
        node = {"children": [[name, j] for name, j in edges]}
        if i in variable_nodes:
            node["key"] = graph.value_key(i)
            values.append((node["key"], np.asarray(graph.objects[i])))
        nodes.append(node)
    text = json.dumps({"format": FORMAT, "version": VERSION, "nodes": nodes})
    path = file_of(prefix)
    with replacing(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.create_dataset(GRAPH_KEY, data=np.frombuffer(text.encode("utf-8"), np.uint8))
            for key, value in values:
                f.create_dataset(key, data=value)
    return path


class Node:
    __slots__ = ("children", "key")

    def __init__(self, children, key):
        self.children = children
        self.key = key


class CheckpointReader:
    """A checkpoint file opened for reading: ``nodes``, ``header(key)``, ``read(key)``."""

    def __init__(self, path):
        self.path = path
        self._file = h5_reader.H5File.open(path)
        try:
            self.nodes = self._read_graph()
        except BaseException:
            self._file.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._file.close()

    def _fail(self, message):
        raise FileContentError(f"Cannot read checkpoint '{self.path}': {message}")

    # ------------------------------------------------------------ graph ---
    def _read_graph(self):
        item = self._item(GRAPH_KEY, what="the object graph")
        if (not isinstance(item, h5_reader.Dataset) or len(item.shape) != 1 or item.dtype != np.uint8
                or item.nbytes > _MAX_GRAPH_BYTES):
            self._fail(f"'/{GRAPH_KEY}' should be a uint8 dataset (at most {_MAX_GRAPH_BYTES} bytes) holding "
                       "the object graph's JSON.")
        try:
            graph = json.loads(item.read().tobytes().decode("utf-8"))
        except (ValueError, RecursionError) as e:
            self._fail(f"the object graph '/{GRAPH_KEY}' is not readable JSON ({type(e).__name__}: {e}).")
        if not isinstance(graph, dict) or graph.get("format") != FORMAT:
            self._fail(f"'/{GRAPH_KEY}' is not a {FORMAT} object graph.")
        if graph.get("version") != VERSION:
            self._fail(f"the object graph has version {graph.get('version')!r}; this tapeflow reads version "
                       f"{VERSION}.")
        raw_nodes = graph.get("nodes")
        if not isinstance(raw_nodes, list) or not raw_nodes:
            self._fail("the object graph has no 'nodes' list.")
        return [self._node(i, raw, len(raw_nodes)) for i, raw in enumerate(raw_nodes)]

    def _node(self, i, raw, count):
        if not isinstance(raw, dict) or not isinstance(raw.get("children"), list):
            self._fail(f"node {i} of the object graph is malformed (it needs a 'children' list).")
        children, names = [], set()
        for edge in raw["children"]:
            if (not isinstance(edge, list) or len(edge) != 2 or not isinstance(edge[0], str) or not edge[0]
                    or "/" in edge[0] or type(edge[1]) is not int or not 0 <= edge[1] < count):
                self._fail(f"node {i} of the object graph has a malformed child {edge!r} (expected [name, node id] "
                           f"with 0 <= id < {count}).")
            if edge[0] in names:
                self._fail(f"node {i} of the object graph has two children named {edge[0]!r}.")
            names.add(edge[0])
            children.append((edge[0], edge[1]))
        key = raw.get("key")
        if key is not None and not self._valid_key(key):
            self._fail(f"node {i} of the object graph has an invalid key {key!r}.")
        return Node(children, key)

    @staticmethod
    def _valid_key(key):
        return (isinstance(key, str) and 0 < len(key) <= _MAX_KEY_LENGTH and key != GRAPH_KEY
                and all(part not in ("", ".") for part in key.split("/")))

    # ------------------------------------------------------------ values ---
    def _item(self, key, what=None):
        """The object at ``key`` (h5_reader follows hard links only)."""
        item = self._file.root.get(key)
        if item is None:
            self._fail(f"it has no {what or 'value'} at '/{key}'.")
        return item

    def _dataset(self, key):
        item = self._item(key)
        if not isinstance(item, h5_reader.Dataset):
            self._fail(f"'/{key}' should hold a variable's value, but it is a group.")
        if item.dtype.kind not in "biuf":
            self._fail(f"'/{key}' holds {item.dtype} data, not the numbers of a variable.")
        return item

    def header(self, key):
        """(shape, numpy dtype) of the value at ``key``, from the dataset's header alone."""
        dataset = self._dataset(key)
        return tuple(dataset.shape), dataset.dtype

    def read(self, key):
        return self._dataset(key).read()

    def keys(self):
        return [node.key for node in self.nodes if node.key is not None]

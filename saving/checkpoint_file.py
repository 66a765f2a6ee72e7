"""tapeflow's checkpoint file: one HDF5 file, ``<prefix>.h5``, holding values under TensorFlow's keys.

* ``/_CHECKPOINTABLE_OBJECT_GRAPH``: the object graph, a UTF-8 JSON string (TensorFlow stores a proto
  under the same key): ``{"format": "tapeflow.train.Checkpoint", "version": 1, "nodes": [...]}``,
  each node ``{"children": [[name, node id], ...]}`` plus ``"key"`` on a variable's node; node 0 is
  the root.
* each variable's value as a dataset at its key, e.g.
  ``/model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``.

Reading never leaves the file: every step of a key's path must be a hard link inside it, and a dataset
may be neither virtual nor stored in external files. A value's shape and dtype come from the dataset's
header, so they are checked against the variable before its data is read.
"""
import json

import h5py
import numpy as np

from .errors import FileContentError
from .release import replacing
from .weights_h5 import read_dataset

GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
FORMAT = "tapeflow.train.Checkpoint"
VERSION = 1
SUFFIX = ".h5"
_MAX_KEY_LENGTH = 65536


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
            f.create_dataset(GRAPH_KEY, data=text, dtype=h5py.string_dtype("utf-8"))
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
        try:
            self._file = h5py.File(path, "r")
        except (OSError, ValueError) as e:
            raise FileContentError(f"Cannot read checkpoint '{path}': it is not a valid HDF5 file, or it is "
                                   f"truncated or corrupted ({e}).") from e
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
        if not isinstance(item, h5py.Dataset) or item.shape != () or h5py.check_string_dtype(item.dtype) is None:
            self._fail(f"'/{GRAPH_KEY}' should be a string dataset holding the object graph.")
        try:
            raw = item[()]
            text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
            graph = json.loads(text)
        except (OSError, RuntimeError, ValueError, RecursionError) as e:
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
        """The object at ``key``, reached through hard links only."""
        item = self._file
        for part in key.split("/"):
            try:
                link = item.get(part, getlink=True) if isinstance(item, h5py.Group) else None
            except (KeyError, OSError, RuntimeError, ValueError) as e:
                self._fail(f"the HDF5 structure at '/{key}' is corrupted ({e}).")
            if link is None:
                self._fail(f"it has no {what or 'value'} at '/{key}'.")
            if not isinstance(link, h5py.HardLink):
                self._fail(f"'/{key}' goes through a {type(link).__name__}; checkpoint values must be stored in "
                           "the file itself, so links are refused.")
            try:
                item = item[part]
            except (KeyError, OSError, RuntimeError, ValueError) as e:
                self._fail(f"the HDF5 structure at '/{key}' is corrupted ({e}).")
        return item

    def _dataset(self, key):
        item = self._item(key)
        if not isinstance(item, h5py.Dataset):
            self._fail(f"'/{key}' should hold a variable's value, but it is a group.")
        if item.is_virtual or item.external:
            self._fail(f"'/{key}' is stored outside the file (a virtual or external dataset), which is refused.")
        if item.dtype.kind not in "biuf":
            self._fail(f"'/{key}' holds {item.dtype} data, not the numbers of a variable.")
        return item

    def header(self, key):
        """(shape, numpy dtype) of the value at ``key``, from the dataset's header alone."""
        dataset = self._dataset(key)
        return tuple(dataset.shape), dataset.dtype

    def read(self, key):
        return np.asarray(read_dataset(self._dataset(key), self.path))

    def keys(self):
        return [node.key for node in self.nodes if node.key is not None]

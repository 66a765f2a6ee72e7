"""cache: the first complete iteration is recorded, later iterations replay it.

In memory, or in a file (``cache(filename)``): an HDF5 file of plain arrays,
``<filename>.cache.h5``, written to a temporary name and renamed into place
only when an iteration has read the whole input, so a partial or crashed
iteration never leaves a cache behind (TensorFlow discards partial caches
too). An existing cache file is read instead of the input, also in a later
process, as in TensorFlow; it is checked against the dataset's element spec
(number of components, dtypes, ranks) before any element is produced.

File layout: attributes ``format`` = "tapeflow.data.cache", ``version`` = 1,
``num_elements``; per component ``i`` a group ``component_<i>`` with
attributes ``dtype`` and ``rank``, a dataset ``shapes`` (num_elements x rank,
int64) and a dataset ``values``: every element's values flattened and
concatenated (strings as variable-length bytes).
"""
import os
import threading
import warnings

import numpy as np

from ..framework import dtypes, nest
from ..framework.tensor_spec import TensorSpec
from . import structure
from .dataset import Dataset

FORMAT = "tapeflow.data.cache"
VERSION = 1
_BLOCK = 4096
_PARTIAL_WARNING = ("The calling iterator did not fully read the dataset being cached. In order to avoid unexpected "
                    "truncation of the dataset, the partially cached contents of the dataset will be discarded. "
                    "This can happen if you have an input pipeline similar to `dataset.cache().take(k).repeat()`. "
                    "You should use `dataset.take(k).cache().repeat()` instead.")


class _CacheDataset(Dataset):
    _tf_name = "_CacheDataset"

    def __init__(self, input_dataset):
        self._input = input_dataset
        self._inputs = (input_dataset,)

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        return self._input._cardinality()


class MemoryCacheDataset(_CacheDataset):

    def __init__(self, input_dataset):
        super().__init__(input_dataset)
        self._elements = None
        self._lock = threading.Lock()

    def _iterate(self):
        if self._elements is not None:
            return iter(self._elements)
        return self._record()

    def _record(self):
        recorded = []
        complete = False
        try:
            for element in self._input._iterate():
                recorded.append(element)
                yield element
            complete = True
        finally:
            if complete:
                with self._lock:
                    if self._elements is None:
                        self._elements = recorded
            else:
                warnings.warn(_PARTIAL_WARNING, stacklevel=2)


class FileCacheDataset(_CacheDataset):
    _runs_python = True   # file I/O: worth a prefetch thread

    def __init__(self, input_dataset, filename):
        super().__init__(input_dataset)
        self._path = os.fspath(filename) + ".cache.h5"
        self._written_layout = None   # structure, dtypes and ranks of what this dataset wrote

    def _iterate(self):
        if os.path.exists(self._path):
            return read_cache(self._path, self._written_layout or self.element_spec)
        return self._record()

    def _record(self):
        writer = None
        complete = False
        try:
            for element in self._input._iterate():
                if writer is None:
                    writer = _Writer(self._path, element)
                    self._written_layout = structure.map_specs(
                        lambda s: TensorSpec([None] * s.shape.rank, s.dtype), structure.spec_of(element))
                writer.add(element)
                yield element
            complete = True
        finally:
            if complete:
                if writer is None:
                    writer = _Writer(self._path, None, components=len(nest.flatten(self.element_spec)),
                                     specs=nest.flatten(self.element_spec))
                writer.commit()
            else:
                if writer is not None:
                    writer.discard()
                warnings.warn(_PARTIAL_WARNING, stacklevel=2)


class _Writer:
    """Appends elements block by block to a temporary file, renamed into place by ``commit``."""

    def __init__(self, path, first_element, components=None, specs=None):
        import h5py
        self._path = path
        self._temp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
        self._file = h5py.File(self._temp, "w")
        self._file.attrs["format"] = FORMAT
        self._file.attrs["version"] = VERSION
        self._file.attrs["num_elements"] = 0
        if first_element is not None:
            leaves = structure.leaves(first_element)
            layout = [(dtypes.as_dtype(a.dtype), a.ndim) for a in leaves]
        else:
            layout = [(s.dtype, 0 if s.shape.rank is None else s.shape.rank) for s in specs]
        self._groups = []
        for i, (dtype, rank) in enumerate(layout):
            group = self._file.create_group(f"component_{i}")
            group.attrs["dtype"] = dtype.name
            group.attrs["rank"] = rank
            value_dtype = h5py.vlen_dtype(bytes) if dtype == dtypes.string else dtype._np
            group.create_dataset("shapes", shape=(0, rank), maxshape=(None, rank), dtype=np.int64,
                                 chunks=(_BLOCK, max(rank, 1)) if rank else None)
            group.create_dataset("values", shape=(0,), maxshape=(None,), dtype=value_dtype, chunks=(1 << 16,))
            self._groups.append(group)
        self._pending = []
        self._count = 0

    def add(self, element):
        self._pending.append(structure.leaves(element))
        if len(self._pending) >= _BLOCK:
            self._flush()

    def _flush(self):
        if not self._pending:
            return
        for i, group in enumerate(self._groups):
            arrays = [leaves[i] for leaves in self._pending]
            shapes = np.array([a.shape for a in arrays], dtype=np.int64).reshape(len(arrays), -1)
            values = np.concatenate([a.reshape(-1) for a in arrays])
            for name, data in (("shapes", shapes), ("values", values)):
                dataset = group[name]
                start = dataset.shape[0]
                dataset.resize(start + len(data), axis=0)
                dataset[start:] = data
        self._count += len(self._pending)
        self._pending = []

    def commit(self):
        self._flush()
        self._file.attrs["num_elements"] = self._count
        self._file.close()
        os.replace(self._temp, self._path)

    def discard(self):
        self._file.close()
        os.remove(self._temp)


def _content_error(path, member, problem):
    from tapeflow.saving.errors import FileContentError   # lazy: saving sits above the engine
    return FileContentError(f"Dataset cache file '{path}': {member}: {problem}")


def read_cache(path, element_spec):
    """Checks the whole file's layout against ``element_spec`` first, then yields its elements block by block."""
    import h5py
    specs = nest.flatten(element_spec)
    if not h5py.is_hdf5(path):
        raise _content_error(path, "file", "not an HDF5 file")
    with h5py.File(path, "r") as f:
        layout = _check_layout(path, f, specs)
    return _read_elements(path, element_spec, layout)


def _check_layout(path, f, specs):
    if f.attrs.get("format") != FORMAT or f.attrs.get("version") != VERSION:
        raise _content_error(path, "attributes", f"not a version-{VERSION} {FORMAT} file")
    count = f.attrs.get("num_elements")
    if not isinstance(count, (int, np.integer)) or count < 0:
        raise _content_error(path, "attribute num_elements", f"invalid value {count!r}")
    names = sorted(f.keys())
    expected = [f"component_{i}" for i in range(len(specs))]
    if names != sorted(expected):
        raise _content_error(path, "components", f"the file holds {names}, the dataset has {len(specs)} "
                                                 f"component(s)")
    layout = []
    for name, spec in zip(expected, specs):
        group = f[name]
        if not isinstance(spec, TensorSpec):
            raise _content_error(path, name, "datasets inside elements cannot be cached in a file")
        dtype_name, rank = group.attrs.get("dtype"), group.attrs.get("rank")
        if isinstance(dtype_name, bytes):
            dtype_name = dtype_name.decode("utf-8", "replace")
        if dtype_name != spec.dtype.name:
            raise _content_error(path, name, f"dtype {dtype_name!r}, the dataset's component is {spec.dtype.name}")
        if not isinstance(rank, (int, np.integer)) or (spec.shape.rank is not None and rank != spec.shape.rank):
            raise _content_error(path, name, f"rank {rank!r}, the dataset's component has shape {spec.shape}")
        if "shapes" not in group or "values" not in group:
            raise _content_error(path, name, "missing 'shapes' or 'values'")
        shapes_ds, values_ds = group["shapes"], group["values"]
        if shapes_ds.shape != (count, rank) or shapes_ds.dtype != np.int64:
            raise _content_error(path, f"{name}/shapes", f"shape {shapes_ds.shape} {shapes_ds.dtype}, expected "
                                                         f"({count}, {rank}) int64")
        shapes = shapes_ds[()]
        if shapes.size and shapes.min() < 0:
            raise _content_error(path, f"{name}/shapes", "negative dimension")
        if spec.shape.rank is not None:
            for d, known in enumerate(spec.shape.dims):
                if known is not None and shapes.size and np.any(shapes[:, d] != known):
                    raise _content_error(path, f"{name}/shapes", f"dimension {d} differs from the dataset's "
                                                                 f"{spec.shape}")
        sizes = np.prod(shapes, axis=1, dtype=np.int64) if rank else np.ones(count, np.int64)
        if len(values_ds.shape) != 1 or values_ds.shape[0] != int(sizes.sum()):
            raise _content_error(path, f"{name}/values", f"shape {values_ds.shape}, the shapes need "
                                                         f"{int(sizes.sum())} values")
        is_string = spec.dtype == dtypes.string
        if (values_ds.dtype.kind == "O") != is_string or (not is_string and values_ds.dtype != spec.dtype._np):
            raise _content_error(path, f"{name}/values", f"dtype {values_ds.dtype}, expected {spec.dtype.name}")
        layout.append((name, shapes, np.concatenate([[0], np.cumsum(sizes)])))
    return count, layout


def _read_elements(path, element_spec, checked):
    import h5py
    count, layout = checked
    with h5py.File(path, "r") as f:
        for start in range(0, count, _BLOCK):
            stop = min(count, start + _BLOCK)
            columns = []
            for name, shapes, offsets in layout:
                values = f[name]["values"][offsets[start]:offsets[stop]]
                base = offsets[start]
                column = []
                for k in range(start, stop):
                    piece = values[offsets[k] - base:offsets[k + 1] - base]
                    if piece.dtype.kind == "O":
                        piece = np.array([bytes(v) for v in piece], dtype=object)
                    column.append(piece.reshape(shapes[k]))
                columns.append(column)
            for leaves in zip(*columns):
                yield nest.pack_sequence_as(element_spec, list(leaves))

"""Keras 3's weights layout in HDF5: ``<path>/vars/<i>`` for every saveable object.

Used as it is for ``.weights.h5`` files and for the ``model.weights.h5``
member of a ``.keras`` archive. ``<path>`` comes from ``object_walk``; the
``vars`` group of an object with a name carries it as the attribute
``@name`` (written for fidelity, ignored on read). Datasets hold the raw
arrays (shape ``()`` for scalars), indexed ``"0" .. "n-1"``.
"""
import numpy as np

from tapeflow.optimizers import Optimizer

from .errors import FileContentError
from .h5_reader import Dataset, Group
from .object_walk import has_own_variables_methods, uses_default_io, variables_of, walk


def join(path, name):
    return f"{path}/{name}" if path else name


class WriteStore:
    """The ``store`` given to ``save_own_variables``: ``store["0"] = array`` writes ``<path>/vars/0``."""

    def __init__(self, h5, path, name, checksums=None):
        self._h5 = h5
        self._path = path
        self._group = None
        self._checksums = checksums
        if isinstance(name, str):
            self._make().attrs["name"] = name

    def _make(self):
        if self._group is None:
            self._group = self._h5.require_group(self._path)
        return self._group

    def __setitem__(self, key, value):
        array = np.asarray(value)
        dataset = self._make().create_dataset(str(key), data=array)
        if self._checksums is not None and dataset.dtype == array.dtype and array.dtype.isnative:
            self._checksums.add(dataset.name, array)   # the file holds exactly the array's bytes

    def __getitem__(self, key):
        if self._group is None or str(key) not in self._group:
            raise KeyError(key)
        return self._group[str(key)][()]

    def __contains__(self, key):
        return self._group is not None and str(key) in self._group

    def keys(self):
        return [] if self._group is None else list(self._group.keys())

    def __len__(self):
        return len(self.keys())


def write_weights(h5, root, checksums=None):
    """Writes the state of ``root`` and of every saveable it reaches (``checksums``: see zip_io)."""
    for path, obj in walk(root):
        if not has_own_variables_methods(obj):
            continue
        store = WriteStore(h5, join(path, "vars"), getattr(obj, "name", None), checksums)
        if uses_default_io(obj):
            for i, variable in enumerate(variables_of(obj)):
                store[str(i)] = np.asarray(variable)
        else:
            obj.save_own_variables(store)


# ------------------------------------------------------------------ read ---
# Reading goes through ``h5_reader`` (never libhdf5): a store is first *declared* -- its datasets with
# their shapes and dtypes, nothing read -- so that state_loading can compare it with the model before
# any data is read or memory allocated for it.
CUSTOM_STORE_LIMIT = 4096   # members of a vars group read for an object with its own load_own_variables


class DeclaredStore(dict):
    """``{"0": h5_reader.Dataset, ...}`` of a ``vars`` group; ``more`` is True when the group has more
    members than were listed (more than the object can hold)."""
    more = False


def _vars_group(h5, path, source):
    candidates = [join(path, "vars")]
    if path == "layers" or path.startswith("layers/"):
        # Keras 2.13 wrote the layers of a model under this name.
        candidates.append("_layer_checkpoint_dependencies" + path[len("layers"):] + "/vars")
    for candidate in candidates:
        group = h5.get(candidate)
        if group is None:
            continue
        if not isinstance(group, Group):
            raise FileContentError(f"Cannot read '{source}': '/{candidate}' should be a group of variables, but it "
                                   "is a dataset.")
        return group
    return None


def declared_store(group, source, limit):
    """The datasets of ``group`` by name, at most ``limit`` of them listed (see DeclaredStore)."""
    store = DeclaredStore()
    keys = group.keys_at_most(limit)
    if keys is None:
        store.more = True
        return store
    for key in keys:
        item = group.get(key)
        if not isinstance(item, Dataset):
            raise FileContentError(f"Cannot read '{source}': '{group.name}/{key}' should hold a variable's values, "
                                   "but it is a group.")
        store[key] = item
    return store


def read_weights(h5, root, source):
    """[(path, object, DeclaredStore or None)] for every saveable of ``root`` (``h5``: an h5_reader
    root group); None where the file has no group for the object."""
    out = []
    for path, obj in walk(root):
        if not has_own_variables_methods(obj):
            continue
        group = _vars_group(h5, path, source)
        limit = CUSTOM_STORE_LIMIT if isinstance(obj, Optimizer) or not uses_default_io(obj) else len(variables_of(obj))
        out.append((path, obj, None if group is None else declared_store(group, source, limit)))
    return out


def weights_file_limit(root):
    """The most bytes a weights file for ``root`` can need: the model's variables (an unbuilt optimizer
    counted as if built with up to four slots per trainable variable), plus room for the HDF5 structure
    around each variable and each object."""
    objects = [obj for _, obj in walk(root) if has_own_variables_methods(obj)]
    count, total = 0, 0
    for obj in objects:
        for variable in variables_of(obj):
            count += 1
            total += int(np.asarray(variable).nbytes)
        if isinstance(obj, Optimizer) and not obj.built:
            trainable = getattr(root, "trainable_variables", [])
            count += 4 * len(trainable)
            total += 4 * sum(int(np.asarray(v).nbytes) for v in trainable)
    return total + _STRUCTURE_BYTES * (count + 4 * len(objects)) + (16 << 20)


_STRUCTURE_BYTES = 16 << 10   # HDF5 headers, B-tree nodes and heaps per dataset or group, with room to spare

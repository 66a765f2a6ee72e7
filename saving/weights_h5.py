"""Keras 3's weights layout in HDF5: ``<path>/vars/<i>`` for every saveable object.

Used as it is for ``.weights.h5`` files and for the ``model.weights.h5``
member of a ``.keras`` archive. ``<path>`` comes from ``object_walk``; the
``vars`` group of an object with a name carries it as the attribute
``@name`` (written for fidelity, ignored on read). Datasets hold the raw
arrays (shape ``()`` for scalars), indexed ``"0" .. "n-1"``.
"""
import h5py
import numpy as np

from .errors import FileContentError
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
def _vars_group(h5, path, source):
    candidates = [join(path, "vars")]
    if path == "layers" or path.startswith("layers/"):
        # Keras 2.13 wrote the layers of a model under this name.
        candidates.append("_layer_checkpoint_dependencies" + path[len("layers"):] + "/vars")
    for candidate in candidates:
        try:
            group = h5.get(candidate)
        except (KeyError, OSError, RuntimeError) as e:
            raise FileContentError(f"Cannot read '{source}': the HDF5 structure at '/{candidate}' is corrupted "
                                   f"({e}).") from e
        if group is None:
            continue
        if not isinstance(group, h5py.Group):
            raise FileContentError(f"Cannot read '{source}': '/{candidate}' should be a group of variables, but it "
                                   "is a dataset.")
        return group
    return None


def read_dataset(dataset, source):
    """The array stored in ``dataset``; damaged data raises a FileContentError naming it."""
    if not isinstance(dataset, h5py.Dataset):
        raise FileContentError(f"Cannot read '{source}': '{dataset.name}' should hold a variable's values, but "
                               "it is a group.")
    if dataset.dtype.kind not in "biuf":
        raise FileContentError(f"Cannot read '{source}': '{dataset.name}' holds {dataset.dtype} data, not the "
                               "numbers of a variable.")
    try:
        return dataset[()]
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        raise FileContentError(f"Cannot read '{source}': the data of '{dataset.name}' is corrupted or truncated "
                               f"({e}).") from e


def read_store(group, source):
    """``{"0": array, ...}`` from a ``vars`` group, read fully into memory."""
    try:
        keys = list(group.keys())
        items = [(key, group[key]) for key in keys]
    except (KeyError, OSError, RuntimeError) as e:
        raise FileContentError(f"Cannot read '{source}': the group '{group.name}' is corrupted ({e}).") from e
    return {key: read_dataset(item, source) for key, item in items}


def read_weights(h5, root, source):
    """[(path, object, store or None)] for every saveable of ``root``; None where the file has no group."""
    out = []
    for path, obj in walk(root):
        if not has_own_variables_methods(obj):
            continue
        group = _vars_group(h5, path, source)
        out.append((path, obj, None if group is None else read_store(group, source)))
    return out

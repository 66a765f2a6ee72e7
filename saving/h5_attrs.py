"""String attributes of legacy Keras HDF5 files, written with the types Keras uses.

Lists of names (``layer_names``, ``weight_names``) are variable-length ASCII
string arrays; an empty list is an empty float64 array (Keras's quirk); a
list longer than 64512 bytes is split into ``name0``, ``name1``, ... as
Keras does for HDF5 object headers. Readers accept all of these, and str or
bytes values.
"""
import h5py
import numpy as np

HEADER_LIMIT = 64512


def set_string(obj, name, value, encoding="utf-8"):
    obj.attrs.create(name, value.encode("utf-8"), dtype=h5py.string_dtype(encoding))


def _as_str(value):
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def get_string(obj, name):
    value = obj.attrs.get(name)
    return None if value is None else _as_str(value)


def _chunks(encoded):
    chunks, current, size = [], [], 0
    for item in encoded:
        if current and size + len(item) > HEADER_LIMIT:
            chunks.append(current)
            current, size = [], 0
        current.append(item)
        size += len(item)
    chunks.append(current)
    return chunks


def _write_list(obj, name, encoded):
    if not encoded:
        obj.attrs.create(name, np.zeros((0,), dtype=np.float64))
        return
    obj.attrs.create(name, np.array(encoded, dtype=object), dtype=h5py.string_dtype("ascii"))


def set_string_list(obj, name, values):
    encoded = [v.encode("utf-8") for v in values]
    too_long = [v for v, e in zip(values, encoded) if len(e) > HEADER_LIMIT]
    if too_long:
        raise ValueError(f"Cannot save the attribute '{name}': these entries are longer than {HEADER_LIMIT} "
                         f"bytes: {too_long}")
    chunks = _chunks(encoded)
    if len(chunks) == 1:
        _write_list(obj, name, chunks[0])
        return
    for i, chunk in enumerate(chunks):
        _write_list(obj, f"{name}{i}", chunk)


def _read_list(value):
    return [_as_str(v) for v in np.asarray(value).reshape(-1)] if np.asarray(value).dtype.kind in "OSU" else []


def get_string_list(obj, name):
    """The list stored as ``name`` (or as chunks ``name0, name1, ...``); None when absent."""
    if name in obj.attrs:
        return _read_list(obj.attrs[name])
    if f"{name}0" not in obj.attrs:
        return None
    out, i = [], 0
    while f"{name}{i}" in obj.attrs:
        out.extend(_read_list(obj.attrs[f"{name}{i}"]))
        i += 1
    return out


def has_list(obj, name):
    return name in obj.attrs or f"{name}0" in obj.attrs

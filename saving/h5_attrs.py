"""String attributes of legacy Keras HDF5 files, written with the types Keras uses.

Lists of names (``layer_names``, ``weight_names``) are variable-length ASCII
string arrays; an empty list is an empty float64 array (Keras's quirk); a
list longer than 64512 bytes is split into ``name0``, ``name1``, ... as
Keras does for HDF5 object headers. Readers accept all of these, and str or
bytes values; they read the ``attrs`` of ``h5_reader`` objects and raise a
FileContentError naming the attribute for anything else.
"""
import h5py
import numpy as np

from .errors import FileContentError

HEADER_LIMIT = 64512


def set_string(obj, name, value, encoding="utf-8"):
    obj.attrs.create(name, value.encode("utf-8"), dtype=h5py.string_dtype(encoding))


def _problem(obj, name, what):
    return FileContentError(f"Cannot read '{obj.file.source}': the attribute '{name}' of '{obj.name}' {what}.")


def _as_str(value, obj, name):
    if isinstance(value, (bytes, np.bytes_)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise _problem(obj, name, f"is not valid UTF-8 ({e})") from None
    if isinstance(value, str):
        return value
    raise _problem(obj, name, f"should be a string, but it holds {type(value).__name__} data")


def get_string(obj, name):
    value = obj.attrs.get(name)
    return None if value is None else _as_str(value, obj, name)


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


def _read_list(value, obj, name):
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        return [_as_str(v, obj, name) for v in array.reshape(-1)]
    if array.size == 0:
        return []   # Keras writes an empty list as an empty float64 array
    raise _problem(obj, name, f"should be a list of names, but it holds {array.dtype} numbers")


def get_string_list(obj, name):
    """The list stored as ``name`` (or as chunks ``name0, name1, ...``); None when absent."""
    if name in obj.attrs:
        return _read_list(obj.attrs[name], obj, name)
    if f"{name}0" not in obj.attrs:
        return None
    out, i = [], 0
    while f"{name}{i}" in obj.attrs:
        out.extend(_read_list(obj.attrs[f"{name}{i}"], obj, f"{name}{i}"))
        i += 1
    return out


def has_list(obj, name):
    return name in obj.attrs or f"{name}0" in obj.attrs

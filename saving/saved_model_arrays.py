"""Reading a SavedModel's variables.h5: only the members the graph names, only data that is there.

Each member is reached through hard links only (a soft or external link could point
anywhere, another file included), must be a plain dataset stored in the file itself
(contiguous or compact: no external storage, no virtual dataset, no filters), of a
tapeflow dtype and of the shape the graph declares, and its bytes must really lie
in the file, so reading costs what the file holds. All of that is checked on the
metadata before any data is read.
"""
import os

import numpy as np

from tapeflow.framework import dtypes

from .errors import FileContentError
from .op_attributes import MAX_RANK

_TAPEFLOW_DTYPES = {np.dtype(d._np) for d in dtypes._ALL}


# What h5py raises for a damaged file: OSError and RuntimeError from the HDF5 library, KeyError,
# ValueError and TypeError from its Python layer.
_H5_ERRORS = (OSError, RuntimeError, KeyError, ValueError, TypeError)


def read_arrays(path, expected):
    """{member: array} for ``expected``: {member: (shape or None, numpy dtype or None)}."""
    import h5py
    if not os.path.isfile(path):
        raise OSError(f"SavedModel variables file {path} does not exist or is not a file")
    try:
        f = h5py.File(path, "r")
    except _H5_ERRORS as err:
        raise FileContentError(f"SavedModel {path} is not a readable HDF5 file ({err})") from None
    with f:
        file_size = os.path.getsize(path)
        datasets = {member: _checked(_dataset, f, path, member, shape, dtype, file_size)
                    for member, (shape, dtype) in expected.items()}
        return {member: _checked(lambda d, *_: np.asarray(d[()]), dataset, path, member)
                for member, dataset in datasets.items()}


def _checked(step, node, path, member, *args):
    """Runs one step on ``member``; any error h5py raises becomes a FileContentError naming it."""
    try:
        return step(node, path, member, *args)
    except FileContentError:
        raise
    except _H5_ERRORS as err:
        raise FileContentError(f"SavedModel {path}: member {member!r}: it cannot be read "
                               f"({type(err).__name__}: {err})") from None


def _dataset(f, path, member, shape, dtype, file_size):
    import h5py
    from h5py import h5d

    def fail(problem):
        raise FileContentError(f"SavedModel {path}: member {member!r}: {problem}")

    node = f
    for part in member.split("/"):
        if not isinstance(node, h5py.Group):
            fail("a parent of it is not a group")
        link = node.get(part, getlink=True)
        if link is None:
            fail("is missing")
        if not isinstance(link, h5py.HardLink):
            fail(f"is reached through a {type(link).__name__}, which could point outside the file")
        node = node[part]
    if not isinstance(node, h5py.Dataset):
        fail(f"expected a dataset, found a {type(node).__name__}")
    plist = node.id.get_create_plist()
    layout = plist.get_layout()
    if layout == h5d.VIRTUAL:
        fail("is a virtual dataset, whose data lives in other files")
    if plist.get_external_count():
        fail("keeps its data in external files")
    if layout not in (h5d.CONTIGUOUS, h5d.COMPACT) or plist.get_nfilters():
        fail("is chunked or filtered, which tapeflow never writes")
    stored_shape, stored_dtype = node.shape, node.dtype
    if stored_shape is None or len(stored_shape) > MAX_RANK:
        fail(f"has no shape or more than {MAX_RANK} dimensions")
    if stored_dtype not in _TAPEFLOW_DTYPES:
        fail(f"has dtype {stored_dtype}, which is not a tapeflow dtype")
    if dtype is not None and stored_dtype != dtype:
        fail(f"has dtype {stored_dtype}, but the graph declares {dtype}")
    if shape is not None and tuple(stored_shape) != tuple(shape):
        fail(f"has shape {tuple(stored_shape)}, but the graph declares {tuple(shape)}")
    nbytes = int(np.prod(stored_shape, dtype=object)) * stored_dtype.itemsize
    stored = node.id.get_storage_size()
    offset = node.id.get_offset() if layout == h5d.CONTIGUOUS else 0
    if nbytes and (stored != nbytes or offset is None or offset + nbytes > file_size):
        fail(f"declares {nbytes} bytes of data, but the file holds {stored} bytes of it")
    return node

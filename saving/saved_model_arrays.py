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


def read_arrays(path, expected):
    """{member: array} for ``expected``: {member: (shape or None, numpy dtype or None)}."""
    import h5py
    if not os.path.isfile(path):
        raise OSError(f"SavedModel variables file {path} does not exist or is not a file")
    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise FileContentError(f"SavedModel {path} is not a readable HDF5 file ({err})") from None
    with f:
        file_size = os.path.getsize(path)
        datasets = {member: _dataset(f, path, member, shape, dtype, file_size)
                    for member, (shape, dtype) in expected.items()}
        arrays = {}
        for member, dataset in datasets.items():
            try:
                arrays[member] = np.asarray(dataset[()])
            except (OSError, ValueError, TypeError) as err:
                raise FileContentError(f"SavedModel {path}: member {member!r}: its data cannot be read ({err})") \
                    from None
        return arrays


def _dataset(f, path, member, shape, dtype, file_size):
    import h5py
    from h5py import h5d

    def fail(problem):
        raise FileContentError(f"SavedModel {path}: member {member!r}: {problem}")

    node = f
    for part in member.split("/"):
        if not isinstance(node, h5py.Group):
            fail("a parent of it is not a group")
        try:
            link = node.get(part, getlink=True)
        except (KeyError, OSError, ValueError) as err:
            fail(f"cannot be looked up ({err})")
        if link is None:
            fail("is missing")
        if not isinstance(link, h5py.HardLink):
            fail(f"is reached through a {type(link).__name__}, which could point outside the file")
        try:
            node = node[part]
        except (KeyError, OSError, ValueError, TypeError) as err:
            fail(f"cannot be opened ({err})")
    if not isinstance(node, h5py.Dataset):
        fail(f"expected a dataset, found a {type(node).__name__}")
    try:
        plist = node.id.get_create_plist()
        layout = plist.get_layout()
        external = plist.get_external_count()
        filters = plist.get_nfilters()
        stored_shape, stored_dtype = node.shape, node.dtype
    except (OSError, ValueError, TypeError) as err:
        fail(f"its layout cannot be read ({err})")
    if layout == h5d.VIRTUAL:
        fail("is a virtual dataset, whose data lives in other files")
    if external:
        fail("keeps its data in external files")
    if layout not in (h5d.CONTIGUOUS, h5d.COMPACT) or filters:
        fail("is chunked or filtered, which tapeflow never writes")
    if stored_shape is None or len(stored_shape) > MAX_RANK:
        fail(f"has no shape or more than {MAX_RANK} dimensions")
    if stored_dtype not in _TAPEFLOW_DTYPES:
        fail(f"has dtype {stored_dtype}, which is not a tapeflow dtype")
    if dtype is not None and stored_dtype != dtype:
        fail(f"has dtype {stored_dtype}, but the graph declares {dtype}")
    if shape is not None and tuple(stored_shape) != tuple(shape):
        fail(f"has shape {tuple(stored_shape)}, but the graph declares {tuple(shape)}")
    nbytes = int(np.prod(stored_shape, dtype=object)) * stored_dtype.itemsize
    try:
        stored = node.id.get_storage_size()
        offset = node.id.get_offset() if layout == h5d.CONTIGUOUS else 0
    except (OSError, ValueError) as err:
        fail(f"its storage cannot be read ({err})")
    if nbytes and (stored != nbytes or offset is None or offset + nbytes > file_size):
        fail(f"declares {nbytes} bytes of data, but the file holds {stored} bytes of it")
    return node

"""Reading a SavedModel's variables.h5: only the members the graph names, only data that is there.

The file is read with ``h5_reader`` (never libhdf5, which trusts what it reads): links, external
storage, virtual datasets and object references are refused, and every address and size is checked
against the file. Each member must be a dataset of a tapeflow dtype and of the dtype and shape the
graph declares; all of that is checked on the headers before any data is read, so reading costs
what the model holds.
"""
import os

import numpy as np

from tapeflow.framework import dtypes

from . import h5_reader
from .errors import FileContentError
from .op_attributes import MAX_RANK

_TAPEFLOW_DTYPES = {np.dtype(d._np) for d in dtypes._ALL}


def read_arrays(path, expected):
    """{member: array} for ``expected``: {member: (shape or None, numpy dtype or None)}."""
    if not os.path.isfile(path):
        raise OSError(f"SavedModel variables file {path} does not exist or is not a file")
    with h5_reader.H5File.open(path, source=f"SavedModel {path}") as f:
        datasets = {member: _dataset(f, path, member, shape, dtype) for member, (shape, dtype) in expected.items()}
        return {member: dataset.read() for member, dataset in datasets.items()}


def _dataset(f, path, member, shape, dtype):
    def fail(problem):
        raise FileContentError(f"SavedModel {path}: member {member!r}: {problem}")

    node = f.root.get(member)
    if node is None:
        fail("is missing")
    if not isinstance(node, h5_reader.Dataset):
        fail("expected a dataset, found a group")
    if len(node.shape) > MAX_RANK:
        fail(f"has more than {MAX_RANK} dimensions")
    if node.dtype not in _TAPEFLOW_DTYPES:
        fail(f"has dtype {node.dtype}, which is not a tapeflow dtype")
    if dtype is not None and node.dtype != dtype:
        fail(f"has dtype {node.dtype}, but the graph declares {dtype}")
    if shape is not None and tuple(node.shape) != tuple(shape):
        fail(f"has shape {tuple(node.shape)}, but the graph declares {tuple(shape)}")
    return node

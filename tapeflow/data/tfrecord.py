"""TFRecordDataset: the records of one or more TFRecord files (``tapeflow.io.tfrecord``), as scalar strings.

Files are read lazily, one after another, at each iteration; a missing file raises ``NotFoundError`` and a
damaged record ``DataLossError`` when iteration reaches it, as in TensorFlow.
"""
import numpy as np

from ..framework import dtypes
from ..framework.tensor_spec import TensorSpec
from ..io.tfrecord import _compression_name, read_records
from .dataset import UNKNOWN_CARDINALITY, Dataset
from .text_files import _filenames


class TFRecordDataset(Dataset):
    _tf_name = "TFRecordDatasetV2"
    _runs_python = True    # file I/O

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        self._files = _filenames(filenames)
        self._compression = _compression_name(compression_type)

    def _compute_spec(self):
        return TensorSpec((), dtypes.string)

    def _compute_cardinality(self):
        return UNKNOWN_CARDINALITY

    def _iterate(self):
        for filename in self._files:
            for record in read_records(filename, self._compression):
                value = np.empty((), dtype=object)
                value[()] = record
                yield value

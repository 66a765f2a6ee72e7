"""TFRecordDataset: the records of one or more TFRecord files (``tapeflow.io.tfrecord``), as scalar strings.

Files are read lazily, one after another, at each iteration; a missing file raises ``NotFoundError`` and a
damaged record ``DataLossError`` when iteration reaches it, as in TensorFlow.
"""
from ..io.tfrecord import _compression_name, read_records
from .text_files import FileRecordsDataset


class TFRecordDataset(FileRecordsDataset):
    _tf_name = "TFRecordDatasetV2"

    @staticmethod
    def _compression_of(compression_type):
        return _compression_name(compression_type)

    def _records(self, filename):
        return read_records(filename, self._compression)

"""tf.data: input pipelines (``tf.data.Dataset``), built to TensorFlow's documented behaviour.

Elements are tapeflow Tensors (strings are string tensors holding bytes).
Differences from TensorFlow: user functions (map, filter, ...) run eagerly per
element, so their Python side effects happen per element rather than once at
trace time; the random order of ``shuffle`` follows its own generator (the
same for the same seed, but not TensorFlow's sequence); a checkpointed
iterator (``tf.train.Checkpoint(iterator=it)``) restores its position by
replaying the pipeline (iterator_state.py), not from saved buffers.
"""
from . import experimental  # noqa: F401
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
from .iterator import NumpyIterator, OwnedIterator  # noqa: F401
from .iterator import OwnedIterator as Iterator  # noqa: F401
from .options import AutotuneOptions, DistributeOptions, OptimizationOptions, Options, ThreadingOptions  # noqa: F401
from .structure import DatasetSpec  # noqa: F401
from .text_files import CsvDataset, TextLineDataset  # noqa: F401
from .tfrecord import TFRecordDataset  # noqa: F401

"""``tf.train``: object-based checkpoints (``tapeflow.saving.checkpoint``). Loaded on first use of ``tf.train``."""
from tapeflow.saving.checkpoint import (Checkpoint, CheckpointLoadStatus, CheckpointManager,  # noqa: F401
                                        CheckpointOptions, InitializationOnlyStatus, latest_checkpoint,
                                        list_variables, load_checkpoint, load_variable)
from tapeflow.saving.checkpoint_state import CheckpointState  # noqa: F401
from tapeflow.saving.checkpoint_state import read_state as _read_state


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The ``CheckpointState`` recorded in ``checkpoint_dir`` (paths joined to it), or None."""
    return _read_state(checkpoint_dir, latest_filename or "checkpoint")


_EXAMPLE_PROTOS = ("BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features", "FloatList",
                   "Int64List", "SequenceExample")


def __getattr__(name):
    """``tf.train.Example`` and its parts need protobuf: loaded on first use (tapeflow.io.example_protos)."""
    if name in _EXAMPLE_PROTOS:
        from tapeflow.io import example_protos
        return getattr(example_protos, name)
    raise AttributeError(f"module 'tapeflow.train' has no attribute {name!r}")

"""tf.keras.preprocessing.sequence: pad_sequences."""
from tapeflow.layers.utils.sequence_utils import pad_sequences  # noqa: F401

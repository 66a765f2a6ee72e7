"""tf.keras.utils: re-exports of tapeflow.layers.utils and friends (seeding, label encoding, sequences,
files, serialization helpers, the progress bar, PyDataset)."""
from tapeflow.layers.serialization_lib import (custom_object_scope, deserialize_keras_object,  # noqa: F401
                                               register_keras_serializable, serialize_keras_object)
from tapeflow.layers.trainers.data_adapter import PyDataset  # noqa: F401
from tapeflow.layers.trainers.data_adapter import PyDataset as Sequence  # noqa: F401
from tapeflow.layers.utils.file_utils import get_file  # noqa: F401
from tapeflow.layers.utils.numerical_utils import normalize, to_categorical  # noqa: F401
from tapeflow.layers.utils.progbar import Progbar  # noqa: F401
from tapeflow.layers.utils.rng_utils import set_random_seed  # noqa: F401
from tapeflow.layers.utils.sequence_utils import pad_sequences  # noqa: F401

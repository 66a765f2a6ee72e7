"""tf.keras.utils: re-exports of tapeflow.layers.utils and friends (seeding, label encoding, sequences,
files, serialization helpers, the progress bar, PyDataset)."""
from tapeflow.layers.backend import clear_session  # noqa: F401
from tapeflow.saving.registry import (CustomObjectScope, custom_object_scope, get_custom_objects,  # noqa: F401
                                     get_registered_name, get_registered_object, register_keras_serializable)
from tapeflow.saving.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401
from tapeflow.layers.trainers.data_adapter import PyDataset  # noqa: F401
from tapeflow.layers.trainers.data_adapter import PyDataset as Sequence  # noqa: F401
from tapeflow.layers.utils.file_utils import get_file  # noqa: F401
from tapeflow.layers.utils.numerical_utils import normalize, to_categorical  # noqa: F401
from tapeflow.layers.utils.progbar import Progbar  # noqa: F401
from tapeflow.layers.utils.rng_utils import set_random_seed  # noqa: F401
from tapeflow.layers.utils.sequence_utils import pad_sequences  # noqa: F401
from tapeflow.layers.trainers.data_adapter import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401
from tapeflow.layers.utils.dataset_utils import split_dataset  # noqa: F401

from tapeflow.layers.utils.timeseries import timeseries_dataset_from_array  # noqa: F401
from tapeflow.layers.utils.image_dataset import image_dataset_from_directory  # noqa: F401
from tapeflow.layers.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from tapeflow.layers.utils.image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401
from tapeflow.layers.utils.model_visualization import model_to_dot, plot_model  # noqa: F401

# Names from tapeflow.keras_ops, which is loaded on first use (it is not needed by ``import tapeflow``).
_FROM_KERAS_OPS = {"is_keras_tensor": "tapeflow.keras_ops.keras_tensor", "standardize_dtype": "tapeflow.keras_ops.dtypes",
                   "enable_interactive_logging": "tapeflow.keras_ops.config",
                   "disable_interactive_logging": "tapeflow.keras_ops.config",
                   "is_interactive_logging_enabled": "tapeflow.keras_ops.config"}


def __getattr__(name):
    if name in _FROM_KERAS_OPS:
        import importlib
        value = getattr(importlib.import_module(_FROM_KERAS_OPS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tapeflow.keras.utils' has no attribute {name!r}")

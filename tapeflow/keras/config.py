"""tf.keras.config: re-exports tapeflow.keras_ops.config (the settings live in tapeflow.layers.backend)."""
from tapeflow.keras_ops.config import (backend, disable_interactive_logging, disable_traceback_filtering,  # noqa: F401
                                       dtype_policy, enable_interactive_logging, enable_traceback_filtering,
                                       enable_unsafe_deserialization, epsilon, floatx, image_data_format,
                                       is_interactive_logging_enabled, is_traceback_filtering_enabled, set_epsilon,
                                       set_floatx, set_image_data_format)

"""tf.keras.backend: session state (names), floatx and epsilon."""
from tapeflow.layers.backend import (backend, clear_session, epsilon, floatx, image_data_format,  # noqa: F401
                                     set_epsilon, set_floatx)

"""tf.keras.regularizers: re-exports tapeflow.layers.regularizers."""
from tapeflow.layers.regularizers import *  # noqa: F401,F403
from tapeflow.layers.regularizers import deserialize, get, serialize  # noqa: F401

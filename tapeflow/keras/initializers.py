"""tf.keras.initializers: re-exports tapeflow.layers.initializers."""
from tapeflow.layers.initializers import *  # noqa: F401,F403
from tapeflow.layers.initializers import deserialize, get, serialize  # noqa: F401

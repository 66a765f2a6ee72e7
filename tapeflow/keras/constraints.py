"""tf.keras.constraints: re-exports tapeflow.layers.constraints."""
from tapeflow.layers.constraints import *  # noqa: F401,F403
from tapeflow.layers.constraints import deserialize, get, serialize  # noqa: F401

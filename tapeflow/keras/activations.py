"""tf.keras.activations: re-exports tapeflow.layers.activations."""
from tapeflow.layers.activations import *  # noqa: F401,F403
from tapeflow.layers.activations import deserialize, get, serialize  # noqa: F401

"""tf.keras.metrics: re-exports tapeflow.layers.metrics."""
from tapeflow.layers.metrics import *  # noqa: F401,F403
from tapeflow.layers.metrics import deserialize, get, serialize  # noqa: F401

"""tf.keras.losses: re-exports tapeflow.layers.losses."""
from tapeflow.layers.losses import *  # noqa: F401,F403
from tapeflow.layers.losses import deserialize, get, serialize  # noqa: F401

"""tf.keras.callbacks: re-exports tapeflow.layers.callbacks."""
from tapeflow.layers.callbacks import *  # noqa: F401,F403


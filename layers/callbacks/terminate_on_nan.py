"""TerminateOnNaN: stops training when the loss is NaN or infinite."""
import math

import numpy as np

from ..serialization_lib import keras_export
from .callback import Callback


@keras_export("keras.callbacks.TerminateOnNaN")
class TerminateOnNaN(Callback):
    """Stops training as soon as the batch loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(np.asarray(loss))):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True

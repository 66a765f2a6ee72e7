"""tf.keras.callbacks: re-exports tapeflow.layers.callbacks (ModelCheckpoint saves through tapeflow.saving)."""
from tapeflow.layers.callbacks import (CSVLogger, Callback, CallbackList, EarlyStopping, History,  # noqa: F401
                                       LambdaCallback, LearningRateScheduler, ModelCheckpoint, ProgbarLogger,
                                       ReduceLROnPlateau, TerminateOnNaN)

"""tf.keras.callbacks: re-exports tapeflow.layers.callbacks (ModelCheckpoint comes with tapeflow.saving)."""
from tapeflow.layers.callbacks import (CSVLogger, Callback, CallbackList, EarlyStopping, History,  # noqa: F401
                                       LambdaCallback, LearningRateScheduler, ProgbarLogger, ReduceLROnPlateau,
                                       TerminateOnNaN)

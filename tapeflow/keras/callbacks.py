"""tf.keras.callbacks: re-exports tapeflow.layers.callbacks (ModelCheckpoint saves through tapeflow.saving)."""
from tapeflow.layers.callbacks import (BackupAndRestore, CSVLogger, Callback, CallbackList,  # noqa: F401
                                       EarlyStopping, History, LambdaCallback, LearningRateScheduler,
                                       ModelCheckpoint, ProgbarLogger, ReduceLROnPlateau, TensorBoard,
                                       TerminateOnNaN)

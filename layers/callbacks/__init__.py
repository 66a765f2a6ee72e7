"""Callbacks (``tf.keras.callbacks``)."""
from .callbacks import (BackupAndRestore, CSVLogger, Callback, CallbackList, EarlyStopping, History,  # noqa: F401
                        LambdaCallback, LearningRateScheduler, ModelCheckpoint, ProgbarLogger,
                        ReduceLROnPlateau, TensorBoard, TerminateOnNaN)

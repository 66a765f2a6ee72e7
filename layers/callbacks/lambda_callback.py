"""LambdaCallback: a callback built from plain functions."""
from ..serialization_lib import keras_export
from .callback import Callback


@keras_export("keras.callbacks.LambdaCallback")
class LambdaCallback(Callback):
    """A callback made of plain functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    _HOOKS = ("on_epoch_begin", "on_epoch_end", "on_train_begin", "on_train_end", "on_train_batch_begin",
              "on_train_batch_end", "on_batch_begin", "on_batch_end", "on_test_begin", "on_test_end",
              "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
              "on_predict_batch_begin", "on_predict_batch_end")

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(kwargs, on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        unknown = set(given) - set(self._HOOKS)
        if unknown:
            raise ValueError(f"LambdaCallback got unknown hooks: {sorted(unknown)}. Known hooks: {self._HOOKS}")
        self._functions = {k: v for k, v in given.items() if v is not None}

    def _dispatch(self, hook, *args):
        fn = self._functions.get(hook)
        if fn is not None:
            fn(*args)

    def on_epoch_begin(self, epoch, logs=None):
        self._dispatch("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._dispatch("on_epoch_end", epoch, logs)

    def on_train_begin(self, logs=None):
        self._dispatch("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._dispatch("on_train_end", logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._dispatch("on_train_batch_begin", batch, logs)
        self._dispatch("on_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._dispatch("on_train_batch_end", batch, logs)
        self._dispatch("on_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._dispatch("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._dispatch("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._dispatch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._dispatch("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._dispatch("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._dispatch("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._dispatch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._dispatch("on_predict_batch_end", batch, logs)

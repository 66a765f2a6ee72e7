"""CallbackList: calls every callback in order; adds History and the progress bar when asked."""
from ..serialization_lib import keras_export
from .callback import Callback
from .history import History
from .progbar_logger import ProgbarLogger


def _overrides(callback, *names):
    return any(getattr(type(callback), n) is not getattr(Callback, n) for n in names)


_BATCH_HOOKS = {
    "on_train_batch_begin": ("on_train_batch_begin", "on_batch_begin"),
    "on_train_batch_end": ("on_train_batch_end", "on_batch_end"),
    "on_test_batch_begin": ("on_test_batch_begin",),
    "on_test_batch_end": ("on_test_batch_end",),
    "on_predict_batch_begin": ("on_predict_batch_begin",),
    "on_predict_batch_end": ("on_predict_batch_end",),
}


@keras_export("keras.callbacks.CallbackList")
class CallbackList(Callback):
    """Calls every callback in order; adds History and the progress bar when asked."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks) if callbacks else []
        for cb in self.callbacks:
            if not isinstance(cb, Callback) and not hasattr(cb, "on_epoch_end"):
                raise TypeError(f"Expected a Callback instance, got {cb!r} of type {type(cb).__name__}")
        history = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        progbar = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if history is None and add_history:
            self.callbacks.append(History())
        if progbar is None and add_progbar:
            self.callbacks.append(ProgbarLogger())
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)
        self._batch_callbacks = {hook: [cb for cb in self.callbacks if not isinstance(cb, Callback)
                                        or _overrides(cb, *names)] for hook, names in _BATCH_HOOKS.items()}

    def append(self, callback):
        self.callbacks.append(callback)
        for hook, names in _BATCH_HOOKS.items():
            if _overrides(callback, *names):
                self._batch_callbacks[hook].append(callback)

    def set_params(self, params):
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        for cb in self.callbacks:
            cb.set_model(model)

    def _call(self, hook, *args):
        *head, logs = args
        logs = {} if logs is None else logs  # Keras hands every hook a dict, never None
        for cb in self.callbacks:
            getattr(cb, hook)(*head, logs)

    def _call_batch(self, hook, batch, logs):
        logs = {} if logs is None else logs
        for cb in self._batch_callbacks[hook]:
            getattr(cb, hook)(batch, logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch("on_predict_batch_end", batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

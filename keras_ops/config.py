"""``keras.config``: floatx, epsilon and the image data format (kept by ``tapeflow.layers.backend``),
and the switches Keras scripts call.

The settings live in one place, ``tapeflow.layers.backend``; this module reads
and writes them there. It is imported lazily so that ``tapeflow.keras_ops``
does not load the layers package at import.
"""
import warnings

_FORMATS = ("channels_last", "channels_first")
_switches = {"interactive_logging": True, "traceback_filtering": True}


def _backend():
    from tapeflow.layers import backend
    return backend


def floatx():
    """The default float dtype name, ``"float32"`` unless changed with ``set_floatx``."""
    return _backend().floatx()


def set_floatx(value):
    _backend().set_floatx(value)


def epsilon():
    """The fuzz factor of numeric expressions (``1e-7`` by default)."""
    return _backend().epsilon()


def set_epsilon(value):
    _backend().set_epsilon(value)


def image_data_format():
    return _backend().image_data_format()


def set_image_data_format(data_format):
    data_format = str(data_format).lower()
    if data_format not in _FORMATS:
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format}")
    # layers.backend has no setter of its own yet: its settings dict is the one store of the format.
    _backend()._config["image_data_format"] = data_format


def backend():
    return _backend().backend()


def enable_unsafe_deserialization():
    """Accepted for compatibility; tapeflow never turns file contents into code, so lambdas stay refused."""
    warnings.warn("enable_unsafe_deserialization: tapeflow never deserializes code (lambdas, bytecode) from a "
                  "file; models holding them still fail to load with a clear error.", stacklevel=2)


def enable_interactive_logging():
    _switches["interactive_logging"] = True


def disable_interactive_logging():
    _switches["interactive_logging"] = False


def is_interactive_logging_enabled():
    return _switches["interactive_logging"]


def enable_traceback_filtering():
    _switches["traceback_filtering"] = True


def disable_traceback_filtering():
    _switches["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    return _switches["traceback_filtering"]


def dtype_policy():
    """The global dtype policy: floatx's policy (tapeflow has no separate global policy)."""
    from tapeflow.layers.dtype_policy import DTypePolicy
    return DTypePolicy(floatx())

"""Optimizers (``tapeflow.optimizers``, also ``tf.keras.optimizers``): the Keras 3 optimizers.

>>> opt = tapeflow.optimizers.Adam(learning_rate=1e-3)
>>> opt.apply_gradients(zip(grads, model.trainable_variables))

``get`` accepts a name ('adam', case-insensitive), a ``serialize`` dict or an
instance; ``schedules`` holds the learning-rate schedules.
"""
from . import schedules
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .base_optimizer import Optimizer
from .lion import Lion
from .nadam import Nadam
from .newton import Newton
from .rmsprop import RMSprop
from .sgd import SGD

_MODULE = "keras.optimizers"
_BUILTIN = (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Lion, Newton)
ALL_OBJECTS_DICT = {cls.__name__.lower(): cls for cls in _BUILTIN}

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Lion", "Newton",
           "schedules", "get", "serialize", "deserialize"]


def serialize(optimizer):
    """``{"module": "keras.optimizers", "class_name": ..., "config": ..., "registered_name": ...}``."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"`serialize` expects an Optimizer instance. Received: {optimizer!r} of type "
                        f"{type(optimizer).__name__}")
    cls = type(optimizer)
    builtin = ALL_OBJECTS_DICT.get(cls.__name__.lower()) is cls
    return {"module": _MODULE if builtin else cls.__module__, "class_name": cls.__name__,
            "config": optimizer.get_config(), "registered_name": None if builtin else cls.__name__}


def deserialize(config, custom_objects=None):
    """Builds an optimizer from ``serialize``'s dict; built-in class names
    are matched case-insensitively, custom classes come from ``custom_objects``."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError("Could not interpret optimizer config: expected a dict with 'class_name' and 'config' "
                         f"keys. Received: {config!r}")
    class_name = config["class_name"]
    custom_objects = custom_objects or {}
    cls = custom_objects.get(config.get("registered_name") or class_name) or custom_objects.get(class_name)
    if cls is None and isinstance(class_name, str):
        cls = ALL_OBJECTS_DICT.get(class_name.lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer: '{class_name}'. Built-in optimizers are "
                         f"{[c.__name__ for c in _BUILTIN]}; pass custom optimizer classes in `custom_objects`.")
    return cls.from_config(dict(config.get("config") or {}), custom_objects=custom_objects) \
        if _accepts_custom_objects(cls) else cls.from_config(dict(config.get("config") or {}))


def _accepts_custom_objects(cls):
    import inspect
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False


def get(identifier):
    """An optimizer from a name ('adam', 'SGD', ...), a config dict or an instance."""
    if identifier is None:
        return None
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")

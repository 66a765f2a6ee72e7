"""Optimizers (``tapeflow.optimizers``, also ``tf.keras.optimizers``): the Keras 3 optimizers.

>>> opt = tapeflow.optimizers.Adam(learning_rate=1e-3)
>>> opt.apply_gradients(zip(grads, model.trainable_variables))

``get`` accepts a name ('adam', case-insensitive), a ``serialize`` dict or an
instance; ``schedules`` holds the learning-rate schedules.
"""
from tapeflow.saving.registry import find, keras_export
from tapeflow.saving.serialization_lib import instantiate, serialize_keras_object

from . import schedules
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .base_optimizer import Optimizer
from .ftrl import Ftrl
from .lamb import Lamb
from .lion import Lion
from .nadam import Nadam
from .newton import Newton
from .rmsprop import RMSprop
from .sgd import SGD

_MODULE = "keras.optimizers"
_BUILTIN = (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Lion, Newton, Ftrl, Adafactor, Lamb)
ALL_OBJECTS_DICT = {cls.__name__.lower(): cls for cls in _BUILTIN}
for _cls in _BUILTIN:
    keras_export(f"{_MODULE}.{_cls.__name__}")(_cls)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Lion", "Newton",
           "Ftrl", "Adafactor", "Lamb", "schedules", "get", "serialize", "deserialize"]


def serialize(optimizer):
    """``{"module": "keras.optimizers", "class_name": ..., "config": ..., "registered_name": ...}``."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"`serialize` expects an Optimizer instance. Received: {optimizer!r} of type "
                        f"{type(optimizer).__name__}")
    return serialize_keras_object(optimizer)


def optimizer_class(config, custom_objects=None):
    """The optimizer class a config names, by the registry's one lookup (custom objects first); a
    built-in name also matches case-insensitively ('adam'), as in Keras. None when none matches."""
    class_name = config.get("class_name")
    found = find(class_name, config.get("registered_name"), config.get("module"), custom_objects)
    if found is None and isinstance(class_name, str):
        found = ALL_OBJECTS_DICT.get(class_name.lower())
    return found


def deserialize(config, custom_objects=None):
    """Builds an optimizer from ``serialize``'s dict; built-in class names
    are matched case-insensitively, custom classes come from the registry or ``custom_objects``."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError("Could not interpret optimizer config: expected a dict with 'class_name' and 'config' "
                         f"keys. Received: {config!r}")
    cls = optimizer_class(config, custom_objects)
    if cls is None:
        raise ValueError(f"Unknown optimizer: '{config['class_name']}'. Built-in optimizers are "
                         f"{[c.__name__ for c in _BUILTIN]}; pass custom optimizer classes in `custom_objects`.")
    return instantiate(cls, dict(config.get("config") or {}), custom_objects)


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

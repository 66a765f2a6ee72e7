"""Saving and loading (``tapeflow.saving``, also ``tf.keras.saving``).

Keras 3's file formats, readable by real Keras and reading its files:
``model.save("m.keras")`` / ``load_model``, ``model.save_weights("m.weights.h5")``
/ ``load_weights``, legacy ``.h5`` (read from Keras 3 and TF-Keras 2, written
in Keras 3's layout). Loading builds only built-in and registered classes and
never runs code from a file. ``tf.saved_model`` lives in ``saved_model``.
"""
import importlib

from .errors import (ArchiveError, ConfigContentError, ExternalReferenceError, FileContentError,  # noqa: F401
                     FileFormatError, OversizedContentError, UnsupportedContentError)
from .registry import (CustomObjectScope, custom_object_scope, get_custom_objects,  # noqa: F401
                       get_registered_name, get_registered_object, register_keras_serializable)
from .serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401

# The file formats load on first use: layers and optimizers import the registry above from below
# saving, and must not pull in h5py and the whole of saving (which builds on them) as they do.
_LAZY = {"load_model": "api", "load_weights": "api", "save_model": "api", "save_weights": "api",
         "UnknownClassError": "config_check", "UnsafeContentError": "config_check"}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

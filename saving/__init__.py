"""Saving and loading (``tapeflow.saving``, also ``tf.keras.saving``).

Keras 3's file formats, readable by real Keras and reading its files:
``model.save("m.keras")`` / ``load_model``, ``model.save_weights("m.weights.h5")``
/ ``load_weights``, legacy ``.h5`` (read from Keras 3 and TF-Keras 2, written
in Keras 3's layout). Loading builds only built-in and registered classes and
never runs code from a file. ``tf.saved_model`` lives in ``saved_model``.
"""
from .api import load_model, load_weights, save_model, save_weights  # noqa: F401
from .registry import (CustomObjectScope, custom_object_scope, deserialize_keras_object,  # noqa: F401
                       get_custom_objects, get_registered_name, get_registered_object,
                       register_keras_serializable, serialize_keras_object)
from .registry import UnknownClassError, UnsafeContentError  # noqa: F401
from .errors import (ArchiveError, ConfigContentError, ExternalReferenceError, FileContentError,  # noqa: F401
                     FileFormatError, OversizedContentError, UnsupportedContentError)

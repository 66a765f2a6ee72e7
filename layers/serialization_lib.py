"""The registry and (de)serialization the layers' modules use, re-exported from where they live:
``tapeflow.saving.registry`` (the one registry) and ``tapeflow.saving.serialization_lib``."""
from tapeflow.saving.registry import (CustomObjectScope, custom_object_scope, get_registered_name,  # noqa: F401
                                     get_registered_object, keras_export, register_keras_serializable)
from tapeflow.saving.serialization_lib import (deserialize_keras_object, module_accessors,  # noqa: F401
                                               serialize_keras_object)

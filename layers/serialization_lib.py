"""The registry and (de)serialization the layers' modules use, re-exported from where they live:
``tapeflow.saving.object_registration`` (the one registry) and ``tapeflow.saving.serialization_lib``."""
from tapeflow.saving.object_registration import (CustomObjectScope, custom_object_scope,  # noqa: F401
                                                 get_registered_name, get_registered_object, keras_export,
                                                 register_keras_serializable)
from tapeflow.saving.serialization_lib import (deserialize_keras_object, module_accessors,  # noqa: F401
                                               serialize_keras_object)

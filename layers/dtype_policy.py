"""DTypePolicy: the dtype a layer computes in and stores its variables in."""
from . import backend
from .serialization_lib import keras_export

_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


@keras_export("keras.DTypePolicy")
class DTypePolicy:
    """A named dtype policy; tapeflow supports the plain ones ("float32", "float64", ...)."""

    def __init__(self, name=None):
        name = backend.floatx() if name is None else name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'float32'. Received: name={name!r} "
                            f"(of type {type(name).__name__})")
        if name.startswith("mixed_"):
            raise ValueError(f"Mixed-precision policies are not supported by tapeflow. Received: name={name!r}")
        if name not in _FLOAT_NAMES and name not in ("int32", "int64", "bool", "uint8", "int8", "int16"):
            raise ValueError(f"Cannot convert {name!r} to a dtype policy. Valid policies are dtype names such as "
                             "'float32' or 'float64'.")
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._name

    @property
    def variable_dtype(self):
        return self._name

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


def get(identifier):
    """A DTypePolicy from None, a name, a DType, a policy or its serialized dict."""
    if identifier is None:
        return DTypePolicy(backend.floatx())
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return DTypePolicy(**identifier.get("config", {}))
    name = getattr(identifier, "name", identifier)
    if hasattr(identifier, "as_numpy_dtype") or not isinstance(name, str):
        name = str(getattr(identifier, "name", identifier))
    return DTypePolicy(str(name))


def serialize(policy):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": policy.name},
            "registered_name": None}

"""Objects to JSON-able configs and back (``keras.saving.serialize_keras_object``).

A config has Keras's shape, ``{"module", "class_name", "config",
"registered_name"}`` (plus ``build_config``/``compile_config`` for layers and
models), so files written by tapeflow read in Keras and the other way round.
Classes are found only in registries (built-in classes by their public Keras
path, custom classes registered with ``register_keras_serializable`` or
passed in ``custom_objects``): nothing is ever imported by a name read from a
config, and Python lambdas are refused.
"""
import inspect

import numpy as np

_BUILTIN = {}        # "keras.layers.Dense" -> class or function
_BY_CLASS_NAME = {}  # "Dense" -> class (built-in), for configs without "module"
_BUILTIN_NAMES = {}  # object -> (module, name)
_CUSTOM = {}         # "package>Name" -> class or function
_CUSTOM_NAMES = {}   # object -> "package>Name"
_SCOPES = []         # custom_objects dicts of the enclosing custom_object_scope()s


class custom_object_scope:
    """Within the ``with`` block, ``custom_objects`` are found by name everywhere."""

    def __init__(self, custom_objects):
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        _SCOPES.append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _SCOPES.pop()


CustomObjectScope = custom_object_scope


def keras_export(public_path):
    """Registers a built-in class or function under its public Keras path."""
    module, _, name = public_path.rpartition(".")

    def decorator(obj):
        _BUILTIN[public_path] = obj
        _BUILTIN_NAMES.setdefault(obj, (module, name))
        if inspect.isclass(obj):
            _BY_CLASS_NAME.setdefault(name, obj)
        return obj
    return decorator


def register_keras_serializable(package="Custom", name=None):
    """Makes a custom class or function loadable by name: ``package>Name``."""
    def decorator(obj):
        registered = f"{package}>{name or obj.__name__}"
        if inspect.isclass(obj) and not hasattr(obj, "get_config"):
            raise ValueError(f"Cannot register a class that does not have a get_config() method: {obj.__name__}")
        _CUSTOM[registered] = obj
        _CUSTOM_NAMES[obj] = registered
        return obj
    return decorator


def get_registered_name(obj):
    return _CUSTOM_NAMES.get(obj, obj.__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    for scope in reversed(_SCOPES):
        if name in scope:
            return scope[name]
    if name in _CUSTOM:
        return _CUSTOM[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def builtin_name(obj):
    """The short public name of a registered built-in function ("relu"), or None."""
    entry = _BUILTIN_NAMES.get(obj)
    return None if entry is None else entry[1]


def module_accessors(table, kind, names=None, registered=False):
    """(serialize, deserialize, get) for a module of Keras objects looked up in ``table``.

    ``get`` accepts None, a name (looked up in ``names``, by default ``table``;
    with ``registered``, then among registered custom objects; a class found is
    instantiated with defaults), a config dict, or any callable. ``kind`` names
    the objects in error messages.
    """
    names = table if names is None else names

    def serialize(obj):
        return serialize_keras_object(obj)

    def deserialize(config, custom_objects=None):
        return deserialize_keras_object(config, custom_objects=custom_objects, module_objects=table)

    def get(identifier):
        if identifier is None:
            return None
        if isinstance(identifier, dict):
            return deserialize(identifier)
        if isinstance(identifier, str):
            found = names.get(identifier)
            if found is None and registered:
                found = get_registered_object(identifier)
            if found is None:
                raise ValueError(f"Could not interpret {kind} identifier: {identifier}")
            return found() if isinstance(found, type) else found
        if callable(identifier):
            return identifier
        raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
    return serialize, deserialize, get


# ------------------------------------------------------------- serialize ---
def serialize_keras_object(obj):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, slice):     # an index of a KerasTensor (Keras's GetItem operation)
        return {"class_name": "__slice__", "config": {"start": serialize_keras_object(obj.start),
                                                      "stop": serialize_keras_object(obj.stop),
                                                      "step": serialize_keras_object(obj.step)}}
    if obj is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(obj, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": obj.tolist(), "dtype": str(obj.dtype)}}
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(x) for x in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        if obj.__name__ == "<lambda>":
            raise ValueError("Python lambdas cannot be serialized safely; use a named function registered with "
                             "`register_keras_serializable` instead.")
        if obj in _BUILTIN_NAMES:
            return _BUILTIN_NAMES[obj][1]
        return {"module": getattr(obj, "__module__", None), "class_name": "function",
                "config": get_registered_name(obj), "registered_name": "function"}
    if inspect.isclass(obj):
        raise TypeError(f"Cannot serialize a class ({obj.__name__}); serialize an instance instead.")
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r}: it has no get_config() method.")
    cls = type(obj)
    if cls in _BUILTIN_NAMES:
        module, class_name = _BUILTIN_NAMES[cls]
        registered_name = None
    else:
        module = None
        class_name = cls.__name__
        registered_name = get_registered_name(cls)
    config = {"module": module, "class_name": class_name,
              "config": serialize_keras_object(obj.get_config()), "registered_name": registered_name}
    if module == "keras.src.models.functional" or (module or "").startswith("keras.src.ops."):
        config["registered_name"] = class_name
    get_build_config = getattr(obj, "get_build_config", None)
    if get_build_config is not None:
        build_config = get_build_config()
        if build_config:
            config["build_config"] = serialize_keras_object(build_config)
    get_compile_config = getattr(obj, "get_compile_config", None)
    if get_compile_config is not None:
        compile_config = get_compile_config()
        if compile_config:
            config["compile_config"] = serialize_keras_object(compile_config)
    return config


# ----------------------------------------------------------- deserialize ---
def _index_part(config, key):
    value = config.get(key) if isinstance(config, dict) else None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"A __slice__ {key} must be an integer or null, got {value!r}")
    return value


def _resolve_class(config, custom_objects, module_objects):
    class_name = config.get("class_name")
    registered = config.get("registered_name")
    module = config.get("module")
    for key in (registered, class_name):
        if key:
            found = get_registered_object(key, custom_objects, module_objects)
            if found is not None:
                return found
    if module and class_name and f"{module}.{class_name}" in _BUILTIN:
        return _BUILTIN[f"{module}.{class_name}"]
    if module and module.startswith("keras.src.ops.") and isinstance(class_name, str):   # a keras.ops call
        from .operation import operation_class_named
        found = operation_class_named(module, class_name)
        if found is not None:
            return found
    # Keras's own classes under another module path (keras.src.*, older layouts) or with no module at all.
    if (module is None or module.startswith("keras")) and class_name in _BY_CLASS_NAME:
        return _BY_CLASS_NAME[class_name]
    raise TypeError(
        f"Could not locate class '{class_name}'. Make sure custom classes and functions are decorated with "
        f"`@tapeflow.saving.register_keras_serializable()` or passed in `custom_objects`. "
        f"Full object config: {config}")


def deserialize_keras_object(config, custom_objects=None, module_objects=None, safe_mode=True, **kwargs):
    """Rebuilds an object from ``serialize_keras_object``'s output."""
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        found = get_registered_object(config, custom_objects, module_objects)
        if found is None:
            raise ValueError(f"Could not interpret serialized object: {config!r}")
        return found
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(c, custom_objects, module_objects, safe_mode) for c in config]
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config!r}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects, module_objects, safe_mode)
                if isinstance(v, (dict, list)) else v for k, v in config.items()}
    class_name = config["class_name"]
    inner = config["config"]
    if class_name == "__lambda__":
        raise ValueError("Requested the deserialization of a Python lambda. tapeflow never runs code stored in a "
                         "file; replace the lambda with a registered function or layer.")
    if class_name == "__numpy__":
        return np.array(inner["value"], dtype=inner["dtype"])
    if class_name == "__bytes__":
        return inner["value"].encode("utf-8")
    if class_name == "__slice__":
        return slice(*(_index_part(inner, key) for key in ("start", "stop", "step")))
    if class_name == "__ellipsis__":
        return Ellipsis
    if class_name in ("__tensor__", "__keras_tensor__"):
        return config
    if class_name == "function":
        name = inner if isinstance(inner, str) else inner.get("name")
        found = get_registered_object(name, custom_objects, module_objects)
        if found is None and config.get("module"):
            found = _BUILTIN.get(f"{config['module']}.{name}")
        if found is None:
            raise TypeError(f"Could not locate function '{name}'. Make sure custom functions are decorated with "
                            "`@tapeflow.saving.register_keras_serializable()` or passed in `custom_objects`.")
        return found
    cls = _resolve_class(config, custom_objects, module_objects)
    if not inspect.isclass(cls):
        return cls
    from_config = getattr(cls, "from_config", None)
    if from_config is None:
        raise TypeError(f"Class '{class_name}' has no from_config() method.")
    with custom_object_scope(custom_objects):
        if _accepts(from_config, "custom_objects"):
            obj = from_config(inner, custom_objects=custom_objects)
        else:
            obj = from_config(inner)
    build_config = config.get("build_config")
    if build_config and hasattr(obj, "build_from_config") and not getattr(obj, "built", False):
        obj.build_from_config(build_config)
    compile_config = config.get("compile_config")
    if compile_config and hasattr(obj, "compile_from_config") and kwargs.get("compile", True):
        obj.compile_from_config(compile_config)
    return obj


def _accepts(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False

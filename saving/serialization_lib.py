"""Objects to JSON-able configs and back (``keras.saving.serialize_keras_object``).

A config has Keras's shape, ``{"module", "class_name", "config",
"registered_name"}`` (plus ``build_config``/``compile_config`` for layers and
models), so files written by tapeflow read in Keras and the other way round.
Classes and functions are found only through the registry
(``registry.find``): nothing is ever imported by a name read from a
config, and Python lambdas are refused.
"""
import inspect

import numpy as np

from .registry import (custom_object_scope, find, get_registered_name, get_registered_object, is_builtin,
                       public_name)


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
        if is_builtin(obj):
            return public_name(obj)[1]
        return {"module": getattr(obj, "__module__", None), "class_name": "function",
                "config": get_registered_name(obj), "registered_name": "function"}
    if inspect.isclass(obj):
        raise TypeError(f"Cannot serialize a class ({obj.__name__}); serialize an instance instead.")
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r}: it has no get_config() method.")
    cls = type(obj)
    if is_builtin(cls):
        module, class_name = public_name(cls)
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
def resolve_class(config, custom_objects=None, module_objects=None):
    """The class (or registered object) an object entry ``{"class_name", "module", "registered_name", ...}``
    names; a TypeError naming it when the registry has none."""
    found = find(config.get("class_name"), config.get("registered_name"), config.get("module"),
                 custom_objects, module_objects)
    if found is None:
        raise TypeError(
            f"Could not locate class '{config.get('class_name')}'. Make sure custom classes and functions are "
            "decorated with `@tapeflow.saving.register_keras_serializable()` or passed in `custom_objects`. "
            f"Full object config: {config}")
    return found


def _index_part(config, key):
    value = config.get(key) if isinstance(config, dict) else None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"A __slice__ {key} must be an integer or null, got {value!r}")
    return value


def _function_name(config):
    """The function a ``{"class_name": "function", "config": name}`` entry names."""
    inner = config.get("config")
    return inner if isinstance(inner, str) else (inner or {}).get("name")


def resolve_function(config, custom_objects=None, module_objects=None):
    name = _function_name(config)
    found = find(name, None, config.get("module"), custom_objects, module_objects, function=True)
    if found is None:
        raise TypeError(f"Could not locate function '{name}'. Make sure custom functions are decorated with "
                        "`@tapeflow.saving.register_keras_serializable()` or passed in `custom_objects`.")
    return found


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
        return resolve_function(config, custom_objects, module_objects)
    cls = resolve_class(config, custom_objects, module_objects)
    if not inspect.isclass(cls):
        return cls
    obj = instantiate(cls, inner, custom_objects)
    build_config = config.get("build_config")
    if build_config and hasattr(obj, "build_from_config") and not getattr(obj, "built", False):
        obj.build_from_config(build_config)
    compile_config = config.get("compile_config")
    if compile_config and hasattr(obj, "compile_from_config") and kwargs.get("compile", True):
        obj.compile_from_config(compile_config)
    return obj


def instantiate(cls, config, custom_objects=None):
    """``cls.from_config(config)``, with ``custom_objects`` in scope (and passed when from_config takes them)."""
    from_config = getattr(cls, "from_config", None)
    if from_config is None:
        raise TypeError(f"Class '{cls.__name__}' has no from_config() method.")
    with custom_object_scope(custom_objects):
        if _accepts(from_config, "custom_objects"):
            return from_config(config, custom_objects=custom_objects)
        return from_config(config)


def _accepts(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False

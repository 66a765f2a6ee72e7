"""The one registry of the objects a config may name (``keras.saving``'s registration functions).

Layers, losses, metrics, optimizers, schedules, initializers and every other
serializable Keras object are found here, by one lookup (``find``):
  1. ``custom_objects`` passed to the call, then those of enclosing
     ``custom_object_scope``s, then objects registered with
     ``register_keras_serializable`` (``"package>Name"``) or added to
     ``get_custom_objects()``; then the caller's ``module_objects`` table;
  2. built-in objects under their public Keras path (``"keras.layers.Dense"``,
     ``"keras.optimizers.Adam"``), registered by ``keras_export`` when their
     module is imported;
  3. a built-in class by its bare name, for configs written without a module or
     under another Keras module path (``keras.src.*``, older layouts).
Nothing is ever imported by a name read from a config. This module imports
nothing of tapeflow: the packages below saving register into it.
"""
import inspect

_BUILTIN = {}        # "keras.layers.Dense" -> class or function
_BY_CLASS_NAME = {}  # "Dense" -> built-in class, for configs without a Keras module
_BUILTIN_NAMES = {}  # built-in object -> (module, name)
_CUSTOM = {}         # "package>Name" -> class or function (get_custom_objects())
_CUSTOM_NAMES = {}   # custom object -> "package>Name"
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


def get_custom_objects():
    """The process-wide dict of custom objects (``{"package>Name": object}``); updating it registers them."""
    return _CUSTOM


def get_registered_name(obj):
    """The name ``obj`` was registered under (``"package>Name"``), else its ``__name__``."""
    return _CUSTOM_NAMES.get(obj, obj.__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The custom object called ``name``: from ``custom_objects``, the enclosing scopes, the registry,
    then ``module_objects``; None when none has it."""
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


def public_name(obj):
    """``(module, name)`` of a built-in object's public Keras path, or None for any other object."""
    return _BUILTIN_NAMES.get(obj)


def is_builtin(obj):
    return obj in _BUILTIN_NAMES


def find(name, registered_name=None, module=None, custom_objects=None, module_objects=None, function=False):
    """The class (or, with ``function``, the function) a config names, or None: the one lookup of every
    deserializer (see the module's docstring for the order)."""
    for key in (registered_name, name):
        if isinstance(key, str) and key:
            found = get_registered_object(key, custom_objects, module_objects)
            if found is not None:
                return found
    if not isinstance(name, str):
        return None
    if isinstance(module, str) and f"{module}.{name}" in _BUILTIN:
        return _BUILTIN[f"{module}.{name}"]
    if not function and isinstance(module, str) and module.startswith("keras.src.ops."):   # a keras.ops call
        from tapeflow.layers.operation import operation_class_named     # of a functional graph
        found = operation_class_named(module, name)
        if found is not None:
            return found
    if not function and (module is None or isinstance(module, str) and module.startswith("keras")):
        return _BY_CLASS_NAME.get(name)
    return None

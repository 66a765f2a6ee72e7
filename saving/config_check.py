"""Which classes a file may name, checked before anything is built from it.

A config read from a file is data. It can only name classes that tapeflow
has built in (by their public Keras name), classes registered with
``register_keras_serializable``, and ``custom_objects``: nothing is imported
from a name in a file, no Python code stored in a file is ever run (Lambda
layers and lambdas are refused on every format, whatever ``safe_mode``
says), and nothing is unpickled. ``check_config`` walks the whole config
first and reports every unknown class at once.
"""
from .errors import ConfigContentError, FileFormatError
from .registry import get_registered_object
from .serialization_lib import resolve_class, resolve_function

_SPECIAL = {"__numpy__", "__bytes__", "__tensor__", "__keras_tensor__", "__slice__", "__ellipsis__",
            "__typespec__", "__shared_object__"}


class UnsafeContentError(FileFormatError):
    """The file asks for code to be run (a Lambda layer or a Python lambda)."""


class UnknownClassError(FileFormatError, TypeError):
    """The file names classes that are neither built in nor registered (still a TypeError, as it was)."""


def _known(resolve, config, custom_objects):
    try:
        resolve(config, custom_objects)
        return True
    except TypeError:
        return False


def _label(config):
    inner = config.get("config")
    name = inner.get("name") if isinstance(inner, dict) else None
    return f"'{config.get('class_name')}'" + (f" (object '{name}')" if isinstance(name, str) else "")


def _where(path):
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "the top level"


def _field_problem(node):
    """What is wrong with the fields of an object entry ``{"class_name", "config", ...}`` (None if nothing)."""
    class_name = node.get("class_name")
    if not isinstance(class_name, str):
        return f"'class_name' should be a string, not {type(class_name).__name__} {class_name!r:.40}"
    for key in ("module", "registered_name"):
        if node.get(key) is not None and not isinstance(node[key], str):
            return f"'{key}' should be a string, not {type(node[key]).__name__} {node[key]!r:.40}"
    inner = node["config"]
    if class_name == "function":
        if not isinstance(inner, (str, dict)) or isinstance(inner, dict) and not isinstance(inner.get("name"), str):
            return f"the 'config' of a function should be its name, not {type(inner).__name__} {inner!r:.40}"
    elif not isinstance(inner, dict):
        return f"'config' should be an object (a dict), not {type(inner).__name__} {inner!r:.40}"
    for key in ("build_config", "compile_config"):
        if node.get(key) is not None and not isinstance(node[key], dict):
            return f"'{key}' should be an object (a dict), not {type(node[key]).__name__}"
    return None


def _holds_lambda_code(node):
    config = node.get("config")
    function = config.get("function") if isinstance(config, dict) else None
    return not isinstance(function, dict) or function.get("class_name") == "__lambda__"


def _lambda_code_not_supplied(node, custom_objects):
    """A Lambda layer storing a Python lambda, and no function under its name in custom_objects (or a
    Lambda class of the user's own registered in its place)."""
    if get_registered_object(node.get("registered_name") or "Lambda", custom_objects) is not None \
            and node.get("registered_name") not in (None, "Lambda"):
        return False
    if not _holds_lambda_code(node):
        return False
    name = node["config"].get("name") if isinstance(node["config"], dict) else None
    return not isinstance(name, str) or get_registered_object(name, custom_objects) is None


def check_config(config, source, custom_objects=None, skip_keys=("compile_config",)):
    """Raises if ``config`` holds a Lambda or names a class or function tapeflow cannot rebuild safely,
    or if an object entry's fields have the wrong types (a ConfigContentError naming the entry)."""
    lambdas, unknown, names_to_pass = [], [], []

    def visit(node, path=(), top=False):
        if isinstance(node, list):
            for i, item in enumerate(node):
                visit(item, path + (i,))
            return
        if not isinstance(node, dict):
            return
        class_name = node.get("class_name")
        if "class_name" in node and "config" in node:
            problem = _field_problem(node)
            if problem:
                raise ConfigContentError(f"Cannot load '{source}': the object at {_where(path)} of its config is "
                                         f"malformed: {problem}.")
            if class_name == "__lambda__":
                lambdas.append("a Python lambda")
            elif class_name == "Lambda" and _lambda_code_not_supplied(node, custom_objects):
                name = node["config"].get("name") if isinstance(node["config"], dict) else None
                lambdas.append(f"a Lambda layer '{name}'" if isinstance(name, str) else "a Lambda layer")
            elif class_name == "function":
                if not _known(resolve_function, node, custom_objects):
                    names_to_pass.append(str(node.get("config")))
                    unknown.append(f"function {node.get('config')!r}")
            elif class_name not in _SPECIAL and not _known(resolve_class, node, custom_objects):
                names_to_pass.append(class_name)
                unknown.append(f"class {_label(node)}"
                               + (f" registered as {node['registered_name']!r}"
                                  if node.get("registered_name") not in (None, class_name) else ""))
        for key, value in node.items():
            if top and key in skip_keys:
                continue
            if key == "config" and (class_name == "__lambda__"
                                    or (class_name == "Lambda" and _holds_lambda_code(node))):
                continue
            visit(value, path + (key,))

    visit(config, top=True)
    if lambdas:
        raise UnsafeContentError(
            f"'{source}' contains {', '.join(lambdas)}, which wraps arbitrary Python code. "
            "tapeflow never runs code from a file, with or without safe_mode=False. Pass the function of a Lambda "
            "layer as custom_objects={'<layer name>': function}, or rebuild the model in Python and load only "
            "its weights with model.load_weights().")
    if unknown:
        names = sorted(set(unknown), key=unknown.index)
        raise UnknownClassError(
            f"Cannot load '{source}': it uses {', '.join(names)}, which tapeflow does not know. tapeflow rebuilds "
            "only its built-in classes, classes registered with "
            "@tf.keras.saving.register_keras_serializable(package=...), and those passed as custom_objects="
            + "{" + ", ".join(f"'{n}': {n}" for n in dict.fromkeys(names_to_pass or ["Name"])) + "}"
            + "; it never imports code named in a file.")

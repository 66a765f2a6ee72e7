"""Session state shared by layers: unique names, name scopes, floatx/epsilon.

This is the part of ``keras.backend`` that layers need: ``clear_session``
resets the automatic names (``dense``, ``dense_1``, ...) so a script that
builds the same model twice gets the same names the second time.
"""
import re

_uids = {}
_name_scope_stack = []
_config = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}


def snake_case(name):
    """``BatchNormalization`` -> ``batch_normalization`` (Keras's rule)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    return name.lower()


def get_uid(prefix):
    """1 for the first call with ``prefix``, then 2, 3, ..."""
    _uids[prefix] = _uids.get(prefix, 0) + 1
    return _uids[prefix]


def unique_name(prefix):
    """``prefix``, then ``prefix_1``, ``prefix_2``, ... within one session."""
    uid = get_uid(prefix)
    return prefix if uid == 1 else f"{prefix}_{uid - 1}"


def clear_session(free_memory=True):
    """Resets the automatic layer names (and the name scope stack) and keras.random's global seed generator."""
    from tapeflow.keras_ops import random as keras_random
    _uids.clear()
    del _name_scope_stack[:]
    keras_random.reset_global_seed_generator()


class name_scope:
    """A path component for variables created inside (``seq/dense/kernel``).

    Entering the same caller's scope twice in a row is a no-op, as in Keras,
    so a layer's build inside its own call does not repeat its name.
    """

    def __init__(self, name, caller=None, parent_path=None):
        self.name = name
        self.caller = caller
        self.parent_path = parent_path
        self._pushed = False
        self._saved = None

    def __enter__(self):
        top = _name_scope_stack[-1] if _name_scope_stack else None
        if top is not None and self.caller is not None and top.caller is self.caller:
            return self
        if self.parent_path is not None:
            # The layer's place was fixed when it was first used: restore it.
            self._saved = list(_name_scope_stack)
            _name_scope_stack[:] = [_PathScope(self.parent_path)] if self.parent_path else []
        _name_scope_stack.append(self)
        self._pushed = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            _name_scope_stack.pop()
            if self._saved is not None:
                _name_scope_stack[:] = self._saved
                self._saved = None
            self._pushed = False


class _PathScope:
    caller = None

    def __init__(self, path):
        self.name = path


def current_path():
    return "/".join(s.name for s in _name_scope_stack)


def floatx():
    return _config["floatx"]


def set_floatx(value):
    if value not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of float16, bfloat16, float32, float64.")
    _config["floatx"] = str(value)


def epsilon():
    return _config["epsilon"]


def set_epsilon(value):
    _config["epsilon"] = float(value)


def image_data_format():
    return _config["image_data_format"]


def backend():
    return "tapeflow"

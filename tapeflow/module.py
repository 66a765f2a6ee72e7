"""tf.Module: a named container that finds the variables and submodules in its attributes."""
import contextlib
import functools
import re

from .framework.variables import Variable

_name_scope_stack = []


def camel_to_snake(name):
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


@contextlib.contextmanager
def name_scope(name):
    """tf.name_scope: nests names; tapeflow uses it only for readable variable names."""
    _name_scope_stack.append(name)
    try:
        yield "/".join(_name_scope_stack) + "/"
    finally:
        _name_scope_stack.pop()


def _walk(value, seen, predicate, recurse_modules):
    """Yields objects matching ``predicate`` found in ``value`` (attributes, lists, tuples, dicts)."""
    if id(value) in seen:
        return
    if isinstance(value, Variable) or isinstance(value, Module):
        seen.add(id(value))
        if predicate(value):
            yield value
        if isinstance(value, Module) and recurse_modules:
            yield from value._flatten(predicate, seen)
        return
    if isinstance(value, dict):
        seen.add(id(value))
        for key in sorted(value, key=str):
            yield from _walk(value[key], seen, predicate, recurse_modules)
    elif isinstance(value, (list, tuple)):
        seen.add(id(value))
        for item in value:
            yield from _walk(item, seen, predicate, recurse_modules)


class Module:
    """Base class of anything that owns variables (``tf.Module``)."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not re.match(r"^[A-Za-z_][\w.\-]*$", name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid Python identifiers "
                             "(e.g. a valid class name).")
        self._name = name
        self._scope_name = name

    def __setattr__(self, name, value):
        # A checkpoint restore waiting for children of this module installs a hook (saving/checkpoint_containers)
        hook = self.__dict__.get("_attribute_set_hook")
        if hook is None or name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            hook(self, name, value)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return name_scope(self._scope_name)

    def _tracked_attributes(self):
        return sorted((k, v) for k, v in vars(self).items() if k not in self._TF_MODULE_IGNORED_PROPERTIES
                      and not k.startswith("__"))

    def _flatten(self, predicate, seen=None, recurse_modules=True):
        seen = set() if seen is None else seen
        seen.add(id(self))
        for _, value in self._tracked_attributes():
            yield from _walk(value, seen, predicate, recurse_modules)

    @property
    def variables(self):
        return tuple(self._flatten(lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self):
        return tuple(self._flatten(lambda v: isinstance(v, Module)))

    @classmethod
    def with_name_scope(cls, method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapper

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>"

"""Recursive conversion: what a converted function calls is converted too, when it is user code.

Every call in converted code goes through ``converted_call(f, args, kwargs)``
(converter.py rewrites them), which decides at run time, as TensorFlow's
AutoGraph does, whether ``f`` is converted before it is called:

- a Python function or method written by the user: converted (the conversion
  is compiled once per code object, converter.py), so a helper's ``if`` on a
  tensor becomes a cond;
- a callable object of a user class: its ``__call__``, the same way;
- a tf.function: called as it is (a trace inlines it, converted by its own
  ``autograph`` setting);
- ``enumerate`` and ``zip`` of datasets give datasets (``ds.enumerate()``,
  ``Dataset.zip``), as TensorFlow's AutoGraph overloads them;
- anything else runs unconverted: builtins, tapeflow's own functions and classes
  (Keras layers included), code in the standard library or installed packages
  (site-packages), lambdas, generators, and functions marked with
  ``tf.autograph.experimental.do_not_convert``.
"""
import functools
import inspect
import os
import site
import sysconfig
import types


def _library_directories():
    paths = sysconfig.get_paths()
    found = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        found.update(site.getsitepackages())
        found.add(site.getusersitepackages())
    except AttributeError:   # a virtualenv's old site module
        pass
    return tuple(os.path.join(os.path.realpath(p), "") for p in found if p)


_LIBRARY_DIRECTORIES = _library_directories()


@functools.lru_cache(maxsize=None)
def _is_library_file(filename):
    return os.path.realpath(filename).startswith(_LIBRARY_DIRECTORIES)


def is_user_function(fn):
    """Whether AutoGraph converts ``fn`` when converted code calls it (see the module docstring)."""
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__ag_skip__", False):
        return False
    module = fn.__globals__.get("__name__") or ""   # where the code is (a wrapper's __module__ may be copied)
    if module == "tapeflow" or module.startswith("tapeflow."):
        return False
    return not _is_library_file(fn.__code__.co_filename)


def _converted(fn):
    from .converter import convert
    return convert(fn) if is_user_function(fn) else fn


def converted_call(f, args, kwargs):
    """``f(*args, **kwargs)``, with ``f`` converted first when it is user code."""
    if (f is enumerate or f is zip) and args and _is_dataset(args[0]):
        return _dataset_builtin(f, args, kwargs or {})
    return converted_target(f)(*args, **(kwargs or {}))


def _is_dataset(value):
    from ..data import Dataset
    return isinstance(value, Dataset)


def _dataset_builtin(f, args, kwargs):
    """``enumerate(ds)`` and ``zip(ds1, ds2)`` of datasets are datasets (``ds.enumerate()``,
    ``Dataset.zip``), so a for loop over them is a graph loop too."""
    if f is enumerate:
        return args[0].enumerate(*args[1:], **kwargs)
    if kwargs or not all(_is_dataset(a) for a in args):
        return zip(*args, **kwargs)
    from ..data import Dataset
    return Dataset.zip(tuple(args))


def converted_target(f):
    """What calling ``f`` in converted code runs: ``f`` converted when it is user code, else ``f``."""
    if isinstance(f, types.FunctionType):
        return _converted(f)
    if isinstance(f, types.MethodType):
        func = f.__func__
        converted = _converted(func) if isinstance(func, types.FunctionType) else func
        return f if converted is func else types.MethodType(converted, f.__self__)
    if isinstance(f, functools.partial):
        target = converted_target(f.func)
        return f if target is f.func else functools.partial(target, *f.args, **f.keywords)
    if inspect.isclass(f) or isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return f
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and not getattr(f, "__ag_skip__", False):
        converted = _converted(call)
        if converted is not call:
            return types.MethodType(converted, f)
    return f

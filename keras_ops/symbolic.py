"""keras.ops on KerasTensors: the call becomes an operation of the functional graph, run when the model runs.

As in Keras 3, ``ops.mean(x, axis=1)`` on a KerasTensor ``x`` creates an
operation ``Mean(axis=1)`` (a layer without weights:
``tapeflow.layers.operation``) and calls it on ``x``: the model's config then
holds ``{"module": "keras.src.ops.numpy", "class_name": "Mean", "config":
{"name": "mean", "axis": 1, "keepdims": false}}`` with ``x`` in the node's
arguments, which Keras reads and writes alike.

Which parameters are the operation's attributes (its config) and which are
the arguments of its call follows Keras: the leading parameters without a
default value are call arguments (the operands), the rest are attributes,
except the few operand-like names Keras keeps in the config (``_ATTRIBUTES``).
A parameter given a KerasTensor is always a call argument.
"""
import functools
import inspect

from .keras_tensor import KerasTensor

_ATTRIBUTES = {   # parameters without a default that Keras stores in the operation's config
    "reshape": {"newshape"}, "expand_dims": {"axis"}, "clip": {"x_min", "x_max"}, "repeat": {"repeats"},
    "tile": {"repeats"}, "split": {"indices_or_sections"}, "moveaxis": {"source", "destination"},
    "swapaxes": {"axis1", "axis2"}, "pad": {"pad_width"}, "one_hot": {"num_classes"},
    "broadcast_to": {"shape"}, "roll": {"shift"}, "array_split": {"indices_or_sections"},
    "top_k": {"k"}, "extract_sequences": {"sequence_length", "sequence_stride"}, "in_top_k": {"k"},
    "multi_hot": {"num_classes"}, "full_like": {"fill_value"},
}
_CLASS_NAMES = {"abs": "Absolute"}   # Keras's class where the function object is an alias's


def _symbolic(values):
    for v in values:
        if isinstance(v, KerasTensor):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(e, KerasTensor) for e in v):
            return True
    return False


def records_operations(namespace, keras_module, only=None):
    """Makes every public function defined in the module ``namespace`` (its ``globals()``; with ``only``,
    those names) record an operation of class ``keras_module.<CamelName>`` when called on a KerasTensor."""
    module_name = namespace["__name__"]
    for name, fn in list(namespace.items()):
        if name.startswith("_") or not inspect.isfunction(fn) or (
                fn.__module__ != module_name if only is None else name not in only):
            continue
        recording = _recording(fn, keras_module)
        namespace[name] = recording
        for alias, other in list(namespace.items()):     # ``absolute = abs``: the alias records too
            if other is fn:
                namespace[alias] = recording


def _recording(fn, keras_module):
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if _symbolic(args) or (kwargs and _symbolic(kwargs.values())):
            return _record(fn, keras_module, args, kwargs)
        return fn(*args, **kwargs)
    op.keras_module = keras_module
    return op


def split_arguments(fn, args, kwargs):
    """(call arguments, attributes) of ``fn(*args, **kwargs)`` as Keras splits them for its operation."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    parameters = list(inspect.signature(fn).parameters.values())
    attribute_names = _ATTRIBUTES.get(fn.__name__, set())
    operands = 0
    for i, p in enumerate(parameters):
        value = bound.arguments.get(p.name)
        if p.kind is p.VAR_POSITIONAL or _symbolic([value]) or (
                p.default is p.empty and p.name not in attribute_names and operands == i):
            operands = i + 1
    call_args = []
    for p in parameters[:operands]:
        value = bound.arguments[p.name]
        call_args.extend(value if p.kind is p.VAR_POSITIONAL else [value])
    attributes = {p.name: bound.arguments[p.name] for p in parameters[operands:] if p.kind is not p.VAR_KEYWORD}
    for p in parameters[operands:]:
        if p.kind is p.VAR_KEYWORD:
            attributes.update(bound.arguments.get(p.name, {}))
    return call_args, attributes


def camel_case(name):
    """``expand_dims`` -> ``ExpandDims``: how Keras names an op's class."""
    return "".join(part.capitalize() for part in name.split("_"))


def class_name_of(fn):
    return _CLASS_NAMES.get(fn.__name__) or camel_case(fn.__name__)


def _record(fn, keras_module, args, kwargs):
    from tapeflow.layers.operation import operation_class   # layers load only when a graph is built
    call_args, attributes = split_arguments(fn, args, kwargs)
    return operation_class(keras_module, class_name_of(fn), fn)(**attributes)(*call_args)


def _get_item(x, key):
    return x[tuple(key) if isinstance(key, list) else key]   # a saved key is a JSON list: Keras's tuple


_get_item.__name__ = "get_item"
_recorded_get_item = _recording(_get_item, "keras.src.ops.numpy")


def get_item(x, key):
    """``x[key]`` of a KerasTensor: Keras's GetItem operation (basic indexing: ints, slices, None, ...)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts):
        raise TypeError(f"A KerasTensor can be indexed with integers, slices, None and Ellipsis (as in Keras); "
                        f"got {key!r}. Use keras.ops.take or keras.ops.take_along_axis for other indices.")
    return _recorded_get_item(x, key)


get_item.__wrapped__ = _get_item

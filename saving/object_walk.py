"""Keras 3's walk over a model's saveable objects, and the h5 path of each.

A saveable is a Layer (models included), an Optimizer, a Metric or a Loss.
From the model, the walk visits:

* for Sequential and Functional models, ``model.layers`` first (under
  ``layers``);
* then every attribute that the framework base class does not itself have,
  public names in sorted order, then private ones; ``optimizer`` is such an
  attribute of a compiled model, the compiled losses and metrics are not.

An object reached through an attribute lives under the attribute's name
(``enc``, ``optimizer``); an object inside a list, tuple or dict lives under
the snake_case name of its class, made unique within that container
(``dense``, ``dense_1``), never under ``layer.name``; a container nested in
a container is called ``container``, ``container_1``, ... Each object is
visited once, at the first path that reaches it. The model itself is at the
root path ``""``.
"""
from tapeflow.layers.backend import snake_case
from tapeflow.layers.models.functional import Functional
from tapeflow.layers.layer import Layer
from tapeflow.layers.losses import Loss
from tapeflow.layers.metrics import Metric
from tapeflow.layers.models.model import Model
from tapeflow.layers.models.sequential import Sequential
from tapeflow.optimizers import Optimizer

_SKIP = {}


def is_saveable(obj):
    return isinstance(obj, (Layer, Optimizer, Metric, Loss))


def _reference_attributes(kind):
    """Names every object of the framework base class has: they are internal state, never walked."""
    if kind not in _SKIP:
        if kind == "model":
            # A compiled model's optimizer is state to save; its compiled losses and metrics are not.
            names = set(dir(Model(name="saving_reference_model"))) - {"optimizer"}
            names |= set(dir(Sequential)) | set(dir(Functional))
            names |= {"_inputs_struct", "_outputs_struct", "_inputs", "_outputs", "_nodes", "_node_ids",
                      "_nodes_by_depth", "_run_nodes", "_graph_output"}
        else:
            names = set(dir(Layer(name="saving_reference_layer")))
        _SKIP[kind] = frozenset(names)
    return _SKIP[kind]


def _attributes(obj):
    """(name, value) of the attributes to walk, in Keras's order."""
    if isinstance(obj, (Optimizer, Loss)):
        return []
    out = []
    if isinstance(obj, (Sequential, Functional)):
        out.append(("layers", obj.layers))
    if isinstance(obj, Metric):
        skip = frozenset(dir(Metric)) | {"name", "_dtype", "_variables"}
    else:
        skip = _reference_attributes("model" if isinstance(obj, Model) else "layer")
    names = [n for n in dir(obj) if not n.startswith("__") and n not in skip]
    names.sort(key=lambda n: (n.startswith("_"), n))
    for name in names:
        try:
            value = getattr(obj, name)
        except Exception:  # a property that cannot be computed now holds no state to save
            continue
        out.append((name, value))
    return out


def _join(path, name):
    return f"{path}/{name}" if path else name


def walk(root):
    """[(path, object)] for every saveable reachable from ``root``, root first, in Keras's order."""
    found = []
    visited = set()

    def visit(obj, path):
        if id(obj) in visited:
            return
        visited.add(id(obj))
        found.append((path, obj))
        for name, value in _attributes(obj):
            if is_saveable(value):
                visit(value, _join(path, name))
            elif isinstance(value, (list, tuple, dict)):
                visit_container(value, _join(path, name))

    def visit_container(container, path):
        used = {}
        items = list(container.values()) if isinstance(container, dict) else list(container)
        for item in items:
            if is_saveable(item):
                base = snake_case(type(item).__name__)
            elif isinstance(item, (list, tuple, dict)):
                base = "container"
            else:
                continue
            if base in used:
                used[base] += 1
                name = f"{base}_{used[base]}"
            else:
                used[base] = 0
                name = base
            if is_saveable(item):
                visit(item, _join(path, name))
            else:
                visit_container(item, _join(path, name))

    visit(root, "")
    return found


def variables_of(obj):
    """The variables an object saves as its own (``<path>/vars``)."""
    if isinstance(obj, Optimizer):
        return list(obj.variables)
    if isinstance(obj, Metric):
        return list(obj._variables)
    if isinstance(obj, Layer):
        return obj._own_variables()
    return []


def has_own_variables_methods(obj):
    return hasattr(obj, "save_own_variables") and hasattr(obj, "load_own_variables")


def uses_default_io(obj):
    """True when the object saves and loads exactly ``variables_of(obj)`` (it does not override the methods)."""
    cls = type(obj)
    for base in (Layer, Optimizer, Metric):
        if isinstance(obj, base):
            return (cls.save_own_variables is base.save_own_variables
                    and cls.load_own_variables is base.load_own_variables)
    return False

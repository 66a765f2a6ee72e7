"""The object graph of a ``tf.train.Checkpoint``: the objects it reaches and the names of the edges.

TensorFlow keys every saved value by the path of names that first reaches it from the root, breadth
first, e.g. ``model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``. The children of an object:

* a Variable has none: it holds a value;
* a Sequential or functional model: ``layer_with_weights-<i>`` (the i-th of its layers that has
  weights) and ``layer-<j>`` (its j-th layer), interleaved as TF-Keras names them, then its attributes;
* a Layer, Model, Metric or tf.Module: the attributes that hold trackables, in assignment order
  (attributes every object of the framework base class has are internal and left out, as in
  object_walk); a layer's own variables that no attribute holds take their variable name;
* an Optimizer: ``_iterations``, ``_learning_rate`` (a variable rate) and ``_variables``, the list of all
  its variables in Keras's order (``optimizer.variables``, slots included);
* a list or tuple: its items as ``0, 1, ...``; a dict: its values under their (string) keys.
  Containers that hold no trackable are left out.

Names are escaped as TensorFlow does (``.`` -> ``..``, ``/`` -> ``.S``), so a path splits on ``/``.
"""
from tapeflow.framework.variables import Variable
from tapeflow.layers.models.functional import Functional
from tapeflow.layers.layer import Layer
from tapeflow.layers.metrics import Metric
from tapeflow.layers.models.model import Model
from tapeflow.layers.models.sequential import Sequential
from tapeflow.module import Module
from tapeflow.optimizers import Optimizer

from .object_walk import _reference_attributes

VALUE_SUFFIX = ".ATTRIBUTES/VARIABLE_VALUE"
_METRIC_SKIP = None


def escape(name):
    return name.replace(".", "..").replace("/", ".S")


def is_trackable(value):
    if isinstance(value, (Variable, Module, Optimizer, Metric)) or hasattr(value, "_checkpoint_children"):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_trackable(v) for v in value)
    if isinstance(value, dict):
        return any(is_trackable(v) for v in value.values())
    return False


def _skipped_attributes(obj):
    global _METRIC_SKIP
    if isinstance(obj, Metric):
        if _METRIC_SKIP is None:
            _METRIC_SKIP = frozenset(dir(Metric)) | {"name", "_dtype", "_variables"}
        return _METRIC_SKIP
    if isinstance(obj, Layer):
        return _reference_attributes("model" if isinstance(obj, Model) else "layer")
    return frozenset({"_name", "_scope_name"}) | obj._TF_MODULE_IGNORED_PROPERTIES


def _own_variables(obj):
    if isinstance(obj, Metric):
        return list(obj._variables)
    if isinstance(obj, Layer):
        return obj._own_variables()
    return []


def _variable_name(variable):
    return str(getattr(variable, "name", "variable")).rsplit(":", 1)[0].rsplit("/", 1)[-1]


def _held(value, out):
    """Collects the ids of the variables held in ``value`` (directly or in containers)."""
    if isinstance(value, Variable):
        out.add(id(value))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _held(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _held(v, out)


def _attribute_children(obj):
    skip = _skipped_attributes(obj)
    out = [(name, value) for name, value in vars(obj).items()
           if not name.startswith("__") and name not in skip and is_trackable(value)]
    held = set()
    for _, value in out:
        _held(value, held)
    used = {name for name, _ in out}
    for variable in _own_variables(obj):
        if id(variable) in held:
            continue
        name, i = _variable_name(variable), 0
        while name in used:
            i += 1
            name = f"{_variable_name(variable)}_{i}"
        used.add(name)
        held.add(id(variable))
        out.append((name, variable))
    return out


def _layer_children(model):
    out, with_weights = [], 0
    for i, layer in enumerate(model.layers):
        if layer.weights:
            out.append((f"layer_with_weights-{with_weights}", layer))
            with_weights += 1
        out.append((f"layer-{i}", layer))
    return out


def children(obj):
    """``[(name, child)]`` of ``obj`` in the checkpoint's object graph (names not escaped yet)."""
    if isinstance(obj, Variable):
        return []
    if hasattr(obj, "_checkpoint_children"):
        return obj._checkpoint_children()
    if isinstance(obj, Optimizer):
        out = [("_iterations", obj.iterations)]
        learning_rate = obj.learning_rate  # the variable itself for a float rate
        if isinstance(learning_rate, Variable):
            out.append(("_learning_rate", learning_rate))
        out.append(("_variables", tuple(obj.variables)))
        return out
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if is_trackable(v)]
    if isinstance(obj, dict):
        out = []
        for key, value in obj.items():
            if not is_trackable(value):
                continue
            if not isinstance(key, str):
                raise ValueError(f"Cannot checkpoint the dict key {key!r}: keys of dicts holding trackable objects "
                                 "must be strings.")
            out.append((key, value))
        return out
    out = _layer_children(obj) if isinstance(obj, (Sequential, Functional)) else []
    return out + _attribute_children(obj)


def _checked_name(name, parent_path):
    if not isinstance(name, str) or not name:
        raise ValueError(f"Cannot checkpoint a child named {name!r} of '{parent_path or '(root)'}': names must be "
                         "non-empty strings.")
    return escape(name)


class ObjectGraph:
    """The live graph from ``root``, breadth first: ``objects[i]``, ``edges[i]`` = [(escaped name, j)],
    ``paths[i]`` = the first path that reaches node i (its checkpoint key prefix)."""

    def __init__(self, root):
        self.objects, self.edges, self.paths = [root], [], [""]
        index = {id(root): 0}
        i = 0
        while i < len(self.objects):
            obj, path = self.objects[i], self.paths[i]
            edges, names = [], set()
            for name, child in children(obj):
                name = _checked_name(name, path)
                if name in names:
                    raise ValueError(f"Cannot checkpoint '{path or '(root)'}': two of its children are named "
                                     f"{name!r}.")
                names.add(name)
                if id(child) not in index:
                    index[id(child)] = len(self.objects)
                    self.objects.append(child)
                    self.paths.append(f"{path}/{name}" if path else name)
                edges.append((name, index[id(child)]))
            self.edges.append(edges)
            i += 1

    def value_key(self, i):
        return f"{self.paths[i]}/{VALUE_SUFFIX}"

    def variables(self):
        """[(node id, Variable)] in node order."""
        return [(i, obj) for i, obj in enumerate(self.objects) if isinstance(obj, Variable)]

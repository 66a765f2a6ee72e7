"""The names a TensorFlow checkpoint written by Keras 3 gives tapeflow's objects.

TensorFlow names an object's children by the attributes that hold them. For most objects these are the
names tapeflow's own checkpoints use (trackable_graph): a ``tf.Module``'s attributes, list indices, dict
keys, an optimizer's ``_iterations``/``_learning_rate``/``_variables``, a subclassed model's attributes, an
RNN's ``cell``. Keras 3 on TensorFlow differs for models and layer weights:

* a functional model tracks its layers (inputs included) as ``_operations/<i>``, in ``model.layers`` order;
* a Sequential model holds them in an inner functional model: ``_functional/_operations/<i>``, where
  item 0 is the input layer (it has no weights);
* a layer whose weights Keras 3 keeps behind a property holds them under ``_<name>`` (``_kernel``,
  ``_embeddings``), others under their name (``bias``, ``gamma``, ``moving_mean``).

``tf_children(obj)`` gives tapeflow's names plus these, so one walk matches either writer.
"""
from tapeflow.layers.layer import Layer
from tapeflow.layers.models.functional import Functional
from tapeflow.layers.models.sequential import Sequential

from .trackable_graph import _own_variables, _variable_name, children


class _InnerFunctional:
    """Stands for the functional model a Keras 3 Sequential keeps as ``_functional``."""

    def __init__(self, sequential):
        self.operations = (None,) + tuple(sequential.layers)   # None: the input layer, which has no state


def tf_children(obj):
    """``[(name, child)]`` of ``obj`` under tapeflow's names and Keras 3's TensorFlow names."""
    if isinstance(obj, _InnerFunctional):
        return [("_operations", obj.operations)]
    out = children(obj)
    taken = {name for name, _ in out}

    def add(name, value):
        if name not in taken:
            taken.add(name)
            out.append((name, value))
    if isinstance(obj, Sequential):
        add("_functional", _InnerFunctional(obj))
    elif isinstance(obj, Functional):
        add("_operations", tuple(obj.layers))
    if isinstance(obj, Layer):
        for variable in _own_variables(obj):
            name = _variable_name(variable)
            add(name, variable)
            add("_" + name, variable)
    return out

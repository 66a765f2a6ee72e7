"""Metric, the base of the metrics (``keras.metrics``): stateful ``update_state`` / ``result`` / ``reset_state``.

A metric's state lives in non-trainable variables (``total``, ``count``,
...), so it can be inspected and saved like Keras's. As in Keras, updates are
computed with tapeflow ops and applied with ``assign`` / ``assign_add``, and
results are computed with ops on the variables: eagerly they run at once;
inside tf.function they are nodes of the traced graph, run at every call, so
a traced step that updates metrics can be saved and reloaded like any graph.

Numbers follow Keras 3: values are cast to the metric's dtype before they are
reduced, confusion counts are compared and summed in the variables' dtype.
"""
import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M

from .. import backend
from ..serialization_lib import keras_export
from ..variable import KerasVariable


def _holds_tensors(x):
    if isinstance(x, (list, tuple)):
        return any(_holds_tensors(item) for item in x)
    return isinstance(x, Tensor) or hasattr(x, "_as_tensor")


def _tensor(x, dtype=None):
    """``x`` as a Tensor, in ``dtype`` when given. Tensors and variables are cast with an op (a node of
    the graph being traced); Python and numpy values are converted straight to ``dtype``."""
    if dtype is None:
        return convert_to_tensor(x)
    if _holds_tensors(x):
        return M.cast(convert_to_tensor(x), dtype)
    return convert_to_tensor(np.asarray(x).astype(dtypes.as_dtype(dtype).as_numpy_dtype))


def _ndim(t):
    return t.ndim


def _shape(t):
    return host_array(t).shape


@keras_export("keras.metrics.Metric")
class Metric:
    """Base class: subclasses create state with ``add_variable`` and implement the three methods."""
    _is_keras_metric = True
    _direction = None  # "up" when larger is better, "down" when smaller is (used by callbacks' mode="auto")

    def __init__(self, dtype=None, name=None):
        self.name = name or backend.snake_case(type(self).__name__)
        self._dtype = getattr(dtype, "name", dtype) or backend.floatx()
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        from .. import initializers
        with backend.name_scope(self.name, caller=self):
            variable = KerasVariable(initializers.get(initializer), shape=tuple(shape), dtype=dtype or self._dtype,
                                     trainable=False, aggregation=aggregation, name=name)
        self._variables.append(variable)
        return variable

    add_weight = add_variable

    @property
    def variables(self):
        out = list(self._variables)
        for value in vars(self).values():
            if isinstance(value, Metric):
                out.extend(value.variables)
        return out

    def reset_state(self):
        for v in self.variables:
            v.assign(A.zeros(v.shape, v.dtype))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"Metric {type(self).__name__} does not implement `update_state()`.")

    def result(self):
        raise NotImplementedError(f"Metric {type(self).__name__} does not implement `result()`.")

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def save_own_variables(self, store):
        for i, v in enumerate(self._variables):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store):
        if len(list(store.keys())) != len(self._variables):
            raise ValueError(f"Metric '{self.name}' expected {len(self._variables)} variables, but received "
                             f"{len(list(store.keys()))} variables during loading.")
        for i, v in enumerate(self._variables):
            v.assign(np.asarray(store[str(i)]))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"

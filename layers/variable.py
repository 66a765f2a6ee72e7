"""The variable layers create: a ``tf.Variable`` with Keras's name, path and regularizer.

It subclasses ``tapeflow.Variable``, so tapes watch it and optimizers update
it like any variable. ``name`` is the short name (``kernel``) and ``path``
the full one (``seq/dense/kernel``), fixed at creation from the name scopes
of the layers being built.
"""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.framework.variables import Variable as _TFVariable

from . import backend


class KerasVariable(_TFVariable):
    """A layer's variable: ``.name`` is ``kernel``, ``.path`` is ``model/dense/kernel``."""

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True, aggregation="none",
                 name=None, regularizer=None, constraint=None, overwrite_with_gradient=False):
        name = "variable" if name is None else str(name)
        if "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: name={name}")
        dtype = backend.floatx() if dtype is None else getattr(dtype, "name", dtype)
        if callable(initializer):
            if shape is None:
                raise ValueError(f"When creating a Variable from an initializer, the `shape` argument should be "
                                 f"specified. Received: initializer={initializer} and shape={shape}")
            value = initializer(tuple(shape), dtype=dtype)
        else:
            value = initializer
        value = np.asarray(host_array(value), dtype=str(dtype))
        if shape is not None and tuple(value.shape) != tuple(shape):
            raise ValueError(f"Initial value for variable '{name}' has shape {value.shape}, expected {tuple(shape)}.")
        super().__init__(value, trainable=trainable, name=name, constraint=constraint)
        self._keras_name = name
        parent = backend.current_path()
        self._path = f"{parent}/{name}" if parent else name
        self.regularizer = regularizer
        self.aggregation = aggregation
        self.autocast = autocast
        self.overwrite_with_gradient = overwrite_with_gradient

    @property
    def name(self):
        return self._keras_name

    @property
    def path(self):
        return self._path

    def __repr__(self):
        value = host_array(self)
        return f"<Variable path={self._path}, shape={tuple(value.shape)}, dtype={value.dtype}, value={value}>"

    __str__ = __repr__

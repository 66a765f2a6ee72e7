"""Operation: a keras.ops function as a node of a functional graph (Keras 3's ``keras.src.ops`` classes).

``keras_ops/symbolic.py`` creates one when an op is called on a KerasTensor;
the class is named as Keras names it (``keras.src.ops.numpy.Mean``), its
config holds the op's attributes, and calling it runs the op. A layer without
weights, masks or autocasting: operands reach the op as given, so ``1.0 - x``
computes in ``x``'s dtype, as Keras's weakly typed Python scalars do.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.keras_ops import symbolic

from .keras_tensor import KerasTensor
from .layer import Layer
from .serialization_lib import keras_export
from .utils import tree

_CLASSES = {}   # (keras module, class name) -> Operation subclass
_KERAS_OPS_MODULES = ("elementwise", "indexing", "products", "reductions", "shapes", "nn", "core", "math",
                      "linalg", "image", "convolution")


class Operation(Layer):
    """One call of a keras.ops function; ``_function`` is set by each subclass."""

    _function = None
    _autocast_inputs = False

    def __init__(self, name=None, **attributes):
        super().__init__(name=name)
        self.__dict__["_attributes"] = attributes   # plain config values, not tracked state

    def call(self, *args):
        return type(self)._function(*args, **self._attributes)

    def _convert_inputs(self, x):
        return x

    def compute_output_spec(self, *args):
        """Shapes and dtypes of the outputs: the op run on ones, with each unknown dimension 2 and then 3;
        a dimension that follows them is unknown in the output."""
        runs = [tree.flatten(self._run_on_ones(args, size)) for size in (2, 3)]
        outputs = self._run_on_ones(args, 2)

        def spec(first, second):
            if not isinstance(first, Tensor):
                return first
            shape = tuple(a if a == b else None for a, b in zip(first.shape, second.shape))
            return KerasTensor(shape, dtype=first.dtype.name)
        specs = iter([spec(a, b) for a, b in zip(*runs)])
        return tree.map_structure(lambda _: next(specs), outputs)

    def _run_on_ones(self, args, unknown):
        def concrete(t):
            if isinstance(t, KerasTensor):
                return Tensor(np.ones(tuple(unknown if d is None else d for d in t.shape), dtype=t.dtype))
            if isinstance(t, (list, tuple)):     # operands such as concatenate's list (an index stays a tuple)
                return type(t)(concrete(e) for e in t)
            return t
        return self.call(*[concrete(a) for a in args])

    def get_config(self):
        return {"name": self.name, **self._attributes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def operation_class(keras_module, class_name, function):
    """The Operation subclass ``keras_module.class_name`` running ``function`` (created once)."""
    key = (keras_module, class_name)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = type(class_name, (Operation,), {"_function": staticmethod(function), "__module__": __name__,
                                              "__doc__": f"``{keras_module}.{class_name}``: an operation of "
                                                         f"a functional graph."})
        keras_export(f"{keras_module}.{class_name}")(cls)
        _CLASSES[key] = cls
    return cls


def operation_class_named(keras_module, class_name):
    """The Operation subclass a Keras config names (``keras.src.ops.numpy``, ``Mean``), or None."""
    if (keras_module, class_name) not in _CLASSES:
        import importlib
        for module_name in _KERAS_OPS_MODULES:
            namespace = vars(importlib.import_module(f"tapeflow.keras_ops.{module_name}"))
            for name, fn in namespace.items():
                if getattr(fn, "keras_module", None) == keras_module and not name.startswith("_") and \
                        symbolic.camel_case(name) == class_name:
                    return operation_class(keras_module, class_name, fn.__wrapped__)
        if (keras_module, class_name) == ("keras.src.ops.numpy", "GetItem"):
            return operation_class(keras_module, class_name, symbolic.get_item.__wrapped__)
    return _CLASSES.get((keras_module, class_name))

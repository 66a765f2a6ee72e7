"""tf.keras compatibility namespace: re-exports tapeflow.layers, tapeflow.optimizers, ...

Nothing is implemented here; ``tf.keras.layers.Dense`` is
``tapeflow.layers.Dense`` and ``tf.keras.optimizers`` is ``tapeflow.optimizers``.
"""
from tapeflow.layers import Input, InputSpec, Layer, Model, Sequential  # noqa: F401
from tapeflow.layers.dtype_policy import DTypePolicy  # noqa: F401
from tapeflow.layers.keras_tensor import KerasTensor  # noqa: F401
from tapeflow.layers.variable import KerasVariable as Variable  # noqa: F401
from tapeflow.layers.initializers import Initializer  # noqa: F401
from tapeflow.layers.losses import Loss  # noqa: F401
from tapeflow.layers.metrics import Metric  # noqa: F401
from tapeflow.layers.regularizers import Regularizer  # noqa: F401

from . import (activations, backend, callbacks, constraints, initializers, layers, losses, metrics,  # noqa: F401
               models, regularizers, utils)

__version__ = "3.15.1"


def version():
    """The Keras version tapeflow follows."""
    return __version__


_LAZY = {"optimizers": "tapeflow.optimizers", "saving": "tapeflow.saving", "ops": "tapeflow.keras.ops",
         "random": "tapeflow.keras.random", "config": "tapeflow.keras.config", "tree": "tapeflow.keras.tree",
         "preprocessing": "tapeflow.keras.preprocessing", "datasets": "tapeflow.keras.datasets"}


def __getattr__(name):
    """tf.keras.optimizers, saving, ops, random, config, tree, preprocessing and datasets are loaded on first use."""
    if name == "Optimizer":
        from tapeflow.optimizers import Optimizer
        globals()["Optimizer"] = Optimizer
        return Optimizer
    if name in _LAZY:
        import importlib
        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tapeflow.keras' has no attribute {name!r}")

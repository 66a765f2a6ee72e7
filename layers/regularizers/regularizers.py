"""Weight regularizers (``keras.regularizers``): penalties added to the loss."""
import tapeflow.ops.math_ops as M
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import to_tensor

from ..serialization_lib import keras_export, module_accessors


def _check_penalty(name, value):
    value = float(value)
    if value < 0:
        raise ValueError(f"Value for argument `{name}` must be a non-negative float. Received: {name}={value}")
    return value


@keras_export("keras.regularizers.Regularizer")
class Regularizer:
    """Base class: ``__call__(x)`` returns a scalar penalty."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_config()")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@keras_export("keras.regularizers.L1")
class L1(Regularizer):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01):
        self.l1 = _check_penalty("l1", l1)

    def __call__(self, x):
        return M.multiply(R.reduce_sum(M.abs(to_tensor(x))), self.l1)

    def get_config(self):
        return {"l1": self.l1}


@keras_export("keras.regularizers.L2")
class L2(Regularizer):
    """``l2 * sum(x**2)``."""

    def __init__(self, l2=0.01):
        self.l2 = _check_penalty("l2", l2)

    def __call__(self, x):
        return M.multiply(R.reduce_sum(M.square(to_tensor(x))), self.l2)

    def get_config(self):
        return {"l2": self.l2}


@keras_export("keras.regularizers.L1L2")
class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _check_penalty("l1", l1)
        self.l2 = _check_penalty("l2", l2)

    def __call__(self, x):
        x = to_tensor(x)
        total = M.zeros_like_(R.reduce_sum(x))
        if self.l1:
            total = M.add(total, M.multiply(R.reduce_sum(M.abs(x)), self.l1))
        if self.l2:
            total = M.add(total, M.multiply(R.reduce_sum(M.square(x)), self.l2))
        return total

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


l1 = L1
l2 = L2
l1_l2 = L1L2
_ALL = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}


serialize, deserialize, get = module_accessors(_ALL, "regularizer")

"""Weight constraints (``keras.constraints``), applied by optimizers after each update."""
import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops.common import to_tensor

from ..serialization_lib import keras_export, module_accessors


def _array(w):
    return host_array(to_tensor(w))


@keras_export("keras.constraints.Constraint")
class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@keras_export("keras.constraints.NonNeg")
class NonNeg(Constraint):
    """Sets negative weights to zero."""

    def __call__(self, w):
        a = _array(w)
        return Tensor(a * (a >= 0))


@keras_export("keras.constraints.MaxNorm")
class MaxNorm(Constraint):
    """Rescales weights whose norm along ``axis`` exceeds ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        a = _array(w)
        norms = np.sqrt(np.sum(np.square(a), axis=self.axis, keepdims=True))
        desired = np.clip(norms, 0, self.max_value)
        return Tensor((a * (desired / (1e-7 + norms))).astype(a.dtype))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


@keras_export("keras.constraints.UnitNorm")
class UnitNorm(Constraint):
    """Rescales weights to unit norm along ``axis``."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        a = _array(w)
        return Tensor((a / (1e-7 + np.sqrt(np.sum(np.square(a), axis=self.axis, keepdims=True)))).astype(a.dtype))

    def get_config(self):
        return {"axis": self.axis}


@keras_export("keras.constraints.MinMaxNorm")
class MinMaxNorm(Constraint):
    """Keeps the norm along ``axis`` within [min_value, max_value] (moved there at ``rate``)."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        a = _array(w)
        norms = np.sqrt(np.sum(np.square(a), axis=self.axis, keepdims=True))
        desired = self.rate * np.clip(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return Tensor((a * (desired / (1e-7 + norms))).astype(a.dtype))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


_ALL = {"non_neg": NonNeg, "max_norm": MaxNorm, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
        "NonNeg": NonNeg, "MaxNorm": MaxNorm, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm}


serialize, deserialize, get = module_accessors(_ALL, "constraint")

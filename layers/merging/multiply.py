"""Multiply: the elementwise product of a list of inputs."""
from tapeflow.ops import array_ops, math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Multiply")
class Multiply(Merge):
    _mask_fill = 1.0   # masked entries do not scale the product

    def _all_masked_value(self, inputs, out):
        return array_ops.zeros_like(out)

    def _merge(self, a, b):
        return math_ops.multiply(a, b)

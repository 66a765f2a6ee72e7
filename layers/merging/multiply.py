"""Multiply: the elementwise product of a list of inputs."""
from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Multiply")
class Multiply(Merge):
    def _merge(self, a, b):
        return math_ops.multiply(a, b)

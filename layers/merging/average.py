"""Average: the elementwise mean of a list of inputs."""
from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Average")
class Average(Merge):
    def call(self, inputs):
        return math_ops.divide(super().call(inputs), float(len(inputs)))

    def _merge(self, a, b):
        return math_ops.add(a, b)

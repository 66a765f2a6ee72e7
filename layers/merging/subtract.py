"""Subtract: the difference of exactly two inputs."""
from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Subtract")
class Subtract(Merge):
    def build(self, input_shape):
        if len(input_shape) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: "
                             f"input_shape={input_shape}")
        super().build(input_shape)

    def _merge(self, a, b):
        return math_ops.subtract(a, b)

"""Rescaling: ``x * scale + offset`` (e.g. ``Rescaling(1 / 255)`` for pixel values), output in floats."""
import numpy as np

from tapeflow.ops import math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


def _plain(value):
    if isinstance(value, (int, float, list)):
        return value
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array.tolist()


@keras_export("keras.layers.Rescaling")
class Rescaling(Layer):
    """Multiplies by ``scale`` and adds ``offset`` (scalars, or arrays broadcasting against the inputs)."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset
        self.supports_masking = True

    def call(self, inputs):
        dtype = self.compute_dtype
        inputs = math_ops.cast(inputs, dtype)
        scale = np.asarray(self.scale, dtype=dtype)
        offset = np.asarray(self.offset, dtype=dtype)
        return math_ops.add(math_ops.multiply(inputs, scale), offset)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"scale": _plain(self.scale), "offset": _plain(self.offset)})
        return config

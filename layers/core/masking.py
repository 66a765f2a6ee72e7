"""Masking: marks the time steps whose features all equal ``mask_value`` as masked, and zeroes them."""
from tapeflow.ops import math_ops, reduction_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Masking")
class Masking(Layer):
    """Outputs the inputs with masked steps set to zero; the mask (batch, steps) goes to the next layers."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs, mask=None):
        return reduction_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = reduction_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return math_ops.multiply(inputs, math_ops.cast(keep, inputs.dtype))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config

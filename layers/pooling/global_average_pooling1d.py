"""GlobalAveragePooling1D: the mean over the steps (kept as size 1 with ``keepdims``).

With a ``mask`` (batch, steps) the mean is over the unmasked steps only.
"""
from tapeflow.ops import array_ops, math_ops, reduction_ops

from ..serialization_lib import keras_export
from .base_pooling import BaseGlobalPooling


@keras_export("keras.layers.GlobalAveragePooling1D")
class GlobalAveragePooling1D(BaseGlobalPooling):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(1, "avg", data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        steps = 1 if self.data_format == "channels_last" else 2
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), 3 - steps)
        total = reduction_ops.reduce_sum(math_ops.multiply(inputs, weights), axis=steps, keepdims=self.keepdims)
        count = reduction_ops.reduce_sum(weights, axis=steps, keepdims=self.keepdims)
        return math_ops.divide(total, count)

    def compute_mask(self, inputs, previous_mask):
        return None  # the steps are pooled away: the mask is consumed, as in Keras

"""Softmax over ``axis`` (an int or a tuple of axes); masked positions get probability 0.

With a ``mask`` the masked logits are replaced by a large negative number (-1e9;
-3e4 for float16) before the softmax and the output is multiplied by the mask,
as Keras does (an all-masked row gives zeros).
"""
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops, math_ops, reduction_ops
from tapeflow.ops.common import to_tensor

from .. import activations
from ..layer import Layer
from ..serialization_lib import keras_export


def _large_negative_number(dtype):
    return -3e4 if dtype.name == "float16" else -1e9


@keras_export("keras.layers.Softmax")
class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = tuple(axis) if isinstance(axis, list) else axis
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = to_tensor(mask)
            keep = mask if mask.dtype.name == "bool" else math_ops.greater(mask, 0.5)
            filler = math_ops.cast(array_ops.fill(tuple(host_array(inputs).shape),
                                                  _large_negative_number(inputs.dtype)), inputs.dtype)
            inputs = array_ops.where(keep, inputs, filler)
        if isinstance(self.axis, tuple) and len(self.axis) > 1:
            shifted = math_ops.subtract(inputs, reduction_ops.reduce_logsumexp(inputs, axis=list(self.axis),
                                                                               keepdims=True))
            outputs = math_ops.exp(shifted)
        else:
            axis = self.axis[0] if isinstance(self.axis, tuple) else self.axis
            outputs = activations.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = math_ops.multiply(outputs, math_ops.cast(mask, outputs.dtype))
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config

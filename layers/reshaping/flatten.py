"""Flatten: (batch, d1, d2, ...) -> (batch, d1*d2*...)."""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Flatten")
class Flatten(Layer):
    """(batch, d1, d2, ...) -> (batch, d1*d2*...)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                             f"Received: data_format={data_format}")
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        x = inputs
        if self.data_format == "channels_first" and x.ndim > 2:
            x = array_ops.transpose(x, [0] + list(range(2, x.ndim)) + [1])
        return array_ops.reshape(x, (host_array(x).shape[0], -1))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(d is None for d in rest) else int(np.prod(rest))
        return (input_shape[0], size)

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config

"""Reshape: gives each sample a new shape, keeping the batch axis."""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Reshape")
class Reshape(Layer):
    """Reshapes each sample to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        target_shape = tuple(target_shape)
        if sum(1 for d in target_shape if d == -1) > 1:
            raise ValueError(f"There must be at most one unknown dimension (-1) in target_shape. "
                             f"Received: target_shape={target_shape}")
        self.target_shape = target_shape

    def _resolved(self, input_shape):
        rest = input_shape[1:]
        if -1 not in self.target_shape:
            if all(d is not None for d in rest) and int(np.prod(rest)) != int(np.prod(self.target_shape)):
                raise ValueError(f"total size of new array must be unchanged, input_shape = {list(rest)}, "
                                 f"output_shape = {list(self.target_shape)}")
            return self.target_shape
        if any(d is None for d in rest):
            return tuple(None if d == -1 else d for d in self.target_shape)
        known = int(np.prod([d for d in self.target_shape if d != -1]))
        total = int(np.prod(rest))
        if known == 0 or total % known:
            raise ValueError(f"The total size of the tensor must be unchanged. Received: input_shape="
                             f"{tuple(rest)}, target_shape={self.target_shape}")
        return tuple(total // known if d == -1 else d for d in self.target_shape)

    def call(self, inputs):
        shape = self._resolved(tuple(host_array(inputs).shape))
        return array_ops.reshape(inputs, (host_array(inputs).shape[0],) + tuple(shape))

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(self._resolved(tuple(input_shape)))

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config

"""Dropout: in training, zero each input with probability ``rate`` and scale the rest by 1/(1-rate)."""
import numbers

from tapeflow.framework.tensor import host_array
from tapeflow.ops import math_ops, random_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Dropout")
class Dropout(Layer):
    """Inverted dropout; the identity at inference.

    With a ``seed`` the masks come from that seed's stream (as an op-level
    seed in TensorFlow), reproducible from one run to the next.
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return math_ops.multiply(inputs, 0.0)
        shape = host_array(inputs).shape
        if self.noise_shape is not None:
            shape = tuple(dim if n is None else int(n) for n, dim in zip(self.noise_shape, shape))
        # The mask is an op, so a traced tf.function draws a new one on every call.
        return math_ops.multiply(inputs, random_ops.dropout_mask(shape, self.rate, inputs.dtype, self.seed))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape})
        return config

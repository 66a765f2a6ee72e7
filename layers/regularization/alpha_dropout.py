"""AlphaDropout: dropout for SELU networks that keeps the inputs' mean and variance (training only).

Dropped inputs are set to SELU's negative saturation ``-scale * alpha``, then
everything is mapped by ``a * x + b`` with ``a = ((1 - rate) * (1 + rate *
alpha_p^2))^-1/2`` and ``b = -a * alpha_p * rate``.
"""
import numbers

from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import math_ops

from ..layer import Layer
from ..serialization_lib import keras_export

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@keras_export("keras.layers.AlphaDropout")
class AlphaDropout(Layer):
    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = rate
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or not 0 < self.rate < 1:
            return inputs
        shape = tuple(inputs.shape)
        if self.noise_shape is not None:
            shape = tuple(dim if n is None else int(n) for n, dim in zip(self.noise_shape, shape))
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        kept = math_ops.cast(math_ops.greater_equal(
            keras_random.uniform(shape, dtype=inputs.dtype.name, seed=self.seed_generator), self.rate), inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = math_ops.add(math_ops.multiply(inputs, kept), math_ops.multiply(math_ops.subtract(1.0, kept), alpha_p))
        return math_ops.add(math_ops.multiply(x, a), b)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape})
        return config

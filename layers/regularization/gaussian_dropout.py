"""GaussianDropout: multiplies by N(1, rate / (1 - rate)) noise in training; the identity otherwise."""
import math
import numbers

from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.GaussianDropout")
class GaussianDropout(Layer):
    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = rate
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = keras_random.normal(tuple(inputs.shape), mean=1.0, stddev=stddev, dtype=inputs.dtype.name,
                                    seed=self.seed_generator)
        return math_ops.multiply(inputs, noise)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed})
        return config

"""GaussianNoise: adds N(0, stddev^2) noise in training; the identity otherwise."""
import numbers

from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.GaussianNoise")
class GaussianNoise(Layer):
    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(stddev, numbers.Real) or stddev < 0:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a non-negative float value. "
                             f"Received: stddev={stddev}")
        self.stddev = stddev
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        noise = keras_random.normal(tuple(inputs.shape), stddev=self.stddev, dtype=inputs.dtype.name,
                                    seed=self.seed_generator)
        return math_ops.add(inputs, noise)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"stddev": self.stddev, "seed": self.seed})
        return config

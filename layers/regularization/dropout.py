"""Dropout: in training, zero each input with probability ``rate`` and scale the rest by 1/(1-rate)."""
import numbers

from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Dropout")
class Dropout(Layer):
    """Inverted dropout; the identity at inference.

    As in Keras on TensorFlow, the layer owns a ``SeedGenerator`` (seeded with ``seed``, else with a number
    drawn from Python's ``random`` when the layer is made) and each training call draws the mask of
    ``tf.nn.experimental.stateless_dropout`` for the generator's next seed: the same masks as Keras's.
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return math_ops.multiply(inputs, 0.0)
        return keras_random.dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed_generator)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape})
        return config

"""SpatialDropout1D/2D: dropout of whole feature maps (one draw per example and channel).

Active only in training; the kept channels are scaled by 1 / (1 - rate).
"""
from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import math_ops

from ..argument_validation import standardize_data_format
from .dropout import Dropout
from ..input_spec import InputSpec
from ..serialization_lib import keras_export


class BaseSpatialDropout(Dropout):
    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return math_ops.multiply(inputs, 0.0)
        return keras_random.dropout(inputs, self.rate, noise_shape=self._noise_shape(tuple(inputs.shape)),
                                    seed=self.seed_generator)

    def get_config(self):
        # Keras writes these keys only, with the dtype as a plain name.
        return {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self.dtype}


@keras_export("keras.layers.SpatialDropout1D")
class SpatialDropout1D(BaseSpatialDropout):
    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.input_spec = InputSpec(ndim=3)

    def _noise_shape(self, shape):
        return (shape[0], 1, shape[2])


@keras_export("keras.layers.SpatialDropout2D")
class SpatialDropout2D(BaseSpatialDropout):
    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def _noise_shape(self, shape):
        if self.data_format == "channels_last":
            return (shape[0], 1, 1, shape[3])
        return (shape[0], shape[1], 1, 1)

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config

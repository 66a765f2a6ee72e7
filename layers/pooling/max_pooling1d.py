"""MaxPooling1D: max pooling over windows of 1-D inputs."""
from ..serialization_lib import keras_export
from .base_pooling import BasePooling


@keras_export("keras.layers.MaxPooling1D")
class MaxPooling1D(BasePooling):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(1, "max", pool_size, strides=strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)

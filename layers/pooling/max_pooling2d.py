"""MaxPooling2D: max pooling over windows of 2-D inputs."""
from ..serialization_lib import keras_export
from .base_pooling import BasePooling


@keras_export("keras.layers.MaxPooling2D")
class MaxPooling2D(BasePooling):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(2, "max", pool_size, strides=strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)

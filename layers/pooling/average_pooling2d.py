"""AveragePooling2D: average pooling over windows of 2-D inputs."""
from ..serialization_lib import keras_export
from .base_pooling import BasePooling


@keras_export("keras.layers.AveragePooling2D")
class AveragePooling2D(BasePooling):
    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(2, "avg", pool_size, strides=strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)

"""Cropping2D: drops rows and columns at the borders of images."""
from tapeflow.framework.tensor import host_array

from ..argument_validation import standardize_data_format
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from ._pairs import pairs
from .cropping1d import cropped_length


@keras_export("keras.layers.Cropping2D")
class Cropping2D(Layer):
    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = pairs(cropping, 2, "cropping")
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def _axes(self):
        return (1, 2) if self.data_format == "channels_last" else (2, 3)

    def call(self, inputs):
        key = [slice(None)] * 4
        for axis, (before, after) in zip(self._axes(), self.cropping):
            length = cropped_length(host_array(inputs).shape[axis], before, after, self)
            key[axis] = slice(before, before + length)
        return inputs[tuple(key)]

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, amounts in zip(self._axes(), self.cropping):
            shape[axis] = cropped_length(shape[axis], *amounts, self)
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"cropping": self.cropping, "data_format": self.data_format})
        return config

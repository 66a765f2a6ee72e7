"""Cropping3D: drops slices at the borders of the three spatial axes of volumes."""
from tapeflow.framework.tensor import host_array

from ..argument_validation import standardize_data_format
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from ._pairs import pairs
from .cropping1d import cropped_length
from .zero_padding3d import spatial_axes_3d


@keras_export("keras.layers.Cropping3D")
class Cropping3D(Layer):
    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = pairs(cropping, 3, "cropping")
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        key = [slice(None)] * 5
        for axis, (before, after) in zip(spatial_axes_3d(self.data_format), self.cropping):
            length = cropped_length(host_array(inputs).shape[axis], before, after, self)
            key[axis] = slice(before, before + length)
        return inputs[tuple(key)]

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, amounts in zip(spatial_axes_3d(self.data_format), self.cropping):
            shape[axis] = cropped_length(shape[axis], *amounts, self)
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"cropping": self.cropping, "data_format": self.data_format})
        return config

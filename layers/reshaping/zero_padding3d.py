"""ZeroPadding3D: zeros around the three spatial axes of volumes."""
from tapeflow.ops import array_ops

from ..argument_validation import standardize_data_format
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from ._pairs import pairs
from .zero_padding1d import _grow


def spatial_axes_3d(data_format):
    return (1, 2, 3) if data_format == "channels_last" else (2, 3, 4)


@keras_export("keras.layers.ZeroPadding3D")
class ZeroPadding3D(Layer):
    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = pairs(padding, 3, "padding")
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        paddings = [[0, 0]] * 5
        for axis, amounts in zip(spatial_axes_3d(self.data_format), self.padding):
            paddings[axis] = list(amounts)
        return array_ops.pad(inputs, paddings)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, amounts in zip(spatial_axes_3d(self.data_format), self.padding):
            shape[axis] = _grow(shape[axis], *amounts)
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"padding": self.padding, "data_format": self.data_format})
        return config

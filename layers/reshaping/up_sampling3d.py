"""UpSampling3D: repeats the entries of the three spatial axes of volumes (nearest-neighbour upsampling)."""
from tapeflow.ops import array_ops

from ..argument_validation import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from .zero_padding3d import spatial_axes_3d


@keras_export("keras.layers.UpSampling3D")
class UpSampling3D(Layer):
    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.size = standardize_tuple(size, 3, "size")
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis, factor in zip(spatial_axes_3d(self.data_format), self.size):
            x = array_ops.repeat(x, factor, axis=axis)
        return x

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, factor in zip(spatial_axes_3d(self.data_format), self.size):
            shape[axis] = None if shape[axis] is None else shape[axis] * factor
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"size": self.size, "data_format": self.data_format})
        return config

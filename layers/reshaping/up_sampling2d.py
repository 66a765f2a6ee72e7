"""UpSampling2D: repeats rows and columns (nearest-neighbour upsampling)."""
from tapeflow.ops import array_ops

from ..argument_validation import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.UpSampling2D")
class UpSampling2D(Layer):
    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = standardize_tuple(size, 2, "size")
        self.data_format = standardize_data_format(data_format)
        if interpolation != "nearest":
            raise ValueError(f"UpSampling2D: only interpolation='nearest' is supported by tapeflow. Received: "
                             f"interpolation={interpolation!r}")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def _axes(self):
        return (1, 2) if self.data_format == "channels_last" else (2, 3)

    def call(self, inputs):
        x = inputs
        for axis, factor in zip(self._axes(), self.size):
            x = array_ops.repeat(x, factor, axis=axis)
        return x

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, factor in zip(self._axes(), self.size):
            shape[axis] = None if shape[axis] is None else shape[axis] * factor
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"size": self.size, "data_format": self.data_format, "interpolation": self.interpolation})
        return config

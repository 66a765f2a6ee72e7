"""ZeroPadding1D: zeros before and after the steps of (batch, steps, features) inputs."""
from tapeflow.ops import array_ops

from ..argument_validation import standardize_data_format
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from ._pairs import pair


def _grow(length, before, after):
    return None if length is None else length + before + after


@keras_export("keras.layers.ZeroPadding1D")
class ZeroPadding1D(Layer):
    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = pair(padding, "padding")
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=3)

    def _axis(self):
        return 1 if self.data_format == "channels_last" else 2

    def call(self, inputs):
        paddings = [[0, 0], [0, 0], [0, 0]]
        paddings[self._axis()] = list(self.padding)
        return array_ops.pad(inputs, paddings)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[self._axis()] = _grow(shape[self._axis()], *self.padding)
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"padding": self.padding, "data_format": self.data_format})
        return config

"""Cropping1D: drops steps at the start and end of (batch, steps, features) inputs."""
from tapeflow.framework.tensor import host_array

from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from ._pairs import pair


def cropped_length(length, before, after, layer):
    if length is None:
        return None
    if before + after >= length:
        raise ValueError(f"{type(layer).__name__}: cropping {(before, after)} leaves nothing of an axis of length "
                         f"{length}")
    return length - before - after


@keras_export("keras.layers.Cropping1D")
class Cropping1D(Layer):
    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = pair(cropping, "cropping")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        before, after = self.cropping
        length = cropped_length(host_array(inputs).shape[1], before, after, self)
        return inputs[:, before:before + length, :]

    def compute_output_shape(self, input_shape):
        return (input_shape[0], cropped_length(input_shape[1], *self.cropping, self), input_shape[2])

    def get_config(self):
        config = super().get_config()
        config["cropping"] = self.cropping
        return config

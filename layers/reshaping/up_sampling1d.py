"""UpSampling1D: repeats each step ``size`` times."""
import numbers

from tapeflow.ops import array_ops

from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export


def positive_int(value, name):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"The `{name}` argument must be a positive integer. Received {name}={value}")
    return int(value)


@keras_export("keras.layers.UpSampling1D")
class UpSampling1D(Layer):
    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = positive_int(size, "size")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return array_ops.repeat(inputs, self.size, axis=1)

    def compute_output_shape(self, input_shape):
        steps = None if input_shape[1] is None else input_shape[1] * self.size
        return (input_shape[0], steps, input_shape[2])

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size
        return config

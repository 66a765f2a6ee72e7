"""RepeatVector: (batch, features) -> (batch, n, features)."""
from tapeflow.ops import array_ops

from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export
from .up_sampling1d import positive_int


@keras_export("keras.layers.RepeatVector")
class RepeatVector(Layer):
    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = positive_int(n, "n")
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return array_ops.repeat(array_ops.expand_dims(inputs, 1), self.n, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config

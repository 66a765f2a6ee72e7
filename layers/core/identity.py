"""Identity: returns its inputs unchanged (a placeholder layer)."""
from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Identity")
class Identity(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return super().get_config()

"""ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` below."""
from .. import activations
from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.ELU")
class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self.supports_masking = True

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = {"name": self.name, "alpha": self.alpha}
        config.update(super().get_config())
        return config

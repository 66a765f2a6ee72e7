"""ActivityRegularization: the identity, adding ``l1 * sum|x| + l2 * sum x^2`` of its output to the losses."""
from .. import regularizers
from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.ActivityRegularization")
class ActivityRegularization(Layer):
    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1 = l1
        self.l2 = l2
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        config.update({"l1": self.l1, "l2": self.l2})
        return config

"""UnitNormalization: each sample divided by its L2 norm over ``axis``."""
from tapeflow.keras_ops.nn import normalize

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.UnitNormalization")
class UnitNormalization(Layer):
    """``x / max(||x||_2, 1e-12)`` along ``axis`` (an int or a list of ints, never the batch axis alone)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis}")
        self.supports_masking = True

    def build(self, input_shape):
        rank = len(input_shape)
        for a in self.axis if isinstance(self.axis, list) else [self.axis]:
            if not -rank <= a < rank:
                raise ValueError(f"Invalid axis {a} for UnitNormalization: the input has rank {rank}.")
        self.built = True

    def call(self, inputs):
        return normalize(inputs, axis=self.axis, order=2, epsilon=1e-12)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config

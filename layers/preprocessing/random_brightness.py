"""RandomBrightness: in training, adds a random fraction of the value range to each image."""
from tapeflow.ops import math_ops
from tapeflow.ops.common import to_tensor

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer, factor_range


@keras_export("keras.layers.RandomBrightness")
class RandomBrightness(BaseRandomLayer):
    """``factor``: f (a shift in [-f, f] of the value range) or a pair in [-1, 1]; the result is clipped
    to ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        self.factor_bounds = factor_range(factor, "factor")
        if len(value_range) != 2 or value_range[0] >= value_range[1]:
            raise ValueError(f"The `value_range` argument should be a list of two numbers, low then high. "
                             f"Received: value_range={value_range}")
        self.value_range = value_range

    def call(self, inputs, training=True):
        """Integer images stay integers (rounded), as in Keras; floats compute in the compute dtype."""
        out = super().call(inputs, training)
        return self._as_integers_of(out, to_tensor(inputs).dtype) if training else out

    def inference(self, inputs):
        x = to_tensor(inputs)
        return x if x.dtype.is_integer else self._float(x)

    def sample(self, batch, height, width):
        span = float(self.value_range[1] - self.value_range[0])
        return {"rgb_delta": math_ops.multiply(self.uniform((batch, 1, 1, 1), *self.factor_bounds), span)}

    def apply(self, images, params):
        out = math_ops.add(images, params["rgb_delta"])
        return math_ops.clip_by_value(out, self.value_range[0], self.value_range[1])

    def get_config(self):
        config = super().get_config()
        config.update({"factor": tuple(self.factor_bounds), "value_range": list(self.value_range)})
        return config

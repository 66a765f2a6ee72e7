"""RandomContrast: in training, scales each image's deviation from its per-channel mean by a random factor."""
from tapeflow.ops import math_ops, reduction_ops

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer, factor_range


@keras_export("keras.layers.RandomContrast")
class RandomContrast(BaseRandomLayer):
    """``factor``: a pair (lower, upper) in [0, 1] draws the contrast factor in [1 - lower, 1 + upper]; a
    number f stands for (0, f), as in Keras 3.15 (which samples [1, 1 + f] and writes (0, f) in its config).
    The result is clipped to ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor_range(factor, "factor", low=0.0, high=1.0, single=lambda f: (0, f))
        if isinstance(factor, (tuple, list)):
            self.factor = tuple(factor)
        self.value_range = tuple(value_range)

    def inference(self, inputs):
        return inputs

    def sample(self, batch, height, width):
        lower, upper = self.factor
        return {"contrast_factor": self.uniform((batch, 1, 1, 1), 1.0 - lower, 1.0 + upper)}

    def apply(self, images, params):
        mean = reduction_ops.reduce_mean(images, axis=[1, 2], keepdims=True)
        out = math_ops.add(math_ops.multiply(math_ops.subtract(images, mean), params["contrast_factor"]), mean)
        return math_ops.clip_by_value(out, self.value_range[0], self.value_range[1])

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "value_range": self.value_range})
        return config

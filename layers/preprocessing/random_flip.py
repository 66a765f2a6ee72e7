"""RandomFlip: in training, flips each image with probability 1/2 (horizontally, vertically, or both
axes at once with one draw per image, as Keras 3 does)."""
from tapeflow.ops import array_ops, math_ops

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer

HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL = "horizontal", "vertical", "horizontal_and_vertical"


@keras_export("keras.layers.RandomFlip")
class RandomFlip(BaseRandomLayer):
    def __init__(self, mode=HORIZONTAL_AND_VERTICAL, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in (HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        self.mode = mode

    def sample(self, batch, height, width):
        return {"flips": math_ops.less(self.uniform((batch, 1, 1, 1), 0.0, 1.0), 0.5)}

    def apply(self, images, params):
        axes = {HORIZONTAL: [2], VERTICAL: [1], HORIZONTAL_AND_VERTICAL: [1, 2]}[self.mode]
        return array_ops.where(params["flips"], array_ops.reverse(images, axes), images)

    def get_config(self):
        config = super().get_config()
        config["mode"] = self.mode
        return config

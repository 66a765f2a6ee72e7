"""RandomTranslation: in training, shifts each image by a random fraction of its height and width."""
from tapeflow.image import transforms
from tapeflow.ops import array_ops, math_ops

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer, check_fill_and_interpolation, factor_range


@keras_export("keras.layers.RandomTranslation")
class RandomTranslation(BaseRandomLayer):
    """``height_factor``/``width_factor``: a fraction f (shift in [-f, f] of the size) or a pair
    (lower, upper), within [-1, 1]; a positive shift moves the content down (right)."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_range = factor_range(height_factor, "height_factor")
        self.width_range = factor_range(width_factor, "width_factor")
        check_fill_and_interpolation(fill_mode, interpolation)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, fill_value

    def sample(self, batch, height, width):
        dx = math_ops.multiply(self.uniform((batch,), *self.width_range), float(width))
        dy = math_ops.multiply(self.uniform((batch,), *self.height_range), float(height))
        return {"translations": array_ops.stack([dx, dy], axis=1)}

    def apply(self, images, params):
        t = params["translations"]
        maps = transforms.translation_transforms(t[:, 0], t[:, 1])
        return transforms.transform(images, maps, self.interpolation, self.fill_mode, self.fill_value)

    def get_config(self):
        config = super().get_config()
        config.update({"height_factor": self.height_factor, "width_factor": self.width_factor,
                       "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                       "fill_value": self.fill_value})
        return config

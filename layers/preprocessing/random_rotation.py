"""RandomRotation: in training, rotates each image by a random fraction of a full turn about its centre."""
import math

from tapeflow.framework.tensor import host_array
from tapeflow.image import transforms
from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer, check_fill_and_interpolation, factor_range


@keras_export("keras.layers.RandomRotation")
class RandomRotation(BaseRandomLayer):
    """``factor``: f (angles in [-f, f] turns) or a pair (lower, upper); positive is counter-clockwise."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor
        self.angle_range = factor_range(factor, "factor", low=-math.inf, high=math.inf)
        check_fill_and_interpolation(fill_mode, interpolation)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, fill_value

    def sample(self, batch, height, width):
        """Angles in degrees, as Keras reports them."""
        return {"angle": math_ops.multiply(self.uniform((batch,), *self.angle_range), 360.0)}

    def apply(self, images, params):
        height, width = host_array(images).shape[1:3]
        radians = math_ops.divide(params["angle"], transforms.DEGREES)
        maps = transforms.rotation_transforms(radians, height, width)
        return transforms.transform(images, maps, self.interpolation, self.fill_mode, self.fill_value)

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.angle_range, "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                       "interpolation": self.interpolation})
        return config

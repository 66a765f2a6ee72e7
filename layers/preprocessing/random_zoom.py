"""RandomZoom: in training, zooms each image in or out about its centre by a random factor per axis."""
from tapeflow.framework.tensor import host_array
from tapeflow.image import transforms
from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer, check_fill_and_interpolation, factor_range


@keras_export("keras.layers.RandomZoom")
class RandomZoom(BaseRandomLayer):
    """``height_factor``: f (zoom in [1 - f, 1 + f]) or a pair: the zoom is 1 + a draw in [lower, upper];
    positive zooms out. ``width_factor`` alike; None keeps the aspect ratio (one draw for both axes)."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_range = factor_range(height_factor, "height_factor", low=-1.0, high=float("inf"))
        self.width_range = None if width_factor is None else \
            factor_range(width_factor, "width_factor", low=-1.0, high=float("inf"))
        check_fill_and_interpolation(fill_mode, interpolation)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, fill_value

    def sample(self, batch, height, width):
        height_zoom = math_ops.add(self.uniform((batch, 1), *self.height_range), 1.0)
        if self.width_range is None:
            return {"height_zoom": height_zoom, "width_zoom": height_zoom}
        return {"height_zoom": height_zoom, "width_zoom": math_ops.add(self.uniform((batch, 1), *self.width_range),
                                                                       1.0)}

    def apply(self, images, params):
        height, width = host_array(images).shape[1:3]
        maps = transforms.zoom_transforms(params["width_zoom"][:, 0], params["height_zoom"][:, 0], height, width)
        return transforms.transform(images, maps, self.interpolation, self.fill_mode, self.fill_value)

    def get_config(self):
        config = super().get_config()
        config.update({"height_factor": self.height_factor, "width_factor": self.width_factor,
                       "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                       "fill_value": self.fill_value})
        return config

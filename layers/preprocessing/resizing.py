"""Resizing: resizes images to (height, width), optionally cropping or padding to the target aspect ratio first."""
from tapeflow.framework.tensor import host_array
from tapeflow.image import resize as image_resize
from tapeflow.image.cropping import crop_to_bounding_box

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseImagePreprocessingLayer

_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")


def aspect_crop_box(height, width, target_height, target_width):
    """The largest centred window of the image with the target's aspect ratio: (top, left, h, w)."""
    crop_h = min(height, int(width * target_height / target_width))
    crop_w = min(width, int(height * target_width / target_height))
    return int((height - crop_h) / 2), int((width - crop_w) / 2), crop_h, crop_w


def smart_resize(images, height, width, interpolation="bilinear"):
    """Crops a channels-last batch to the target aspect ratio, then resizes it."""
    h, w = host_array(images).shape[1:3]
    top, left, crop_h, crop_w = aspect_crop_box(h, w, height, width)
    if (crop_h, crop_w) != (h, w):
        images = crop_to_bounding_box(images, top, left, crop_h, crop_w)
    return image_resize(images, [height, width], method=interpolation)


@keras_export("keras.layers.Resizing")
class Resizing(BaseImagePreprocessingLayer):
    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width = int(height), int(width)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`. Expected one of {list(_INTERPOLATIONS)}."
                             f" Received: interpolation={interpolation}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True.")
        if fill_mode != "constant":
            raise NotImplementedError(f"Resizing: only fill_mode='constant' is supported. Received: {fill_mode!r}")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = antialias

    def transform_batch(self, images):
        """Resized in the compute dtype; integer images come back as integers (rounded), as in Keras."""
        x = self._float(images)
        if self.crop_to_aspect_ratio:
            out = smart_resize(x, self.height, self.width, self.interpolation)
        else:
            if self.pad_to_aspect_ratio:
                x = self._pad_to_aspect_ratio(x)
            out = image_resize(x, [self.height, self.width], method=self.interpolation, antialias=self.antialias)
        return self._as_integers_of(self._float(out), images.dtype)

    def _pad_to_aspect_ratio(self, x):
        from tapeflow.ops import array_ops
        h, w = host_array(x).shape[1:3]
        # Keras pads both sides by half the shortfall, rounded down: an odd shortfall leaves the result
        # one row (column) short of the exact aspect ratio.
        top = int((max(h, int(w * self.height / self.width)) - h) / 2)
        left = int((max(w, int(h * self.width / self.height)) - w) / 2)
        if top == left == 0:
            return x
        return array_ops.pad(x, [[0, 0], [top, top], [left, left], [0, 0]], constant_values=self.fill_value)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis, w_axis = self._spatial_axes(len(shape))
        shape[h_axis], shape[w_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"height": self.height, "width": self.width, "interpolation": self.interpolation,
                       "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                       "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                       "fill_value": self.fill_value, "antialias": self.antialias})
        return config

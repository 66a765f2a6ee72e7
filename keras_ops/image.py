"""``keras.ops.image``: grayscale and HSV conversion, resize, crop and pad, on tapeflow.image.

``resize`` matches Keras 3 (jax backend) for "bilinear" and "nearest" (antialias=False); "bicubic" and "area"
are TensorFlow's (Keras's TensorFlow backend), which differ from the jax backend by up to ~1e-3 for bicubic.
"""
import numpy as np

from tapeflow import image as tf_image
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .config import image_data_format
from .dtypes import convert, to_float
from .symbolic import records_operations

_LUMA = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images, data_format=None):
    """The luma of RGB images, keeping a channel axis of size 1."""
    images = to_float(images)
    data_format = data_format or image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"rgb_to_grayscale: unknown data_format {data_format!r}")
    axis = images.ndim - 1 if data_format == "channels_last" else images.ndim - 3
    if images.ndim not in (3, 4) or images.shape[axis] != 3:
        raise ValueError(f"rgb_to_grayscale: expected a 3-D or 4-D tensor with 3 channels ({data_format}), "
                         f"received shape {tuple(images.shape)}")
    weights = np.array(_LUMA, images.dtype.name).reshape([3 if i == axis else 1 for i in range(images.ndim)])
    return R.reduce_sum(M.multiply(images, convert(weights)), axis, keepdims=True)


def _channels_last(images, data_format, what):
    """(images as a Tensor in channels_last, a function restoring the caller's layout)."""
    data_format = data_format or image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{what}: unknown data_format {data_format!r}")
    images = convert(images)
    if images.ndim not in (3, 4):
        raise ValueError(f"{what}: expected a 3-D (unbatched) or 4-D (batched) image tensor, received shape "
                         f"{tuple(images.shape)}")
    if data_format == "channels_last":
        return images, lambda x: x
    to_last = [0, 2, 3, 1] if images.ndim == 4 else [1, 2, 0]
    to_first = [0, 3, 1, 2] if images.ndim == 4 else [2, 0, 1]
    return A.transpose(images, to_last), lambda x: A.transpose(x, to_first)


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """Resizes images to ``size`` = (height, width) with half-pixel centres."""
    if antialias or crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError("keras.ops.image.resize: antialias, crop_to_aspect_ratio and "
                                  "pad_to_aspect_ratio are not implemented in tapeflow")
    if interpolation not in ("bilinear", "nearest", "bicubic", "area"):
        raise ValueError(f"keras.ops.image.resize: interpolation must be one of 'bilinear', 'nearest', "
                         f"'bicubic', 'area' in tapeflow; received interpolation={interpolation!r}")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(f"keras.ops.image.resize: `size` must be a tuple of 2 integers (height, width); "
                         f"received size={size!r}")
    images, restore = _channels_last(images, data_format, "resize")
    dtype = images.dtype
    resized = tf_image.resize(images, size, method=interpolation)
    if resized.dtype != dtype and dtype.is_floating:
        resized = M.cast(resized, dtype)
    return restore(resized)


def rgb_to_hsv(images, data_format=None):
    """RGB images (floats in [0, 1]) as hue, saturation, value in [0, 1]."""
    images, restore = _channels_last(to_float(images), data_format, "rgb_to_hsv")
    return restore(tf_image.rgb_to_hsv(images))


def hsv_to_rgb(images, data_format=None):
    """Hue, saturation, value images (floats in [0, 1]) as RGB."""
    images, restore = _channels_last(to_float(images), data_format, "hsv_to_rgb")
    return restore(tf_image.hsv_to_rgb(images))


def _amounts(size, first, second, target, what, names):
    """The (before, after) crop or pad of an axis of ``size`` from two of before, after and the target size:
    a crop keeps ``size - before - after`` entries, a pad makes ``size + before + after``."""
    if sum(v is not None for v in (first, second, target)) != 2:
        raise ValueError(f"{what}: exactly two of {names} must be set; received "
                         f"{dict(zip(names, (first, second, target)))}")
    if target is not None:
        slack = size - target if what == "crop_images" else target - size
        if first is None:
            first = slack - second
        else:
            second = slack - first
    if first < 0 or second < 0:
        raise ValueError(f"{what}: the amounts {dict(zip(names, (first, second, target)))} do not fit an axis "
                         f"of size {size}")
    return int(first), int(second)


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None, right_cropping=None,
                target_height=None, target_width=None, data_format=None):
    """Crops images to a box given by two of (top, bottom, target_height) and two of (left, right, width)."""
    images, restore = _channels_last(images, data_format, "crop_images")
    height, width = images.shape[-3], images.shape[-2]
    top, bottom = _amounts(height, top_cropping, bottom_cropping, target_height, "crop_images",
                       ("top_cropping", "bottom_cropping", "target_height"))
    left, right = _amounts(width, left_cropping, right_cropping, target_width, "crop_images",
                       ("left_cropping", "right_cropping", "target_width"))
    return restore(tf_image.crop_to_bounding_box(images, top, left, height - top - bottom, width - left - right))


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
               target_height=None, target_width=None, data_format=None):
    """Pads images with zeros, the box given by two of (top, bottom, target_height) and two of (left, right,
    target_width)."""
    images, restore = _channels_last(images, data_format, "pad_images")
    height, width = images.shape[-3], images.shape[-2]
    top, bottom = _amounts(height, top_padding, bottom_padding, target_height, "pad_images",
                       ("top_padding", "bottom_padding", "target_height"))
    left, right = _amounts(width, left_padding, right_padding, target_width, "pad_images",
                       ("left_padding", "right_padding", "target_width"))
    return restore(tf_image.pad_to_bounding_box(images, top, left, height + top + bottom, width + left + right))


records_operations(globals(), "keras.src.ops.image")   # called on KerasTensors: graph operations

"""Pixel-value adjustments and conversions: brightness, contrast, gamma, grayscale, dtypes, standardisation."""
import numpy as np

from ..framework import dtypes
from ..ops import array_ops, image_ops, math_ops, reduction_ops
from ..ops.common import to_tensor
from ._images import image_tensor


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """TensorFlow's image dtype conversion: floats in [0, 1], integers over their full range.

    int -> float multiplies by 1 / max; float -> int multiplies by (max + 0.5) and truncates;
    int -> int shifts by an integer factor; float -> float casts.
    """
    x = to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    src = x.dtype
    if not (src.is_floating or src.is_integer) or not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: both dtypes must be numeric, got {src.name} and {dtype.name}")
    if src == dtype:
        return x
    cast = math_ops.saturate_cast if saturate else math_ops.cast
    if src.is_integer and dtype.is_integer:
        scale_in, scale_out = src.max, dtype.max
        if scale_in > scale_out:
            return cast(math_ops.floordiv(x, (scale_in + 1) // (scale_out + 1)), dtype)
        return math_ops.multiply(cast(x, dtype), (scale_out + 1) // (scale_in + 1))
    if src.is_floating and dtype.is_floating:
        return math_ops.cast(x, dtype)
    if src.is_integer:
        return math_ops.multiply(math_ops.cast(x, dtype), 1.0 / src.max)
    return cast(math_ops.multiply(x, dtype.max + 0.5), dtype)


def _as_float(x):
    """float16/float32 images as they are, anything else converted to float32 (TensorFlow's rule)."""
    if x.dtype in (dtypes.float16, dtypes.float32):
        return x
    return convert_image_dtype(x, dtypes.float32)


def adjust_brightness(image, delta):
    x = to_tensor(image)
    flt = _as_float(x)
    adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype))
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Per image and channel, ``(x - mean) * contrast_factor + mean``. Op AdjustContrastv2, which
    (as in TensorFlow) has no gradient."""
    x = image_tensor(images, "images", ranks="3+")
    flt = _as_float(x)
    flt32 = math_ops.cast(flt, dtypes.float32)
    adjusted = image_ops.adjust_contrast(flt32, math_ops.cast(contrast_factor, dtypes.float32))
    return convert_image_dtype(math_ops.cast(adjusted, flt.dtype), x.dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * image ** gamma`` on the image as float."""
    x = to_tensor(image)
    flt = _as_float(x)
    g = to_tensor(gamma)
    if np.any(g._value < 0):
        raise ValueError("Gamma should be a non-negative real number.")
    adjusted = math_ops.multiply(math_ops.cast(gain, flt.dtype), math_ops.pow(flt, math_ops.cast(g, flt.dtype)))
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


_RGB_WEIGHTS = [0.2989, 0.5870, 0.1140]


def rgb_to_grayscale(images, name=None):
    x = to_tensor(images)
    if x._value.ndim < 1 or x._value.shape[-1] != 3:
        raise ValueError(f"rgb_to_grayscale: the last dimension must be 3 (RGB), got shape {x.shape}")
    flt = convert_image_dtype(x, dtypes.float32)
    gray = math_ops.tensordot(flt, to_tensor(np.array(_RGB_WEIGHTS, np.float32)), [[-1], [-1]])
    return convert_image_dtype(array_ops.expand_dims(gray, -1), x.dtype)


def grayscale_to_rgb(images, name=None):
    x = to_tensor(images)
    if x._value.ndim < 2 or x._value.shape[-1] != 1:
        raise ValueError(f"grayscale_to_rgb: the last dimension must be 1, got shape {x.shape}")
    return array_ops.tile(x, [1] * (x._value.ndim - 1) + [3])


def per_image_standardization(image):
    """Each image as ``(x - mean) / max(stddev, 1 / sqrt(N))``, N its number of elements; float32."""
    x = image_tensor(image, ranks="3+")
    if x.dtype != dtypes.float32:
        x = math_ops.cast(x, dtypes.float32)
    axes = [-1, -2, -3]
    n = int(np.prod(x._value.shape[-3:]))
    mean = reduction_ops.reduce_mean(x, axes, keepdims=True)
    stddev = reduction_ops.reduce_std(x, axes, keepdims=True)
    adjusted = math_ops.maximum(stddev, np.float32(1.0) / np.sqrt(np.float32(n)))
    return math_ops.divide(math_ops.subtract(x, mean), adjusted)


# ------------------------------------------------------------------- HSV ---
def _float_op(op_type, image, *scalars):
    """An RGB colour op on the image as float32, converted back to the image's dtype."""
    x = to_tensor(image)
    flt = math_ops.cast(_as_float(x), dtypes.float32)
    out = image_ops.colour_op(op_type, flt, *(to_tensor(v, dtype=dtypes.float32) for v in scalars))
    return convert_image_dtype(math_ops.cast(out, _as_float(x).dtype), x.dtype, saturate=True)


def rgb_to_hsv(images, name=None):
    x = to_tensor(images)
    if not x.dtype.is_floating:
        raise TypeError(f"rgb_to_hsv: images must be float16, float32 or float64, got {x.dtype.name}")
    return math_ops.cast(image_ops.colour_op("RGBToHSV", math_ops.cast(x, dtypes.float32)), x.dtype)


def hsv_to_rgb(images, name=None):
    x = to_tensor(images)
    if not x.dtype.is_floating:
        raise TypeError(f"hsv_to_rgb: images must be float16, float32 or float64, got {x.dtype.name}")
    return math_ops.cast(image_ops.colour_op("HSVToRGB", math_ops.cast(x, dtypes.float32)), x.dtype)


def adjust_hue(image, delta, name=None):
    """Rotates the hue by ``delta`` (a fraction of the colour wheel, in [-1, 1])."""
    if not -1 <= float(to_tensor(delta)._value) <= 1:
        raise ValueError(f"adjust_hue: delta must be in the interval [-1, 1], got {delta}")
    return _float_op("AdjustHue", image, delta)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the saturation by ``saturation_factor`` (clipped to [0, 1])."""
    return _float_op("AdjustSaturation", image, saturation_factor)

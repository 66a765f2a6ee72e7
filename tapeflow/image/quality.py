"""Image quality measures and image gradients: psnr, ssim, total_variation, image_gradients."""
import numpy as np

from .. import nn
from ..framework import dtypes
from ..ops import array_ops, math_ops, nn_ops, reduction_ops
from ..ops.common import to_tensor
from ._images import image_tensor
from .color import convert_image_dtype


def _float_pair(a, b, max_val):
    a, b = to_tensor(a), to_tensor(b)
    if a.dtype != b.dtype:
        raise TypeError(f"the two images must have the same dtype, got {a.dtype.name} and {b.dtype.name}")
    if a._value.shape[-3:] != b._value.shape[-3:]:
        raise ValueError(f"the two images must have the same shape, got {a.shape} and {b.shape}")
    max_val = convert_image_dtype(math_ops.cast(max_val, a.dtype), dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), max_val


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image: 20 log10(max_val) - 10 log10(mean squared error)."""
    a, b, max_val = _float_pair(a, b, max_val)
    mse = reduction_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
    return math_ops.subtract(math_ops.divide(math_ops.multiply(math_ops.log(max_val), 20.0), float(np.log(10.0))),
                             math_ops.multiply(math_ops.log(mse), np.float32(10 / np.log(10))))


def _gaussian_window(size, sigma):
    """size x size normalised Gaussian weights (a softmax of -d^2 / (2 sigma^2)), as (size, size, 1, 1)."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(1, -1)
    return nn_ops.softmax(to_tensor(g)), size


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity per image (mean over the valid windows and the channels), with TensorFlow's
    Gaussian window, constants c1 = (k1 max_val)^2 and c2 = (k2 max_val)^2."""
    x, y, max_val = _float_pair(img1, img2, max_val)
    height, width, channels = x._value.shape[-3:]
    if height < filter_size or width < filter_size:
        raise ValueError(f"ssim: the images ({height}x{width}) must be at least filter_size={filter_size} "
                         f"on each side")
    window, size = _gaussian_window(filter_size, filter_sigma)
    kernel = array_ops.tile(array_ops.reshape(window, [size, size, 1, 1]), [1, 1, channels, 1])
    lead = x._value.shape[:-3]

    def reducer(t):
        flat = array_ops.reshape(t, [-1, height, width, channels])
        out = nn.depthwise_conv2d(flat, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(out, list(lead) + list(out._value.shape[1:]))

    c1 = math_ops.square(math_ops.multiply(max_val, k1))
    c2 = math_ops.square(math_ops.multiply(max_val, k2))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = math_ops.multiply(math_ops.multiply(mean0, mean1), 2.0)
    den0 = math_ops.add(math_ops.square(mean0), math_ops.square(mean1))
    luminance = math_ops.divide(math_ops.add(num0, c1), math_ops.add(den0, c1))
    num1 = math_ops.multiply(reducer(math_ops.multiply(x, y)), 2.0)
    den1 = reducer(math_ops.add(math_ops.square(x), math_ops.square(y)))
    cs = math_ops.divide(math_ops.add(math_ops.subtract(num1, num0), c2),
                         math_ops.add(math_ops.subtract(den1, den0), c2))
    index_map = math_ops.multiply(luminance, cs)
    if return_index_map:
        return reduction_ops.reduce_mean(index_map, [-1])
    return reduction_ops.reduce_mean(reduction_ops.reduce_mean(index_map, [-3, -2]), [-1])


def image_gradients(image):
    """(dy, dx): forward differences along height and width, zero in the last row (column)."""
    x = image_tensor(image, ranks=None)
    if x._value.ndim != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {x.shape}.")
    dy = math_ops.subtract(x[:, 1:], x[:, :-1])
    dx = math_ops.subtract(x[:, :, 1:], x[:, :, :-1])
    dy = array_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = array_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels, per image."""
    x = image_tensor(images)
    axes = [-3, -2, -1]
    dy = math_ops.abs(math_ops.subtract(x[..., 1:, :, :], x[..., :-1, :, :]))
    dx = math_ops.abs(math_ops.subtract(x[..., :, 1:, :], x[..., :, :-1, :]))
    return math_ops.add(reduction_ops.reduce_sum(dy, axes), reduction_ops.reduce_sum(dx, axes))

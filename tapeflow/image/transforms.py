"""Geometric transforms of image batches: the 8-parameter output-to-input maps of translations,
rotations and zooms (tf.raw_ops.ImageProjectiveTransformV3's convention), built with ops from
per-image parameters, and ``transform`` that applies them."""
import math

from ..ops import array_ops, image_ops, math_ops


def _zeros_like(v):
    return math_ops.multiply(v, 0.0)


def _ones_like(v):
    return math_ops.add(_zeros_like(v), 1.0)


def _stack(rows):
    return array_ops.stack(rows, axis=1)


def translation_transforms(dx, dy):
    """Output pixel (x, y) reads input (x - dx, y - dy); dx, dy (N,) in pixels."""
    zero, one = _zeros_like(dx), _ones_like(dx)
    return _stack([one, zero, math_ops.negative(dx), zero, one, math_ops.negative(dy), zero, zero])


def rotation_transforms(angles, height, width):
    """Rotation by ``angles`` (N,) radians, counter-clockwise, about the image centre."""
    cos, sin = math_ops.cos(angles), math_ops.sin(angles)
    w1, h1 = float(width - 1), float(height - 1)
    x_offset = math_ops.divide(math_ops.subtract(w1, math_ops.subtract(math_ops.multiply(cos, w1),
                                                                       math_ops.multiply(sin, h1))), 2.0)
    y_offset = math_ops.divide(math_ops.subtract(h1, math_ops.add(math_ops.multiply(sin, w1),
                                                                  math_ops.multiply(cos, h1))), 2.0)
    zero = _zeros_like(angles)
    return _stack([cos, math_ops.negative(sin), x_offset, sin, cos, y_offset, zero, zero])


def zoom_transforms(zx, zy, height, width):
    """Scaling of the sampling grid by (zx, zy) (N,) about the image centre: above 1 zooms out."""
    x_offset = math_ops.multiply(math_ops.subtract(1.0, zx), (width - 1) / 2.0)
    y_offset = math_ops.multiply(math_ops.subtract(1.0, zy), (height - 1) / 2.0)
    zero = _zeros_like(zx)
    return _stack([zx, zero, x_offset, zero, zy, y_offset, zero, zero])


def transform(images, transforms, interpolation="bilinear", fill_mode="constant", fill_value=0.0):
    """Output pixel (x, y) of image i blends the input around transforms[i] applied to (x, y)."""
    return image_ops.projective_transform(images, transforms, interpolation, fill_mode, fill_value)


DEGREES = 180.0 / math.pi

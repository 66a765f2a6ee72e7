"""tf.image.resize and the resizes that keep the aspect ratio."""
import numpy as np

from ..framework import dtypes
from ..ops import image_ops, math_ops
from ._images import as_batch, from_batch, image_tensor, spatial_size, to_int
from .cropping import pad_to_bounding_box


class ResizeMethod:
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_SUPPORTED = ("bilinear", "nearest", "bicubic", "area")


def _method(method):
    name = str(method).lower()
    if name == "nearest_neighbor":
        name = "nearest"
    if name in _SUPPORTED:
        return name
    if name in ("lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        raise NotImplementedError(f"resize: method {name!r} is not implemented in tapeflow; use one of "
                                  f"{list(_SUPPORTED)}")
    raise ValueError(f"Resize method is not implemented: [{method}]")


def _size(size):
    if hasattr(size, "_value"):
        values = size._value.tolist()
    elif isinstance(size, (list, tuple)):
        values = list(size)
    else:
        values = np.asarray(size).tolist()
    if not isinstance(values, list) or len(values) != 2:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    h, w = (to_int(v, "size") for v in values)
    if h <= 0 or w <= 0:
        raise ValueError(f"resize: 'size' must be positive, got [{h}, {w}]")
    return h, w


def _aspect_preserving_size(height, width, size):
    """TensorFlow's rule: the largest size within ``size`` with the image's aspect ratio, in float32."""
    f32 = np.float32
    scale = min(f32(size[0]) / f32(height), f32(size[1]) / f32(width))
    return int(np.round(scale * f32(height))), int(np.round(scale * f32(width)))


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes images (H, W, C) or (N, H, W, C) with half-pixel centres (TensorFlow 2).

    Every method but nearest returns float32; nearest keeps the input dtype.
    """
    x = image_tensor(images, "images")
    method = _method(method)
    size = _size(size)
    if antialias and method != "nearest":
        raise NotImplementedError("resize: antialias=True is not implemented in tapeflow; pass antialias=False")
    if preserve_aspect_ratio:
        size = _aspect_preserving_size(*spatial_size(x), size)
    if method != "nearest" and x.dtype != dtypes.float32:
        x = math_ops.cast(x, dtypes.float32)
    batch, single = as_batch(x)
    return from_batch(image_ops.resize_image(batch, size, method), single)


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """Resizes to fit within the target keeping the aspect ratio, then pads with zeros to the target."""
    x = image_tensor(image, "image")
    th, tw = to_int(target_height, "target_height"), to_int(target_width, "target_width")
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0")
    f32 = np.float32
    height, width = (f32(v) for v in spatial_size(x))
    ratio = max(width / f32(tw), height / f32(th))
    new_h, new_w = height / ratio, width / ratio
    pad_h = max(0, int(np.floor((f32(th) - new_h) / f32(2))))
    pad_w = max(0, int(np.floor((f32(tw) - new_w) / f32(2))))
    resized = resize(x, [int(np.floor(new_h)), int(np.floor(new_w))], method=method, antialias=antialias)
    return pad_to_bounding_box(resized, pad_h, pad_w, th, tw)

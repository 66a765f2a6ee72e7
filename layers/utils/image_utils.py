"""keras.utils image helpers: PIL images <-> numpy arrays, and reading/writing image files.

PIL (the ``pillow`` package, in tapeflow's ``images`` extra) is imported on first use, so ``import tapeflow``
neither needs nor pays for it.
"""
import os
import warnings

import numpy as np

from tapeflow.framework.tensor import host_array

from .. import backend

_RESAMPLING = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _pil_image(caller):
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(f"Could not import PIL.Image. The use of `{caller}` requires PIL "
                          "(`pip install pillow`, or tapeflow's `images` extra).") from error
    return Image


def _data_format(data_format):
    data_format = backend.image_data_format() if data_format is None else data_format
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid data_format: {data_format!r}. Expected 'channels_first' or 'channels_last'.")
    return data_format


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image (or anything numpy can read) as a (height, width, channels) array of ``dtype`` (floatx by
    default); a grayscale image gets a channel axis of size 1. channels_first puts channels first."""
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=backend.floatx() if dtype is None else dtype)
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x[np.newaxis] if data_format == "channels_first" else x[..., np.newaxis]
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A rank-3 image array as a PIL image: RGB, RGBA or grayscale ("L", or 32-bit "I" when values exceed 255).
    With ``scale``, values are first shifted to start at 0 and stretched to end at 255."""
    Image = _pil_image("array_to_img")
    data_format = _data_format(data_format)
    x = np.asarray(host_array(x), dtype=backend.floatx() if dtype is None else dtype)
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x = x / peak
        x = x * 255
    channels = x.shape[2]
    if channels == 4:
        return Image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return Image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes an image array to ``path`` (the format from ``file_format`` or the file's extension)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if file_format is None and isinstance(path, (str, os.PathLike)):
        file_format = os.path.splitext(os.fspath(path))[1][1:].lower() or None
    if file_format == "jpg":
        file_format = "jpeg"
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPG format does not support RGBA images, converting to RGB.")
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """Reads an image file (a path or a binary file object) into a PIL image in ``color_mode``
    ("grayscale", "rgb" or "rgba"), resized to ``target_size`` = (height, width) if given; with
    ``keep_aspect_ratio`` the largest centred box of the target's aspect ratio is resized."""
    Image = _pil_image("load_img")
    if color_mode not in ("grayscale", "rgb", "rgba"):
        raise ValueError(f'color_mode must be "grayscale", "rgb", or "rgba". Received: color_mode={color_mode!r}')
    if target_size is not None and interpolation not in _RESAMPLING:
        raise ValueError(f"Invalid interpolation method {interpolation!r} specified. Supported methods are "
                         f"{', '.join(_RESAMPLING)}")
    if isinstance(path, (str, os.PathLike)):
        with open(path, "rb") as f:
            img = Image.open(f)
            img.load()
    elif hasattr(path, "read"):
        img = Image.open(path)
        img.load()
    else:
        raise TypeError(f"path should be a path-like or a binary file object. Received: {type(path).__name__}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode == "rgba":
        if img.mode != "RGBA":
            img = img.convert("RGBA")
    elif img.mode != "RGB":
        img = img.convert("RGB")
    if target_size is None:
        return img
    size = (int(target_size[1]), int(target_size[0]))       # PIL sizes are (width, height)
    if img.size == size:
        return img
    resample = getattr(Image.Resampling, interpolation.upper())
    box = None
    if keep_aspect_ratio:
        width, height = img.size
        crop_height = min(height, (width * size[1]) // size[0])
        crop_width = min(width, (height * size[0]) // size[1])
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        box = (left, top, left + crop_width, top + crop_height)
    return img.resize(size, resample, box=box)

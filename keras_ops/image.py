"""``keras.ops.image``: the cheap image ops (grayscale conversion)."""
import numpy as np

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


records_operations(globals(), "keras.src.ops.image")   # called on KerasTensors: graph operations

"""Shared argument handling of tf.image: one image (H, W, C) or a batch (N, H, W, C)."""
from ..ops import array_ops
from ..ops.common import to_tensor


def image_tensor(image, what="image", ranks=(3, 4)):
    """The argument as a Tensor of an accepted rank, with TensorFlow's ValueError otherwise."""
    x = to_tensor(image)
    ndim = x._value.ndim
    if ranks == (3, 4) and ndim not in ranks:
        raise ValueError(f"'{what}' (shape {x.shape}) must have either 3 or 4 dimensions.")
    if ranks == "3+" and ndim < 3:
        raise ValueError(f"'{what}' (shape {x.shape}) must be at least three-dimensional.")
    return x


def as_batch(x):
    """(images as 4-D, whether the input was one image)."""
    if x._value.ndim == 3:
        return array_ops.expand_dims(x, 0), True
    return x, False


def from_batch(x, single):
    return array_ops.squeeze(x, [0]) if single else x


def spatial_size(x):
    """(height, width) of a 3-D or 4-D image tensor."""
    return tuple(x._value.shape[-3:-1])


def to_int(value, what):
    if hasattr(value, "_value"):
        value = value._value
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an integer, got {value!r}") from None
    if number != value:
        raise TypeError(f"{what} must be an integer, got {value!r}")
    return number

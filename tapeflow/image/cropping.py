"""Crops, pads, flips and rotations of images: slices, pads and reverses, so gradients come free."""
from ..ops import array_ops, math_ops, random_ops
from ..framework import dtypes
from ._images import image_tensor, spatial_size, to_int


def _window(x, top, left, height, width):
    key = (Ellipsis, slice(top, top + height), slice(left, left + width), slice(None))
    return x[key]


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = image_tensor(image)
    oh, ow = to_int(offset_height, "offset_height"), to_int(offset_width, "offset_width")
    th, tw = to_int(target_height, "target_height"), to_int(target_width, "target_width")
    height, width = spatial_size(x)
    for ok, message in ((ow >= 0, "offset_width must be >= 0."), (oh >= 0, "offset_height must be >= 0."),
                        (tw > 0, "target_width must be > 0."), (th > 0, "target_height must be > 0."),
                        (width >= tw + ow, "width must be >= target + offset."),
                        (height >= th + oh, "height must be >= target + offset.")):
        if not ok:
            raise ValueError(message)
    return _window(x, oh, ow, th, tw)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = image_tensor(image)
    oh, ow = to_int(offset_height, "offset_height"), to_int(offset_width, "offset_width")
    th, tw = to_int(target_height, "target_height"), to_int(target_width, "target_width")
    height, width = spatial_size(x)
    after_h, after_w = th - oh - height, tw - ow - width
    for ok, message in ((oh >= 0, "offset_height must be >= 0"), (ow >= 0, "offset_width must be >= 0"),
                        (after_w >= 0, "width must be <= target - offset"),
                        (after_h >= 0, "height must be <= target - offset")):
        if not ok:
            raise ValueError(message)
    paddings = [[0, 0]] * (x._value.ndim - 3) + [[oh, after_h], [ow, after_w], [0, 0]]
    return array_ops.pad(x, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops or zero-pads each spatial axis to the target size."""
    x = image_tensor(image)
    th, tw = to_int(target_height, "target_height"), to_int(target_width, "target_width")
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    height, width = spatial_size(x)
    dh, dw = th - height, tw - width
    cropped = crop_to_bounding_box(x, max(-dh // 2, 0), max(-dw // 2, 0), min(th, height), min(tw, width))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of each spatial axis."""
    x = image_tensor(image)
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return x
    height, width = spatial_size(x)
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return _window(x, top, left, height - 2 * top, width - 2 * left)


# ------------------------------------------------------------------- flips ---
def _flip(image, axis):
    x = image_tensor(image, ranks="3+")
    return array_ops.reverse(x, [axis])


def flip_left_right(image):
    return _flip(image, -2)


def flip_up_down(image):
    return _flip(image, -3)


def _random_flip(image, axis, uniform):
    """Flips each image of a batch (or the one image) where its uniform draw is below 0.5."""
    x = image_tensor(image)
    shape = (x._value.shape[0], 1, 1, 1) if x._value.ndim == 4 else ()
    flip = math_ops.less(uniform(shape), 0.5)
    return array_ops.where(flip, array_ops.reverse(x, [axis]), x)


def random_flip_left_right(image, seed=None):
    return _random_flip(image, -2, lambda shape: random_ops.uniform(shape, seed=seed))


def random_flip_up_down(image, seed=None):
    return _random_flip(image, -3, lambda shape: random_ops.uniform(shape, seed=seed))


def stateless_random_flip_left_right(image, seed):
    from ..ops import stateless_random_ops
    return _random_flip(image, -2, lambda shape: stateless_random_ops.uniform_unit(shape, seed))


def stateless_random_flip_up_down(image, seed):
    from ..ops import stateless_random_ops
    return _random_flip(image, -3, lambda shape: stateless_random_ops.uniform_unit(shape, seed))


def transpose(image):
    """Swaps the height and width axes."""
    x = image_tensor(image)
    perm = [0, 2, 1, 3] if x._value.ndim == 4 else [1, 0, 2]
    return array_ops.transpose(x, perm)


def rot90(image, k=1):
    """Rotates counter-clockwise by k quarter turns."""
    x = image_tensor(image)
    k = to_int(k, "k") % 4
    if k == 1:
        return transpose(flip_left_right(x))
    if k == 2:
        return flip_up_down(flip_left_right(x))
    if k == 3:
        return flip_left_right(transpose(x))
    return x


# ------------------------------------------------------------ random crop ---
def _crop_at(x, size, offsets):
    """x[o0:o0+s0, o1:o1+s1, ...] with offsets a 1-D int tensor: gathers, so the offsets may be ops."""
    for axis, n in enumerate(size):
        if n == x._value.shape[axis]:
            continue
        index = math_ops.add(offsets[axis], array_ops.range_(n, dtype=offsets.dtype))
        x = array_ops.gather(x, index, axis=axis)
    return x


def _crop_args(value, size):
    x = image_tensor(value, ranks=None)
    size = [to_int(s, "size") for s in (size._value.tolist() if hasattr(size, "_value") else size)]
    if len(size) != x._value.ndim:
        raise ValueError(f"random_crop: size {size} must have one entry per dimension of value {x.shape}")
    if any(s < 0 or s > d for s, d in zip(size, x._value.shape)):
        raise ValueError(f"random_crop: Need value.shape >= size, got {list(x._value.shape)} and {size}")
    return x, size


def random_crop(value, size, seed=None, name=None):
    """A uniformly placed window of ``size`` (one entry per dimension of value)."""
    x, size = _crop_args(value, size)
    limits = [d - s + 1 for s, d in zip(size, x._value.shape)]
    draws = random_ops.uniform([len(size)], seed=seed)
    offsets = math_ops.cast(math_ops.floor(math_ops.multiply(draws, [float(l) for l in limits])), dtypes.int32)
    return _crop_at(x, size, math_ops.minimum(offsets, [l - 1 for l in limits]))


def stateless_random_crop(value, size, seed, name=None):
    from ..ops import stateless_random_ops
    x, size = _crop_args(value, size)
    limits = [d - s + 1 for s, d in zip(size, x._value.shape)]
    draws = stateless_random_ops.uniform_unit([len(size)], seed)
    offsets = math_ops.cast(math_ops.floor(math_ops.multiply(draws, [float(l) for l in limits])), dtypes.int32)
    return _crop_at(x, size, math_ops.minimum(offsets, [l - 1 for l in limits]))

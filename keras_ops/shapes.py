"""Shape ops of ``keras.ops``: reshape, transpose, joining, splitting, tiling, flipping, padding, rolling.

Arguments follow NumPy (``split`` takes split *indices* or a number of equal
sections, ``tile`` accepts fewer or more repeats than axes); joined tensors
are promoted to their common Keras dtype.
"""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops.common import axes_tuple, normalize_axis

from .dtypes import convert, result_type
from .symbolic import records_operations


def _shape(x):
    return tuple(x.shape)


def reshape(x, newshape):
    x = convert(x)
    newshape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
    return A.reshape(x, [-1 if d is None else int(d) for d in newshape])


def ravel(x):
    return A.reshape(convert(x), [-1])


def transpose(x, axes=None):
    x = convert(x)
    if axes is not None and len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {tuple(axes)} do not match a tensor of rank {x.ndim}")
    return A.transpose(x, axes)


def expand_dims(x, axis):
    """New size-1 axes at ``axis`` (an int or a tuple of positions in the result)."""
    x = convert(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    rank = x.ndim + len(axes)
    positions = sorted(normalize_axis(int(a), rank, op="expand_dims") for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {tuple(axes)}")
    shape, dims = [], iter(_shape(x))
    for i in range(rank):
        shape.append(1 if i in positions else next(dims))
    return A.reshape(x, shape)


def squeeze(x, axis=None):
    x = convert(x)
    if axis is None:
        return A.squeeze(x)
    for a in axes_tuple(axis, x.ndim, op="squeeze"):
        if x.shape[a] != 1:
            raise ValueError(f"Cannot squeeze axis {a} of size {x.shape[a]}: only axes of size 1 can be "
                             f"squeezed (shape {_shape(x)})")
    return A.squeeze(x, axis)


def _common(xs):
    xs = [convert(x) for x in xs]
    if not xs:
        raise ValueError("Expected a non-empty sequence of tensors")
    dtype = result_type(*[x.dtype.name for x in xs])
    return [M.cast(x, dtype) for x in xs]


def concatenate(xs, axis=0):
    xs = _common(xs)
    if axis is None:
        return A.concat([A.reshape(x, [-1]) for x in xs], 0)
    return A.concat(xs, axis)


def append(x1, x2, axis=None):
    return concatenate([x1, x2], axis)


def stack(x, axis=0):
    return A.stack(_common(x), axis)


def vstack(xs):
    xs = [x if x.ndim >= 2 else A.reshape(x, (1, -1)) for x in _common(xs)]
    return A.concat(xs, 0)


def hstack(xs):
    xs = _common(xs)
    return A.concat(xs, 0 if xs[0].ndim == 1 else 1)


def dstack(xs):
    xs = _common(xs)
    xs = [A.reshape(x, (1, -1, 1)) if x.ndim == 1 else (A.expand_dims(x, -1) if x.ndim == 2 else x) for x in xs]
    return A.concat(xs, 2)


def split(x, indices_or_sections, axis=0):
    """Equal sections (an int that divides the axis) or pieces cut at the given indices."""
    x = convert(x)
    axis = normalize_axis(int(axis), x.ndim, op="split")
    size = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or size % sections:
            raise ValueError(f"split: axis {axis} of size {size} cannot be split into {sections} equal sections")
        return A.split(x, sections, axis) if size else [x] * sections
    cuts = [min(max(int(i) if i >= 0 else int(i) + size, 0), size) for i in indices_or_sections]
    bounds = [0] + cuts + [size]
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        key = [slice(None)] * x.ndim
        key[axis] = slice(start, max(start, stop))
        pieces.append(x[tuple(key)])
    return pieces


def array_split(x, indices_or_sections, axis=0):
    """``split`` that also accepts a number of sections that does not divide the axis (the first pieces
    are one longer)."""
    x = convert(x)
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(x, indices_or_sections, axis)
    axis = normalize_axis(int(axis), x.ndim, op="array_split")
    sections = int(indices_or_sections)
    if sections <= 0:
        raise ValueError(f"array_split: the number of sections must be positive, received {sections}")
    base, extra = divmod(x.shape[axis], sections)
    cuts = np.cumsum([base + 1] * extra + [base] * (sections - extra))[:-1]
    return split(x, [int(c) for c in cuts], axis)


def hsplit(x, indices_or_sections):
    x = convert(x)
    return split(x, indices_or_sections, 0 if x.ndim == 1 else 1)


def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 0)


def tile(x, repeats):
    x = convert(x)
    repeats = [int(r) for r in ((repeats,) if isinstance(repeats, (int, np.integer)) else repeats)]
    if len(repeats) > x.ndim:
        x = A.reshape(x, (1,) * (len(repeats) - x.ndim) + _shape(x))
    repeats = [1] * (x.ndim - len(repeats)) + repeats
    return A.tile(x, repeats)


def repeat(x, repeats, axis=None):
    x = convert(x)
    counts = np.asarray(convert(repeats).numpy() if hasattr(repeats, "numpy") else repeats)
    if np.any(counts < 0):
        raise ValueError(f"repeat: repeats must be non-negative, received {counts.tolist()}")
    return A.repeat(x, counts, axis)


def flip(x, axis=None):
    x = convert(x)
    key = [slice(None)] * x.ndim
    for a in axes_tuple(axis, x.ndim, op="flip"):
        key[a] = slice(None, None, -1)
    return x[tuple(key)] if x.ndim else x


def rot90(array, k=1, axes=(0, 1)):
    x = convert(array)
    a0, a1 = (normalize_axis(int(a), x.ndim, op="rot90") for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must differ, received axes={tuple(axes)}")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, (a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return A.transpose(flip(x, a1), perm) if k == 1 else flip(A.transpose(x, perm), a1)


def broadcast_to(x, shape):
    x = convert(x)
    shape = tuple(int(d) for d in ((shape,) if isinstance(shape, (int, np.integer)) else shape))
    try:
        np.broadcast_shapes(_shape(x), shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast a tensor of shape {_shape(x)} to {shape}") from None
    return A.broadcast_to(x, shape)


def moveaxis(x, source, destination):
    x = convert(x)
    source = [normalize_axis(int(a), x.ndim, op="moveaxis") for a in np.atleast_1d(source)]
    destination = [normalize_axis(int(a), x.ndim, op="moveaxis") for a in np.atleast_1d(destination)]
    if len(source) != len(destination):
        raise ValueError(f"moveaxis: `source` and `destination` must have the same number of axes, received "
                         f"{source} and {destination}")
    order = [a for a in range(x.ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return A.transpose(x, order)


def swapaxes(x, axis1, axis2):
    x = convert(x)
    perm = list(range(x.ndim))
    a1, a2 = normalize_axis(int(axis1), x.ndim, op="swapaxes"), normalize_axis(int(axis2), x.ndim, op="swapaxes")
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return A.transpose(x, perm)


_PAD_MODES = ("constant", "reflect", "symmetric")


def pad(x, pad_width, mode="constant", constant_values=None):
    """NumPy's pad widths (an int, one (before, after) pair, or one pair per axis); modes constant,
    reflect and symmetric."""
    x = convert(x)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: `mode` must be one of {_PAD_MODES} with this backend, received: mode={mode!r}")
    if constant_values is not None and mode != "constant":
        raise ValueError(f"pad: `constant_values` can only be given with mode='constant', received mode={mode!r}")
    widths = np.asarray(pad_width, dtype=np.int64)
    if widths.ndim == 0 or widths.shape == (1,):
        widths = np.full((x.ndim, 2), int(widths.reshape(-1)[0]))
    elif widths.shape in ((2,), (1, 2)):
        widths = np.tile(widths.reshape(1, 2), (x.ndim, 1))
    if widths.shape != (x.ndim, 2):
        raise ValueError(f"pad: pad_width of shape {widths.shape} does not fit a tensor of rank {x.ndim}")
    value = 0 if constant_values is None else constant_values
    return A.pad(x, widths, mode.upper(), constant_values=convert(value, x.dtype.name))


def roll(x, shift, axis=None):
    x = convert(x)
    if axis is None:
        return A.reshape(roll(A.reshape(x, [-1]), shift, 0), _shape(x))
    shifts = np.broadcast_to(np.atleast_1d(shift), np.atleast_1d(axis).shape)
    for s, a in zip(shifts.tolist(), np.atleast_1d(axis).tolist()):
        a = normalize_axis(int(a), x.ndim, op="roll")
        n = x.shape[a]
        if n:
            x = A.gather(x, (np.arange(n) - int(s)) % n, axis=a)
    return x


def diff(a, n=1, axis=-1):
    x = convert(a)
    axis = normalize_axis(int(axis), x.ndim, op="diff")
    for _ in range(int(n)):
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        x = M.subtract(x[tuple(hi)], x[tuple(lo)])
    return x


def size(x):
    return A.size(convert(x))


def ndim(x):
    return convert(x).ndim


records_operations(globals(), "keras.src.ops.numpy")   # called on KerasTensors: graph operations

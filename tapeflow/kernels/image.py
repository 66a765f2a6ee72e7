"""Image resampling on plain numpy arrays: resize taps along one axis, and projective transforms.

Resizing is separable: along each spatial axis an output position reads a few input
positions (its *taps*) with weights. Positions and weights follow TensorFlow's kernels,
computed in float32 as they are:

* bilinear: ``in = (i + 0.5) * scale - 0.5`` with half-pixel centres (``i * scale``
  without), taps ``max(floor(in), 0)`` and ``min(ceil(in), n - 1)``, ``lerp = in - floor(in)``,
  blended as ``a + (b - a) * lerp``;
* nearest: ``floor((i + 0.5) * scale)`` (half-pixel), ``round(i * scale)`` (align corners),
  ``floor(i * scale)`` otherwise, clamped to the axis;
* bicubic: Keys' cubic from a 1024-entry table; with half-pixel centres A = -0.5 and taps
  outside the image get weight 0, the others renormalised to sum 1; without, A = -0.75 and
  the taps are clamped to the edge;
* area: each output cell averages the input cells its box ``[i * scale, (i + 1) * scale)``
  covers, weighted by the covered length.

``scale`` is ``in / out``, or ``(in - 1) / (out - 1)`` with align_corners.
"""
import numpy as np

_F = np.float32
_TABLE_SIZE = 1024


def _scale(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return _F(n_in - 1) / _F(n_out - 1)
    return _F(n_in) / _F(n_out)


def _positions(n_in, n_out, align_corners, half_pixel_centers):
    i = np.arange(n_out, dtype=_F)
    scale = _scale(n_in, n_out, align_corners)
    return (i + _F(0.5)) * scale - _F(0.5) if half_pixel_centers else i * scale


def linear_taps(n_in, n_out, align_corners, half_pixel_centers):
    """(lower, upper, lerp) per output position."""
    pos = _positions(n_in, n_out, align_corners, half_pixel_centers)
    floor = np.floor(pos)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), n_in - 1)
    return lower, upper, pos - floor


def nearest_taps(n_in, n_out, align_corners, half_pixel_centers):
    scale = _scale(n_in, n_out, align_corners)
    i = np.arange(n_out, dtype=_F)
    if half_pixel_centers:
        idx = np.floor((i + _F(0.5)) * scale)
    elif align_corners:
        idx = np.copysign(np.floor(np.abs(i * scale) + _F(0.5)), i * scale)   # roundf: half away from zero
    else:
        idx = np.floor(i * scale)
    return np.clip(idx.astype(np.int64), 0, n_in - 1)


def _cubic_table(a):
    x = (np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE).astype(_F)
    a = _F(a)
    near = ((a + _F(2)) * x - (a + _F(3))) * x * x + _F(1)
    x1 = x + _F(1)
    far = ((a * x1 - _F(5) * a) * x1 + _F(8) * a) * x1 - _F(4) * a
    return near, far


def cubic_taps(n_in, n_out, align_corners, half_pixel_centers):
    """(indices, weights), each (n_out, 4)."""
    pos = _positions(n_in, n_out, align_corners, half_pixel_centers)
    base = np.floor(pos).astype(np.int64)
    offset = np.rint((pos - np.floor(pos)) * _F(_TABLE_SIZE)).astype(np.int64)
    near, far = _cubic_table(-0.5 if half_pixel_centers else -0.75)
    raw = np.stack([base - 1, base, base + 1, base + 2], axis=1)
    weights = np.stack([far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset]], axis=1)
    idx = np.clip(raw, 0, n_in - 1)
    if half_pixel_centers:
        weights = np.where(idx == raw, weights, _F(0))
        total = weights.sum(axis=1, dtype=_F)
        renorm = np.abs(total) >= _F(1000) * np.finfo(_F).tiny
        weights = np.where(renorm[:, None], weights * (_F(1) / np.where(renorm, total, _F(1)))[:, None], weights)
    return idx, weights.astype(_F)


def area_taps(n_in, n_out):
    """(indices, weights, valid), each (n_out, K); weights are covered lengths (not yet divided by scale)."""
    scale = _scale(n_in, n_out, False)
    i = np.arange(n_out, dtype=_F)
    start, stop = i * scale, (i + _F(1)) * scale
    first = np.floor(start).astype(np.int64)
    count = np.ceil(stop).astype(np.int64) - first
    k = np.arange(int(count.max()))
    cell = first[:, None] + k[None, :]
    valid = k[None, :] < count[:, None]
    cellf = cell.astype(_F)
    weights = np.minimum(cellf + _F(1), stop[:, None]) - np.maximum(cellf, start[:, None])
    return np.clip(cell, 0, n_in - 1), np.where(valid, weights, _F(0)).astype(_F), valid, scale


# ------------------------------------------------------------ along one axis ---
def _shape_for(weights, axis, ndim):
    """Reshapes per-position weights (n,) to broadcast along ``axis`` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = weights.shape[0]
    return weights.reshape(shape)


def lerp_axis(x, lower, upper, lerp, axis):
    a, b = x.take(lower, axis), x.take(upper, axis)
    return a + (b - a) * _shape_for(lerp.astype(x.dtype), axis, x.ndim)


def taps_axis(x, idx, weights, axis, valid=None):
    out = None
    for k in range(idx.shape[1]):
        term = x.take(idx[:, k], axis) * _shape_for(weights[:, k].astype(x.dtype), axis, x.ndim)
        if valid is not None and not valid[:, k].all():
            term = np.where(_shape_for(valid[:, k], axis, x.ndim), term, 0)
        out = term if out is None else out + term
    return out


def scatter_axis(g, idx, n_in, axis):
    """The adjoint of ``g.take(idx, axis)``: sums each slice of g into position idx of a length-n_in axis."""
    axis = axis % g.ndim
    moved = np.moveaxis(g, axis, 0)
    out = np.zeros((n_in,) + moved.shape[1:], g.dtype)
    if idx.size and np.all(idx[1:] >= idx[:-1]):   # monotonic taps: contiguous segments
        targets, starts = np.unique(idx, return_index=True)
        out[targets] += np.add.reduceat(moved, starts, axis=0)
    else:
        np.add.at(out, idx, moved)
    return np.moveaxis(out, 0, axis)


def lerp_axis_adjoint(g, lower, upper, lerp, n_in, axis):
    l = _shape_for(lerp.astype(g.dtype), axis, g.ndim)
    return scatter_axis(g - g * l, lower, n_in, axis) + scatter_axis(g * l, upper, n_in, axis)


def taps_axis_adjoint(g, idx, weights, n_in, axis, valid=None):
    out = np.zeros(g.shape[:axis % g.ndim] + (n_in,) + g.shape[axis % g.ndim + 1:], g.dtype)
    for k in range(idx.shape[1]):
        if valid is not None and not valid[:, k].any():
            continue
        term = g * _shape_for(weights[:, k].astype(g.dtype), axis, g.ndim)
        if valid is not None and not valid[:, k].all():
            term = np.where(_shape_for(valid[:, k], axis, g.ndim), term, 0)
        out += scatter_axis(term, idx[:, k], n_in, axis)
    return out

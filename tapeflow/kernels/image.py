"""Image kernels on plain numpy arrays: resize taps along one axis, projective transforms, HSV colour.

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


def _scatter_taps_loop(g, idx, weights, out):
    """out[a, idx[i, k], b] += g[a, i, b] * weights[i, k] for every a, i, k, b (numba, compiled on first use)."""
    for a in range(g.shape[0]):
        for i in range(g.shape[1]):
            for k in range(idx.shape[1]):
                j = idx[i, k]
                w = weights[i, k]
                for b in range(g.shape[2]):
                    out[a, j, b] += g[a, i, b] * w


_SCATTER = []


def scatter_taps(g, idx, weights, n_in, axis):
    """The adjoint of blending taps along ``axis``: slice i of g adds weights[i, k] times itself to
    input position idx[i, k], for every tap k (as TensorFlow's gradient kernels do, zero weights included)."""
    if not _SCATTER:
        from numba import njit
        _SCATTER.append(njit(cache=True, nogil=True)(_scatter_taps_loop))
    axis = axis % g.ndim
    outer, inner = int(np.prod(g.shape[:axis])), int(np.prod(g.shape[axis + 1:]))
    out = np.zeros((outer, n_in, inner), g.dtype)
    _SCATTER[0](np.ascontiguousarray(g).reshape(outer, g.shape[axis], inner), np.ascontiguousarray(idx),
                np.ascontiguousarray(weights, dtype=g.dtype), out)
    return out.reshape(g.shape[:axis] + (n_in,) + g.shape[axis + 1:])


def lerp_axis_adjoint(g, lower, upper, lerp, n_in, axis):
    lerp = lerp.astype(g.dtype)
    return scatter_taps(g, np.stack([lower, upper], axis=1), np.stack([1 - lerp, lerp], axis=1), n_in, axis)


def taps_axis_adjoint(g, idx, weights, n_in, axis):
    return scatter_taps(g, idx, weights, n_in, axis)


def nearest_axis_adjoint(g, idx, n_in, axis):
    return scatter_taps(g, idx[:, None], np.ones((len(idx), 1), g.dtype), n_in, axis)


# ------------------------------------------------------- projective transforms ---
def _trunc_int(v):
    return np.trunc(v).astype(np.int64).astype(_F)


def map_coordinates(coord, n, fill_mode):
    """Where an output pixel reads along an axis of length n, after the fill mode folds the coordinate
    into the image; "constant" leaves it outside (read as the fill value)."""
    if fill_mode == "constant":
        return coord
    if n <= 1:
        return np.zeros_like(coord)
    n_f = _F(n)
    c = coord.copy()
    if fill_mode == "reflect":      # d c b a | a b c d | d c b a
        low, high = c < 0, c > n_f - 1
        two = _F(2 * n)
        lo = two * _trunc_int(-c[low] / two) + c[low]
        c[low] = np.where(lo < -n_f, lo + two, -lo - _F(1))
        hi = c[high] - two * _trunc_int(c[high] / two)
        c[high] = np.where(hi >= n_f, two - hi - _F(1), hi)
    elif fill_mode == "mirror":     # d c b | a b c d | c b a
        period = _F(2 * (n - 1))
        c = np.abs(c)
        c = c - period * np.floor(c / period)
        c = np.where(c > n_f - 1, period - c, c)
    elif fill_mode == "wrap":       # a b c d | a b c d | a b c d
        low, high = c < 0, c > n_f - 1
        span = _F(n - 1)
        c[low] = c[low] + n_f * (_trunc_int(-c[low] / span) + _F(1))
        c[high] = c[high] - n_f * _trunc_int(c[high] / span)
    return np.clip(c, _F(0), n_f - _F(1))


def transform_taps(transforms, height, width, fill_mode, interpolation):
    """For 8-parameter transforms (B, 8), mapping output (x, y) to input ((a0 x + a1 y + a2) / k,
    (a3 x + a4 y + a5) / k) with k = a6 x + a7 y + 1: the pixels each output pixel reads, (rows, cols)
    of shape (B, H, W, T), and the blend weights (B, H, W, T). T = 1 (nearest) or 4 (bilinear:
    (y0, x0), (y0, x1), (y1, x0), (y1, x1)). A tap outside the image has row -1: it reads the fill
    value, as does every tap of a pixel whose k is 0."""
    t = transforms.astype(_F)[:, :, None, None]
    y, x = np.meshgrid(np.arange(height, dtype=_F), np.arange(width, dtype=_F), indexing="ij")
    k = t[:, 6] * x + t[:, 7] * y + _F(1)
    degenerate = k == 0
    safe = np.where(degenerate, _F(1), k)
    in_x = map_coordinates((t[:, 0] * x + t[:, 1] * y + t[:, 2]) / safe, width, fill_mode)
    in_y = map_coordinates((t[:, 3] * x + t[:, 4] * y + t[:, 5]) / safe, height, fill_mode)
    if interpolation == "nearest":     # rounding half away from zero
        rows = np.copysign(np.floor(np.abs(in_y) + _F(0.5)), in_y)[..., None]
        cols = np.copysign(np.floor(np.abs(in_x) + _F(0.5)), in_x)[..., None]
        weights = np.ones_like(rows)
    else:
        y0, x0 = np.floor(in_y), np.floor(in_x)
        dy, dx = in_y - y0, in_x - x0
        rows = np.stack([y0, y0, y0 + 1, y0 + 1], axis=-1)
        cols = np.stack([x0, x0 + 1, x0, x0 + 1], axis=-1)
        weights = np.stack([(_F(1) - dy) * (_F(1) - dx), (_F(1) - dy) * dx, dy * (_F(1) - dx), dy * dx], axis=-1)
    inside = (rows >= 0) & (rows <= height - 1) & (cols >= 0) & (cols <= width - 1) & ~degenerate[..., None]
    return np.where(inside, rows, -1).astype(np.int64), np.where(inside, cols, 0).astype(np.int64), weights


def project(images, transforms, fill_value, fill_mode, interpolation):
    """The projective transform of images (B, H, W, C): each output pixel blends its taps' pixels."""
    b, h, w, c = images.shape
    rows, cols, weights = transform_taps(np.broadcast_to(transforms, (b, 8)), h, w, fill_mode, interpolation)
    batch = np.arange(b)[:, None, None, None]
    fill = images.dtype.type(fill_value)
    reads = np.where((rows >= 0)[..., None], images[batch, np.maximum(rows, 0), cols], fill)   # (B, H, W, T, C)
    weights = weights.astype(images.dtype)[..., None]
    out = reads[..., 0, :] * weights[..., 0, :]
    for tap in range(1, rows.shape[-1]):
        out = out + reads[..., tap, :] * weights[..., tap, :]
    return out


def project_adjoint(grads, transforms, fill_mode, interpolation):
    """The adjoint of ``project`` in the images (with the fill value held at 0)."""
    b, h, w, c = grads.shape
    rows, cols, weights = transform_taps(np.broadcast_to(transforms, (b, 8)), h, w, fill_mode, interpolation)
    batch = np.broadcast_to(np.arange(b)[:, None, None, None], rows.shape)
    keep = rows >= 0
    flat = ((batch * h + rows) * w + cols)[keep]
    contributions = (grads[:, :, :, None, :] * weights.astype(grads.dtype)[..., None])[keep]
    out = np.zeros((b * h * w, c), grads.dtype)
    np.add.at(out, flat, contributions)
    return out.reshape(b, h, w, c)


# ------------------------------------------------------------------ HSV colour ---
def rgb_to_hsv(rgb):
    """(..., 3) RGB in [0, 1] to HSV, in float32 as TensorFlow's kernel computes it."""
    rgb = rgb.astype(_F, copy=False)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    spread = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, spread / v, _F(0))
        norm = _F(1) / (_F(6) * spread)
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + _F(2.0 / 6.0), norm * (r - g) + _F(4.0 / 6.0)))
    h = np.where(spread > 0, h, _F(0))
    h = np.where(h < 0, h + _F(1), h)
    return np.stack([h, s, v], axis=-1).astype(_F)


def hsv_to_rgb(hsv):
    hsv = hsv.astype(_F, copy=False)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    c = s * v
    m = v - c
    dh = h * _F(6)
    category = np.trunc(dh).astype(np.int64)
    fmodu = dh - _F(2) * np.floor(dh / _F(2))               # dh folded into [0, 2)
    fmodu = np.where(fmodu <= 0, fmodu + _F(2), fmodu)
    x = c * (_F(1) - np.abs(fmodu - _F(1)))
    zero = np.zeros_like(c)
    choices = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    out = [np.select([category == k for k in range(6)], [choice[i] for choice in choices], zero) + m
           for i in range(3)]
    return np.stack(out, axis=-1).astype(_F)


def adjust_hue(rgb, delta):
    hsv = rgb_to_hsv(rgb)
    h = np.fmod(hsv[..., 0] + _F(delta), _F(1))
    hsv[..., 0] = np.where(h < 0, h + _F(1), h)
    return hsv_to_rgb(hsv)


def adjust_saturation(rgb, scale):
    hsv = rgb_to_hsv(rgb)
    hsv[..., 1] = np.clip(hsv[..., 1] * _F(scale), _F(0), _F(1))
    return hsv_to_rgb(hsv)

"""Max and average pooling kernels: channels-last, one to three spatial dimensions.

    x (N, *S, C) -> y (N, *OS, C),  OS[i] = (S[i] + pads[i] - ksize[i]) // strides[i] + 1

``pads`` holds one (before, after) pair per spatial dimension. Padded cells
take no part: a max ignores them and an average divides by the number of real
cells in its window (TensorFlow's rule). A max-pooling window made of padding
only (explicit padding as large as the window) gives -inf and no gradient.

The numba loops work on five-dimensional (N, D, H, W, C) arrays; fewer spatial
dimensions are padded with size-1 ones. Max pooling picks, per window and
channel, the first largest value in row-major window order; a NaN counts as
larger than any number (the first NaN wins), so a NaN in a window reaches the
output and its gradient, as with numpy's max. The gradient kernels take a
stack of cotangents (L, N, ...) and find each window's maximum once for all L.
float16 is computed in float32.
"""
import numpy as np
from numba import njit


def output_size(size, window, stride, before, after):
    return (size + before + after - window) // stride + 1


def _as_5d(a, lead=0):
    """``a`` (lead axes, N, *S, C) as (lead axes, N, D, H, W, C): size-1 spatial axes in front."""
    r = a.ndim - lead - 2
    return a.reshape(a.shape[:lead + 1] + (1,) * (3 - r) + a.shape[lead + 1:])


def _geometry(ksize, strides, pads):
    r = len(ksize)
    ones, zeros = (1,) * (3 - r), (0,) * (3 - r)
    return ones + tuple(ksize) + ones + tuple(strides) + zeros + tuple(b for b, _ in pads)


def _out_spatial(in_spatial, ksize, strides, pads):
    return tuple(output_size(s, k, st, b, a) for s, k, st, (b, a) in zip(in_spatial, ksize, strides, pads))


def _float(a):
    a = np.ascontiguousarray(a)
    return a.astype(np.float32) if a.dtype == np.float16 else a


def max_pool(x, ksize, strides, pads):
    xf = _float(x)
    n, c = x.shape[0], x.shape[-1]
    y = np.empty((n,) + _out_spatial(x.shape[1:-1], ksize, strides, pads) + (c,), xf.dtype)
    if y.size:
        _max_pool(_as_5d(xf), _geometry(ksize, strides, pads), _as_5d(y))
    return y.astype(x.dtype, copy=False)


def max_pool_grad(x, g, ksize, strides, pads):
    """Routes each cotangent in ``g`` ([stack...,] N, *OS, C) to its window's maximum in ``x``."""
    lead = g.shape[:g.ndim - x.ndim]
    xf, gf = _float(x), _float(g)
    dx = np.zeros(lead + x.shape, gf.dtype)
    if g.size:
        rows = int(np.prod(lead))
        scratch = np.empty(x.shape[-1], xf.dtype), np.empty(x.shape[-1], np.int64)
        _max_pool_grad(_as_5d(xf), _geometry(ksize, strides, pads),
                       _as_5d(gf.reshape((rows,) + g.shape[len(lead):]), 1),
                       _as_5d(dx.reshape((rows,) + x.shape), 1), *scratch)
    return dx.astype(g.dtype, copy=False)


def max_pool_grad_grad(x, h, ksize, strides, pads):
    """Reads ``h`` ([stack...,] N, *S, C) at every window's maximum in ``x``: the adjoint of max_pool_grad."""
    lead = h.shape[:h.ndim - x.ndim]
    xf, hf = _float(x), _float(h)
    out = np.empty(lead + (x.shape[0],) + _out_spatial(x.shape[1:-1], ksize, strides, pads) + (x.shape[-1],),
                   hf.dtype)
    if out.size:
        rows = int(np.prod(lead))
        scratch = np.empty(x.shape[-1], xf.dtype), np.empty(x.shape[-1], np.int64)
        _max_pool_grad_grad(_as_5d(xf), _geometry(ksize, strides, pads),
                            _as_5d(hf.reshape((rows,) + x.shape), 1),
                            _as_5d(out.reshape((rows,) + out.shape[len(lead):]), 1), *scratch)
    return out.astype(h.dtype, copy=False)


def avg_pool(x, ksize, strides, pads):
    xf = _float(x)
    n, c = x.shape[0], x.shape[-1]
    y = np.empty((n,) + _out_spatial(x.shape[1:-1], ksize, strides, pads) + (c,), xf.dtype)
    if y.size:
        _avg_pool(_as_5d(xf), _geometry(ksize, strides, pads), _as_5d(y))
    return y.astype(x.dtype, copy=False)


def avg_pool_grad(g, in_spatial, ksize, strides, pads):
    """The adjoint of avg_pool: (N, *OS, C) -> (N, *S, C)."""
    gf = _float(g)
    dx = np.zeros((g.shape[0],) + tuple(in_spatial) + (g.shape[-1],), gf.dtype)
    if g.size:
        _avg_pool_grad(_as_5d(gf), _geometry(ksize, strides, pads), _as_5d(dx))
    return dx.astype(g.dtype, copy=False)


# ------------------------------------------------------------- the loops ---
@njit(cache=True)
def _window(o, k, s, p, size):
    """The real cells [lo, hi) of window ``o`` along one axis."""
    start = o * s - p
    return max(start, 0), min(start + k, size)


@njit(cache=True)
def _bigger(v, best):
    return v > best or (v != v and best == best)


@njit(cache=True)
def _max_pool(x, geometry, y):
    kd, kh, kw, sd, sh, sw, pd, ph, pw = geometry
    n_, d_, h_, w_, c_ = x.shape
    _, od_, oh_, ow_, _ = y.shape
    for n in range(n_):
        for od in range(od_):
            d0, d1 = _window(od, kd, sd, pd, d_)
            for oh in range(oh_):
                h0, h1 = _window(oh, kh, sh, ph, h_)
                for ow in range(ow_):
                    w0, w1 = _window(ow, kw, sw, pw, w_)
                    out = y[n, od, oh, ow]
                    if d0 >= d1 or h0 >= h1 or w0 >= w1:
                        out[:] = -np.inf
                        continue
                    out[:] = x[n, d0, h0, w0]
                    for i in range(d0, d1):
                        for j in range(h0, h1):
                            for k in range(w0, w1):
                                cell = x[n, i, j, k]
                                for c in range(c_):
                                    if _bigger(cell[c], out[c]):
                                        out[c] = cell[c]


@njit(cache=True)
def _argmax_window(x, n, d0, d1, h0, h1, w0, w1, best, at):
    """Per channel, the flat spatial index (i * H + j) * W + k of the window's maximum."""
    _, _, h_, w_, c_ = x.shape
    first = x[n, d0, h0, w0]
    for c in range(c_):
        best[c] = first[c]
        at[c] = (d0 * h_ + h0) * w_ + w0
    for i in range(d0, d1):
        for j in range(h0, h1):
            for k in range(w0, w1):
                cell = x[n, i, j, k]
                for c in range(c_):
                    if _bigger(cell[c], best[c]):
                        best[c] = cell[c]
                        at[c] = (i * h_ + j) * w_ + k


@njit(cache=True)
def _max_pool_grad(x, geometry, g, dx, best, at):
    """dx (L, N, D, H, W, C), zeroed, += each g (L, N, OD, OH, OW, C) at its window's maximum."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw = geometry
    n_, d_, h_, w_, c_ = x.shape
    rows, _, od_, oh_, ow_, _ = g.shape
    flat = dx.reshape(rows, n_, d_ * h_ * w_, c_)
    for n in range(n_):
        for od in range(od_):
            d0, d1 = _window(od, kd, sd, pd, d_)
            for oh in range(oh_):
                h0, h1 = _window(oh, kh, sh, ph, h_)
                for ow in range(ow_):
                    w0, w1 = _window(ow, kw, sw, pw, w_)
                    if d0 >= d1 or h0 >= h1 or w0 >= w1:
                        continue
                    _argmax_window(x, n, d0, d1, h0, h1, w0, w1, best, at)
                    for r in range(rows):
                        src = g[r, n, od, oh, ow]
                        dst = flat[r, n]
                        for c in range(c_):
                            dst[at[c], c] += src[c]


@njit(cache=True)
def _max_pool_grad_grad(x, geometry, h, out, best, at):
    """out (L, N, OD, OH, OW, C) = h (L, N, D, H, W, C) read at each window's maximum."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw = geometry
    n_, d_, h_, w_, c_ = x.shape
    rows, _, od_, oh_, ow_, _ = out.shape
    flat = h.reshape(rows, n_, d_ * h_ * w_, c_)
    for n in range(n_):
        for od in range(od_):
            d0, d1 = _window(od, kd, sd, pd, d_)
            for oh in range(oh_):
                h0, h1 = _window(oh, kh, sh, ph, h_)
                for ow in range(ow_):
                    w0, w1 = _window(ow, kw, sw, pw, w_)
                    if d0 >= d1 or h0 >= h1 or w0 >= w1:
                        for r in range(rows):
                            out[r, n, od, oh, ow] = 0
                        continue
                    _argmax_window(x, n, d0, d1, h0, h1, w0, w1, best, at)
                    for r in range(rows):
                        dst = out[r, n, od, oh, ow]
                        src = flat[r, n]
                        for c in range(c_):
                            dst[c] = src[at[c], c]


@njit(cache=True)
def _avg_pool(x, geometry, y):
    kd, kh, kw, sd, sh, sw, pd, ph, pw = geometry
    n_, d_, h_, w_, c_ = x.shape
    _, od_, oh_, ow_, _ = y.shape
    for n in range(n_):
        for od in range(od_):
            d0, d1 = _window(od, kd, sd, pd, d_)
            for oh in range(oh_):
                h0, h1 = _window(oh, kh, sh, ph, h_)
                for ow in range(ow_):
                    w0, w1 = _window(ow, kw, sw, pw, w_)
                    out = y[n, od, oh, ow]
                    out[:] = 0
                    for i in range(d0, d1):
                        for j in range(h0, h1):
                            for k in range(w0, w1):
                                cell = x[n, i, j, k]
                                for c in range(c_):
                                    out[c] += cell[c]
                    count = (d1 - d0) * (h1 - h0) * (w1 - w0)
                    for c in range(c_):
                        out[c] /= count


@njit(cache=True)
def _avg_pool_grad(g, geometry, dx):
    kd, kh, kw, sd, sh, sw, pd, ph, pw = geometry
    n_, d_, h_, w_, c_ = dx.shape
    _, od_, oh_, ow_, _ = g.shape
    for n in range(n_):
        for od in range(od_):
            d0, d1 = _window(od, kd, sd, pd, d_)
            for oh in range(oh_):
                h0, h1 = _window(oh, kh, sh, ph, h_)
                for ow in range(ow_):
                    w0, w1 = _window(ow, kw, sw, pw, w_)
                    src = g[n, od, oh, ow]
                    count = (d1 - d0) * (h1 - h0) * (w1 - w0)
                    for i in range(d0, d1):
                        for j in range(h0, h1):
                            for k in range(w0, w1):
                                cell = dx[n, i, j, k]
                                for c in range(c_):
                                    cell[c] += src[c] / count

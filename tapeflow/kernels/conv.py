"""Convolution kernels on plain arrays: channels-last, one to three spatial dimensions.

    x       (N, *S, C)             input
    filter  (*K, C // groups, O)   O output channels in ``groups`` blocks of O // groups
    y       (N, *OS, O)            OS[i] = (S[i] + pads[i] - span[i]) // strides[i] + 1

``pads`` holds one (before, after) pair per spatial dimension; padded cells are
zeros. The three kernels are the convolution and its two adjoints:

    conv(x, w)                    y = B(x, w)
    conv_backprop_input(dy, w)    the adjoint of B in x (the input gradient)
    conv_backprop_filter(x, dy)   the adjoint of B in w (the filter gradient)

Each gathers the input windows into a matrix (im2col) or scatters a matrix back
into windows (col2im) and leaves the arithmetic to BLAS through numpy.matmul.
The window matrix is (rows, taps * C) with rows = N * prod(OS): built as one
copy of a strided view, except for a single input channel, where it is built
tap by tap as its transpose (taps, rows) and handed to BLAS transposed, which
copies long contiguous runs instead of runs of one element. col2im is a numba
loop that gathers, for each input cell, the C-long runs of the windows covering it.
A pointwise window (1x1, stride 1, no padding) is x itself: a reshape, no copy.
The input gradient (one group, several channels) multiplies and col2im-sums a
block of examples at a time, so its window entries are summed while in cache.
``windows``/``windows_backprop`` are im2col/col2im with the rows kept (N, *OS).

A depthwise convolution (one input channel per group) has too little
arithmetic per window for matmuls; it runs as one multiply-add of a strided
view per filter tap instead.

``conv_backprop_filter`` also accepts ``dy`` with extra leading axes (a stack of
cotangents) and returns one filter gradient per stacked row.
"""
import itertools

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

_NUMBA_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def output_size(size, kernel, stride, dilation, before, after):
    """Number of window positions along one padded dimension (< 1: the window does not fit)."""
    span = (kernel - 1) * dilation + 1
    return (size + before + after - span) // stride + 1


def _no_padding(pads):
    return not any(b or a for b, a in pads)


def _padded(x, pads):
    """``x`` with zeros around its spatial dimensions (``x`` itself when there are none)."""
    if _no_padding(pads):
        return x
    shape = (x.shape[0],) + tuple(s + b + a for s, (b, a) in zip(x.shape[1:-1], pads)) + (x.shape[-1],)
    out = np.zeros(shape, x.dtype)
    out[_interior(x.shape, pads)] = x
    return out


def _interior(shape, pads):
    """The index of the unpadded region inside a padded array."""
    return (slice(None),) + tuple(slice(b, b + s) for s, (b, _) in zip(shape[1:-1], pads)) + (slice(None),)


def _tap_index(tap, out_spatial, strides, dilations):
    """Where filter tap ``tap`` reads in the padded input, for every output position."""
    return (slice(None),) + tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                                  for t, o, s, d in zip(tap, out_spatial, strides, dilations))


def _taps(kernel):
    return itertools.product(*[range(k) for k in kernel])


def _out_spatial(in_spatial, kernel, strides, dilations, pads):
    return tuple(output_size(s, k, st, d, b, a)
                 for s, k, st, d, (b, a) in zip(in_spatial, kernel, strides, dilations, pads))


def _pointwise(kernel, strides, pads):
    """Whether every window is one cell read in place: the window matrix is ``x`` itself."""
    return all(k == 1 for k in kernel) and all(s == 1 for s in strides) and _no_padding(pads)


def im2col(x, kernel, strides, dilations, pads):
    """The windows of ``x`` as a (rows, taps * C) matrix (C-ordered, or F-ordered when C == 1)."""
    if _pointwise(kernel, strides, pads):
        return x.reshape(-1, x.shape[-1])
    xp = _padded(np.ascontiguousarray(x), pads)
    out_spatial = _out_spatial(x.shape[1:-1], kernel, strides, dilations, pads)
    n, c = x.shape[0], x.shape[-1]
    rows = n * int(np.prod(out_spatial))
    taps = int(np.prod(kernel))
    if c == 1:
        cols = np.empty((taps, n) + out_spatial, x.dtype)
        for i, tap in enumerate(_taps(kernel)):
            cols[i] = xp[_tap_index(tap, out_spatial, strides, dilations)][..., 0]
        return cols.reshape(taps, rows).T
    st = xp.strides
    view = as_strided(xp, (n,) + out_spatial + tuple(kernel) + (c,),
                      (st[0],) + tuple(a * s for a, s in zip(st[1:-1], strides))
                      + tuple(a * d for a, d in zip(st[1:-1], dilations)) + (st[-1],), writeable=False)
    return np.ascontiguousarray(view).reshape(rows, taps * c)


def col2im(cols, in_shape, kernel, strides, dilations, pads):
    """The adjoint of im2col: sums a (rows, taps * C) matrix of window entries into an (N, *S, C) array."""
    if _pointwise(kernel, strides, pads):
        return cols.reshape(in_shape)
    out_spatial = _out_spatial(in_shape[1:-1], kernel, strides, dilations, pads)
    if cols.dtype in _NUMBA_FLOATS and in_shape[-1] > 1:
        cols = np.ascontiguousarray(cols)
        x = np.empty(in_shape, cols.dtype)
        c = in_shape[-1]
        _col2im_runs(cols.reshape(-1, c), _geometry(in_shape, out_spatial, kernel, strides, dilations, pads),
                     x.reshape(-1, c))
        return x
    # One strided add per tap, from the tap-major (taps, rows * C) layout: long contiguous runs when C == 1.
    n, c = in_shape[0], in_shape[-1]
    n_taps = int(np.prod(kernel))
    taps = np.ascontiguousarray(cols.reshape(cols.shape[0], n_taps, c).transpose(1, 0, 2))
    taps = taps.reshape((n_taps, n) + out_spatial + (c,))
    xp = np.zeros((n,) + tuple(s + b + a for s, (b, a) in zip(in_shape[1:-1], pads)) + (c,), cols.dtype)
    for i, tap in enumerate(_taps(kernel)):
        xp[_tap_index(tap, out_spatial, strides, dilations)] += taps[i]
    return xp if _no_padding(pads) else np.ascontiguousarray(xp[_interior(in_shape, pads)])


def windows(x, kernel, strides, dilations, pads):
    """The windows of ``x`` (N, *S, C) as (N, *OS, taps * C): im2col with the rows unflattened."""
    out_spatial = _out_spatial(x.shape[1:-1], kernel, strides, dilations, pads)
    cols = im2col(x, kernel, strides, dilations, pads)
    return cols.reshape((x.shape[0],) + out_spatial + (cols.shape[-1],))


def windows_backprop(cols, in_spatial, kernel, strides, dilations, pads):
    """The adjoint of ``windows``: (N, *OS, taps * C) -> (N, *in_spatial, C)."""
    n, width = cols.shape[0], cols.shape[-1]
    taps = int(np.prod(kernel))
    in_shape = (n,) + tuple(in_spatial) + (width // taps,)
    return col2im(cols.reshape(-1, width), in_shape, kernel, strides, dilations, pads)


def _geometry(in_shape, out_spatial, kernel, strides, dilations, pads):
    """The flat tuple _col2im_runs reads, with the spatial dimensions padded to three."""
    r = len(kernel)
    lead = (1,) * (3 - r)
    return ((in_shape[0],) + lead + tuple(in_shape[1:-1]) + (in_shape[-1],) + lead + tuple(out_spatial)
            + lead + tuple(kernel) + lead + tuple(strides) + lead + tuple(dilations)
            + (0,) * (3 - r) + tuple(b for b, _ in pads))


@njit(cache=True)
def _col2im_runs(cols, geometry, x):
    """x (N * D * H * W, C) = sum of the window entries cols (N * OD * OH * OW * KD * KH * KW, C).

    Gathers: each cell of x adds up, in one pass, the C-long runs of the windows that cover
    it (filter taps in order), so every cell of x is written once and stays in cache while
    its terms arrive, instead of being read and written back once per window. Both arrays
    are 2-D so the run index is the loop counter (no negative-index check: the loop vectorises).
    The sums build in a local run ``acc``, which cannot alias ``cols``, so they stay in registers.
    """
    n_, d_, h_, w_, c_, od_, oh_, ow_, kd_, kh_, kw_, sd, sh, sw, dd, dh, dw, pd, ph, pw = geometry
    window = kd_ * kh_ * kw_
    acc = np.empty(c_, x.dtype)
    dst = 0
    for n in range(n_):
        for i in range(d_):
            for j in range(h_):
                for k in range(w_):
                    for q in range(c_):
                        acc[q] = 0
                    for a in range(kd_):
                        ii = i + pd - a * dd
                        if ii < 0:
                            continue
                        od = ii
                        if sd != 1:
                            if ii % sd:
                                continue
                            od = ii // sd
                        if od >= od_:
                            continue
                        for b in range(kh_):
                            jj = j + ph - b * dh
                            if jj < 0:
                                continue
                            oh = jj
                            if sh != 1:
                                if jj % sh:
                                    continue
                                oh = jj // sh
                            if oh >= oh_:
                                continue
                            for e in range(kw_):
                                kk = k + pw - e * dw
                                if kk < 0:
                                    continue
                                ow = kk
                                if sw != 1:
                                    if kk % sw:
                                        continue
                                    ow = kk // sw
                                if ow >= ow_:
                                    continue
                                src = (((n * od_ + od) * oh_ + oh) * ow_ + ow) * window + (a * kh_ + b) * kw_ + e
                                for q in range(c_):
                                    acc[q] += cols[src, q]
                    for q in range(c_):
                        x[dst, q] = acc[q]
                    dst += 1


# -------------------------------------------------------------- the kernels ---
def _grouped_cols(cols, taps, groups):
    """Window matrix (rows, taps * C) -> (groups, rows, taps * C // groups): each group's columns."""
    rows = cols.shape[0]
    cg = cols.shape[1] // taps // groups
    return np.ascontiguousarray(cols.reshape(rows, taps, groups, cg).transpose(2, 0, 1, 3)).reshape(
        groups, rows, taps * cg)


def _grouped_filter(w2d, groups):
    """Filter matrix (taps * cg, O) -> (groups, taps * cg, O // groups), a view."""
    return w2d.reshape(w2d.shape[0], groups, w2d.shape[1] // groups).transpose(1, 0, 2)


def _compute_dtype(a):
    return np.float32 if a.dtype == np.float16 else None


def _depthwise(groups, w):
    return groups > 1 and w.shape[-2] == 1


def _depthwise_conv(x, w, strides, dilations, pads):
    """y[..., c * M + m] = sum over taps of x's window [..., c] * w[tap, 0, c * M + m]."""
    kernel = w.shape[:-2]
    c = x.shape[-1]
    out_spatial = _out_spatial(x.shape[1:-1], kernel, strides, dilations, pads)
    xp = _padded(np.ascontiguousarray(x), pads)
    m = w.shape[-1] // c
    y = np.zeros((x.shape[0],) + out_spatial + (c, m), x.dtype)
    term = np.empty_like(y)
    for tap in _taps(kernel):
        np.multiply(xp[_tap_index(tap, out_spatial, strides, dilations)][..., None], w[tap].reshape(c, m), out=term)
        y += term
    return y.reshape(y.shape[:-2] + (w.shape[-1],))


def _depthwise_backprop_input(dy, w, in_spatial, strides, dilations, pads, channels):
    """The adjoint of _depthwise_conv in x: per tap, sum_m dy[..., c, m] * w[tap, 0, c * M + m] into the window."""
    kernel = w.shape[:-2]
    out_spatial = dy.shape[1:-1]
    m = w.shape[-1] // channels
    g = dy.reshape(dy.shape[:-1] + (channels, m))
    n = dy.shape[0]
    xp = np.zeros((n,) + tuple(s + b + a for s, (b, a) in zip(in_spatial, pads)) + (channels,), dy.dtype)
    term = np.empty(g.shape, dy.dtype)
    for tap in _taps(kernel):
        np.multiply(g, w[tap].reshape(channels, m), out=term)
        xp[_tap_index(tap, out_spatial, strides, dilations)] += term.sum(-1) if term.shape[-1] > 1 else term[..., 0]
    in_shape = (n,) + tuple(in_spatial) + (channels,)
    return xp if _no_padding(pads) else np.ascontiguousarray(xp[_interior(in_shape, pads)])


def _depthwise_backprop_filter(x, dy, kernel, strides, dilations, pads):
    """The adjoint of _depthwise_conv in w: per tap, sum over examples and positions of x's window * dy."""
    c = x.shape[-1]
    out_spatial = dy.shape[1:-1]
    xp = _padded(np.ascontiguousarray(x), pads)
    g = dy.reshape(dy.shape[:-1] + (c, dy.shape[-1] // c))
    axes = tuple(range(len(out_spatial) + 1))
    dw = np.empty(tuple(kernel) + (1, dy.shape[-1]), dy.dtype)
    term = np.empty(g.shape, dy.dtype)
    for tap in _taps(kernel):
        np.multiply(xp[_tap_index(tap, out_spatial, strides, dilations)][..., None], g, out=term)
        dw[tap] = term.sum(axes).reshape(1, dy.shape[-1])
    return dw


def conv(x, w, strides, dilations, pads, groups=1):
    """y = B(x, w): (N, *S, C) and (*K, C // groups, O) -> (N, *OS, O)."""
    if _compute_dtype(x):
        return conv(x.astype(np.float32), w.astype(np.float32), strides, dilations, pads, groups).astype(x.dtype)
    if _depthwise(groups, w):
        return _depthwise_conv(x, w, strides, dilations, pads)
    kernel, o = w.shape[:-2], w.shape[-1]
    out_spatial = _out_spatial(x.shape[1:-1], kernel, strides, dilations, pads)
    cols = im2col(x, kernel, strides, dilations, pads)
    w2d = w.reshape(int(np.prod(w.shape[:-1])), o)
    if groups == 1:
        y = np.matmul(cols, w2d)
    else:
        y = np.matmul(_grouped_cols(cols, int(np.prod(kernel)), groups), _grouped_filter(w2d, groups))
        y = y.transpose(1, 0, 2)
    return y.reshape((x.shape[0],) + out_spatial + (o,))


def conv_backprop_input(dy, w, in_spatial, strides, dilations, pads, groups=1):
    """The input gradient: (N, *OS, O) and (*K, C // groups, O) -> (N, *S, C)."""
    if _compute_dtype(dy):
        return conv_backprop_input(dy.astype(np.float32), w.astype(np.float32), in_spatial, strides, dilations,
                                   pads, groups).astype(dy.dtype)
    if _depthwise(groups, w):
        return _depthwise_backprop_input(dy, w, in_spatial, strides, dilations, pads, groups)
    kernel, cg, o = w.shape[:-2], w.shape[-2], w.shape[-1]
    taps = int(np.prod(kernel))
    rows = int(np.prod(dy.shape[:-1]))
    w2d = w.reshape(int(np.prod(w.shape[:-1])), o)
    g2d = dy.reshape(rows, o)
    in_shape = (dy.shape[0],) + tuple(in_spatial) + (cg * groups,)
    if groups == 1 and cg > 1 and dy.dtype in _NUMBA_FLOATS and not _pointwise(kernel, strides, pads) and rows:
        return _backprop_input_in_blocks(np.ascontiguousarray(g2d), w2d, in_shape, kernel, strides, dilations,
                                         pads)
    if groups == 1:
        cols = np.matmul(w2d, g2d.T).T if cg == 1 else np.matmul(g2d, w2d.T)
    else:
        g = np.ascontiguousarray(g2d.reshape(rows, groups, o // groups).transpose(1, 0, 2))
        cols = np.matmul(g, _grouped_filter(w2d, groups).transpose(0, 2, 1))  # (groups, rows, taps * cg)
        cols = cols.reshape(groups, rows, taps, cg).transpose(1, 2, 0, 3).reshape(rows, taps * cg * groups)
    return col2im(cols, in_shape, kernel, strides, dilations, pads)


_BLOCK_BYTES = 1 << 19      # the window entries of one block of examples, made and summed while in cache


def _backprop_input_in_blocks(g2d, w2d, in_shape, kernel, strides, dilations, pads):
    """col2im(g2d @ w2d.T) a block of examples at a time: each block's window entries are summed into
    its input cells straight after the product writes them, while they are in cache, instead of
    the whole (rows, taps * C) matrix going out to memory and back."""
    n, c = in_shape[0], in_shape[-1]
    out_spatial = _out_spatial(in_shape[1:-1], kernel, strides, dilations, pads)
    per_example = int(np.prod(out_spatial))
    cells = int(np.prod(in_shape[1:-1]))
    width = w2d.shape[0]
    block = max(1, min(n, _BLOCK_BYTES // max(1, per_example * width * g2d.itemsize)))
    buffer = np.empty((block * per_example, width), g2d.dtype)
    x = np.empty(in_shape, g2d.dtype)
    x_rows = x.reshape(-1, c)
    w_t = w2d.T
    geometry = None
    for start in range(0, n, block):
        stop = min(start + block, n)
        if geometry is None or stop - start != block:
            geometry = _geometry((stop - start,) + in_shape[1:], out_spatial, kernel, strides, dilations, pads)
        cols = buffer[:(stop - start) * per_example]
        np.matmul(g2d[start * per_example:stop * per_example], w_t, out=cols)
        _col2im_runs(cols.reshape(-1, c), geometry, x_rows[start * cells:stop * cells])
    return x


def conv_backprop_filter(x, dy, kernel, strides, dilations, pads, groups=1):
    """The filter gradient: (N, *S, C) and ([stack...,] N, *OS, O) -> ([stack...,] *K, C // groups, O)."""
    if _compute_dtype(x):
        return conv_backprop_filter(x.astype(np.float32), dy.astype(np.float32), kernel, strides, dilations,
                                    pads, groups).astype(x.dtype)
    r = len(kernel)
    stack = dy.shape[:dy.ndim - r - 2]
    if groups > 1 and x.shape[-1] == groups:
        dw = np.empty((int(np.prod(stack)),) + tuple(kernel) + (1, dy.shape[-1]), dy.dtype)
        for row, g in zip(dw, dy.reshape((len(dw),) + dy.shape[len(stack):])):
            row[...] = _depthwise_backprop_filter(x, g, kernel, strides, dilations, pads)
        return dw.reshape(stack + dw.shape[1:])
    o = dy.shape[-1]
    cols = im2col(x, kernel, strides, dilations, pads)
    rows = cols.shape[0]
    g = dy.reshape((int(np.prod(stack)), rows, o))
    if groups == 1:
        dw = np.matmul(cols.T, g)  # (stack, taps * C, O)
    else:
        gc = _grouped_cols(cols, int(np.prod(kernel)), groups)  # (groups, rows, taps * cg)
        gg = g.reshape(g.shape[0], rows, groups, o // groups).transpose(0, 2, 1, 3)  # (stack, groups, rows, og)
        dw = np.matmul(gc.transpose(0, 2, 1), gg)  # (stack, groups, taps * cg, og)
        dw = dw.transpose(0, 2, 1, 3)
    cg = x.shape[-1] // groups
    return np.ascontiguousarray(dw).reshape(stack + tuple(kernel) + (cg, o))

"""Independent numpy implementations of Keras's convolution and pooling formulas (direct loops), for the tests."""
import itertools

import numpy as np


def same_pads(size, span, stride):
    total = max((-(-size // stride) - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def conv(x, w, strides, padding, dilation, groups=1):
    """Channels-last cross-correlation: x (N, *S, C), w (*K, C // groups, O)."""
    rank = x.ndim - 2
    kernel = w.shape[:rank]
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if padding == "same":
        pads = [same_pads(n, sp, s) for n, sp, s in zip(x.shape[1:-1], spans, strides)]
    elif padding == "causal":
        pads = [(spans[0] - 1, 0)]
    else:
        pads = [(0, 0)] * rank
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    out_sizes = [(n - sp) // s + 1 for n, sp, s in zip(xp.shape[1:-1], spans, strides)]
    cin, cout = x.shape[-1], w.shape[-1]
    in_g, out_g = cin // groups, cout // groups
    y = np.zeros((x.shape[0],) + tuple(out_sizes) + (cout,))
    for b in range(x.shape[0]):
        for pos in itertools.product(*[range(n) for n in out_sizes]):
            for o in range(cout):
                g = o // out_g
                total = 0.0
                for k in itertools.product(*[range(n) for n in kernel]):
                    idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, dilation))
                    total += np.dot(xp[(b,) + idx + (slice(g * in_g, (g + 1) * in_g),)], w[k + (slice(None), o)])
                y[(b,) + pos + (o,)] = total
    return y


def conv_transpose(x, w, strides, padding, output_padding, dilation):
    """Channels-last transposed convolution, w (*K, O, C); the output size is Keras's formula."""
    rank = x.ndim - 2
    kernel = w.shape[:rank]
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    sizes = []
    for n, sp, s, op in zip(x.shape[1:-1], spans, strides, output_padding or [None] * rank):
        if op is None:
            sizes.append(n * s + max(sp - s, 0) if padding == "valid" else n * s)
        else:
            sizes.append((n - 1) * s + sp - 2 * (sp // 2 if padding == "same" else 0) + op)
    before = [same_pads(n, sp, s)[0] if padding == "same" else 0 for n, sp, s in zip(sizes, spans, strides)]
    y = np.zeros((x.shape[0],) + tuple(sizes) + (w.shape[-2],))
    for b in range(x.shape[0]):
        for pos in itertools.product(*[range(n) for n in x.shape[1:-1]]):
            for k in itertools.product(*[range(n) for n in kernel]):
                idx = tuple(p * s + kk * d - bf for p, s, kk, d, bf in zip(pos, strides, k, dilation, before))
                if all(0 <= i < n for i, n in zip(idx, sizes)):
                    y[(b,) + idx] += w[k] @ x[(b,) + pos]
    return y


def depthwise(x, w, strides, padding, dilation):
    """w (*K, C, M): output channel c * M + m from input channel c."""
    c, m = w.shape[-2:]
    grouped = w.reshape(w.shape[:-2] + (1, c * m))
    return conv(x, grouped, strides, padding, dilation, groups=c)


def pool(x, size, strides, padding, kind):
    """Channels-last max/average pooling; "same" averages count the real cells only."""
    rank = x.ndim - 2
    if padding == "same":
        pads = [same_pads(n, k, s) for n, k, s in zip(x.shape[1:-1], size, strides)]
        outs = [-(-n // s) for n, s in zip(x.shape[1:-1], strides)]
    else:
        pads = [(0, 0)] * rank
        outs = [(n - k) // s + 1 for n, k, s in zip(x.shape[1:-1], size, strides)]
    y = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[-1],))
    for pos in itertools.product(*[range(n) for n in outs]):
        key = [slice(None)]
        for p, s, k, (before, _), n in zip(pos, strides, size, pads, x.shape[1:-1]):
            start = p * s - before
            key.append(slice(max(start, 0), min(start + k, n)))
        window = x[tuple(key)]
        axes = tuple(range(1, rank + 1))
        y[(slice(None),) + pos] = window.max(axis=axes) if kind == "max" else window.mean(axis=axes)
    return y

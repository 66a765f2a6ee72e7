"""tf.image.extract_patches: patches gathered into the depth axis (a gather, so gradients flow)."""
import numpy as np

from ..ops import array_ops
from ..framework.tensor import Tensor
from ._images import image_tensor


def _quad(value, what):
    v = [int(a) for a in value]
    if len(v) != 4 or v[0] != 1 or v[3] != 1:
        raise ValueError(f"extract_patches: {what} must be [1, rows, cols, 1], got {list(value)}")
    return v[1], v[2]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Output [batch, out_rows, out_cols, size_rows * size_cols * depth]: each patch's pixels in row-major
    order, channels innermost; "SAME" pads with zeros."""
    x = image_tensor(images, ranks=None)
    if x._value.ndim != 4:
        raise ValueError(f"extract_patches: images must be 4-D [batch, rows, cols, depth], got {x.shape}")
    (kh, kw), (sh, sw), (rh, rw) = _quad(sizes, "sizes"), _quad(strides, "strides"), _quad(rates, "rates")
    padding = str(padding).upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"extract_patches: padding must be 'VALID' or 'SAME', got {padding!r}")
    n, h, w, c = x._value.shape
    span_h, span_w = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "VALID":
        out_h, out_w = max(0, (h - span_h) // sh + 1), max(0, (w - span_w) // sw + 1)
        top = left = 0
    else:
        out_h, out_w = -(-h // sh), -(-w // sw)
        top = max(0, (out_h - 1) * sh + span_h - h) // 2
        left = max(0, (out_w - 1) * sw + span_w - w) // 2
    rows = (np.arange(out_h) * sh)[:, None] + (np.arange(kh) * rh)[None, :] - top      # (out_h, kh)
    cols = (np.arange(out_w) * sw)[:, None] + (np.arange(kw) * rw)[None, :] - left     # (out_w, kw)
    # Out-of-image taps read an appended zero pixel.
    r = rows[:, None, :, None]
    q = cols[None, :, None, :]
    inside = (r >= 0) & (r < h) & (q >= 0) & (q < w)
    index = np.where(inside, r * w + q, h * w)                                          # (oh, ow, kh, kw)
    flat = array_ops.reshape(x, [n, h * w, c])
    flat = array_ops.pad(flat, [[0, 0], [0, 1], [0, 0]])
    patches = array_ops.gather(flat, Tensor(index.reshape(-1).astype(np.int64)), axis=1)
    return array_ops.reshape(patches, [n, out_h, out_w, kh * kw * c])

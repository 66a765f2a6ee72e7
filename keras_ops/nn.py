"""``keras.ops.nn``: activations, one-hot encodings, cross-entropies and normalizations.

As in Keras's TensorFlow backend, ``sigmoid`` and ``softmax`` remember the
logits they were applied to (``tapeflow.layers.activations``), and the
cross-entropies then compute from those logits rather than from clipped
probabilities. Integer inputs of float-only activations compute in floatx.
(Convolutions and pooling live in ``convolution`` and are re-exported here.)
"""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import nn_ops as N
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import axes_tuple, normalize_axis

from .config import epsilon as _epsilon
from .convolution import (average_pool, conv, conv_transpose, depthwise_conv, max_pool,  # noqa: F401
                          separable_conv)
from .dtypes import convert, standardize_dtype, to_float
from .symbolic import records_operations


def _activations():
    from tapeflow.layers import activations
    return activations


def _constant(value, like):
    return convert(value, like.dtype.name)


# ------------------------------------------------------------ activations ---
def relu(x):
    return N.relu(convert(x))


def relu6(x):
    return N.relu6(convert(x))


def sigmoid(x):
    return _activations().sigmoid(to_float(x))


def softplus(x):
    return N.softplus(to_float(x))


def softsign(x):
    return N.softsign(to_float(x))


def silu(x):
    x = to_float(x)
    return M.multiply(x, N.sigmoid(x))


swish = silu


def log_sigmoid(x):
    return N.log_sigmoid(to_float(x))


def leaky_relu(x, negative_slope=0.2):
    return N.leaky_relu(to_float(x), alpha=float(negative_slope))


def hard_sigmoid(x):
    """0 below -3, 1 above 3, x / 6 + 1/2 in between."""
    x = to_float(x)
    return M.divide(N.relu6(M.add(x, _constant(3.0, x))), _constant(6.0, x))


def hard_silu(x):
    x = to_float(x)
    return M.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def elu(x, alpha=1.0):
    x = to_float(x)
    y = N.elu(x)
    if alpha == 1.0:
        return y
    return M.add(N.relu(x), M.multiply(M.minimum(y, _constant(0.0, x)), _constant(alpha, x)))


def selu(x):
    return N.selu(to_float(x))


def gelu(x, approximate=True):
    """Keras's ops default is the tanh approximation (``keras.activations.gelu`` defaults to exact)."""
    return N.gelu(to_float(x), approximate=bool(approximate))


def celu(x, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = to_float(x)
    a = _constant(alpha, x)
    negative_part = M.minimum(M.multiply(a, M.expm1(M.divide(x, a))), _constant(0.0, x))
    return M.add(N.relu(x), negative_part)


def glu(x, axis=-1):
    """The first half of ``axis`` gated by the sigmoid of the second half."""
    x = to_float(x)
    axis = normalize_axis(int(axis), x.ndim, op="glu")
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} must have an even size, received shape {tuple(x.shape)}")
    a, b = A.split(x, 2, axis)
    return M.multiply(a, N.sigmoid(b))


def tanh_shrink(x):
    x = to_float(x)
    return M.subtract(x, M.tanh(x))


def hard_tanh(x):
    x = to_float(x)
    return M.clip_by_value(x, _constant(-1.0, x), _constant(1.0, x))


def hard_shrink(x, threshold=0.5):
    x = to_float(x)
    return A.where(M.greater(M.abs(x), _constant(threshold, x)), x, _constant(0.0, x))


def soft_shrink(x, threshold=0.5):
    x = to_float(x)
    t = _constant(threshold, x)
    zero = _constant(0.0, x)
    return A.where(M.greater(x, t), M.subtract(x, t), A.where(M.less(x, M.negative(t)), M.add(x, t), zero))


def threshold(x, threshold, default_value):
    x = to_float(x)
    return A.where(M.greater(x, _constant(threshold, x)), x, _constant(default_value, x))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, a smooth relu."""
    x = to_float(x)
    return M.multiply(M.add(x, M.sqrt(M.add(M.square(x), _constant(b, x)))), _constant(0.5, x))


def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)^2 / 4 in between."""
    x = to_float(x)
    one = _constant(1.0, x)
    middle = M.multiply(M.square(M.add(x, one)), _constant(0.25, x))
    return A.where(M.less_equal(x, M.negative(one)), _constant(0.0, x), A.where(M.greater_equal(x, one), x, middle))


def sparse_sigmoid(x):
    """0 below -1, 1 above 1, (x + 1) / 2 in between."""
    x = to_float(x)
    one = _constant(1.0, x)
    return M.clip_by_value(M.multiply(M.add(x, one), _constant(0.5, x)), _constant(0.0, x), one)


def _over_axes(fn, x, axis, name):
    """``fn(x, -1)`` applied jointly over several axes (moved last and flattened)."""
    axes = axes_tuple(axis, x.ndim, op=name)
    if len(axes) == 1:
        return fn(x, axes[0])
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = A.transpose(x, rest + list(axes))
    flat = A.reshape(moved, tuple(x.shape[a] for a in rest) + (-1,))
    out = A.reshape(fn(flat, -1), tuple(moved.shape))
    return A.transpose(out, np.argsort(rest + list(axes)).tolist())


def softmax(x, axis=-1):
    x = to_float(x)
    if isinstance(axis, (int, np.integer)):
        return _activations().softmax(x, axis=int(axis))
    return _over_axes(lambda v, a: N.softmax(v, a), x, axis, "softmax")


def log_softmax(x, axis=-1):
    x = to_float(x)
    return _over_axes(lambda v, a: N.log_softmax(v, a), x, axis, "log_softmax")


# --------------------------------------------------------------- encodings ---
def _class_indices(x, name):
    x = convert(x)
    if not (x.dtype.is_integer or x.dtype.is_floating):
        raise ValueError(f"{name}: class indices must be integers or floats, received a tensor of {x.dtype.name}")
    return x


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """Rows with a 1 at each index (indices outside [0, num_classes) give all zeros).

    Float indices are accepted as in Keras: a whole number selects its class, any other value (2.7) none."""
    if sparse:
        raise ValueError("one_hot: sparse=True is not supported by tapeflow (tensors are dense)")
    x = _class_indices(x, "one_hot")
    if x.dtype.is_floating:
        whole = M.equal(M.floor(x), x)
        x = M.cast(A.where(whole, x, M.cast(-1, x.dtype)), "int64")
    return A.one_hot(x, int(num_classes), axis=int(axis), dtype=standardize_dtype(dtype))


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """The union of the one-hot rows of each sample's indices (axis 1 of a batch, or a single 1-D sample).

    Float indices are truncated towards zero, as Keras does here (unlike ``one_hot``)."""
    num_classes = kwargs.pop("num_tokens", num_classes)
    if kwargs or num_classes is None:
        raise ValueError(f"multi_hot: `num_classes` must be given (received {num_classes}); unknown arguments "
                         f"{sorted(kwargs)}")
    x = _class_indices(inputs, "multi_hot")
    if x.dtype.is_floating:
        x = M.cast(x, "int64")
    encoded = one_hot(x, num_classes, axis=axis, dtype=dtype, sparse=sparse)
    return R.reduce_max(encoded, 1 if x.ndim > 1 else 0)


# ---------------------------------------------------------- cross-entropy ---
def _same_shape(target, output):
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={tuple(target.shape)}, output.shape={tuple(output.shape)}")


def _logits(output, from_logits, kind):
    """(tensor, from_logits): a sigmoid/softmax output stands for its logits, as in Keras's TensorFlow backend."""
    output = to_float(output)
    if from_logits:
        return output, True
    logits = _activations().logits_of(output, kind)
    return (logits, True) if logits is not None else (output, False)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise -(t log p + (1 - t) log(1 - p)), with p clipped to [eps, 1 - eps] (or from logits)."""
    output, from_logits = _logits(output, from_logits, "sigmoid")
    target = convert(target, output.dtype.name)
    _same_shape(target, output)
    if from_logits:
        return N.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _constant(_epsilon(), output)
    one = _constant(1.0, output)
    p = M.clip_by_value(output, eps, M.subtract(one, eps))
    positive = M.multiply(target, M.log(p))
    return M.negative(M.add(positive, M.multiply(M.subtract(one, target), M.log(M.subtract(one, p)))))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(t log p) along ``axis``; probabilities are renormalized and clipped to [eps, 1 - eps]."""
    output, from_logits = _logits(output, from_logits, "softmax")
    target = convert(target, output.dtype.name)
    if output.ndim < 1:
        raise ValueError(f"Arguments `target` and `output` must be at least rank 1. Received: "
                         f"target.shape={tuple(target.shape)}, output.shape={tuple(output.shape)}")
    _same_shape(target, output)
    axis = normalize_axis(int(axis), output.ndim, op="categorical_crossentropy")
    if from_logits:
        return N.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    p = M.divide(output, R.reduce_sum(output, axis, keepdims=True))
    eps = _constant(_epsilon(), output)
    p = M.clip_by_value(p, eps, M.subtract(_constant(1.0, output), eps))
    return M.negative(R.reduce_sum(M.multiply(target, M.log(p)), axis))


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """categorical_crossentropy with integer class targets (a trailing axis of size 1 is dropped)."""
    output, from_logits = _logits(output, from_logits, "softmax")
    if output.ndim < 1:
        raise ValueError("Argument `output` must be at least rank 1. Received: "
                         f"output.shape={tuple(output.shape)}")
    if normalize_axis(int(axis), output.ndim, op="sparse_categorical_crossentropy") != output.ndim - 1:
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    target = convert(target)
    if not target.dtype.is_integer:
        target = M.cast(target, "int64")
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = A.squeeze(target, -1)
    if tuple(target.shape) != tuple(output.shape[:-1]):
        raise ValueError(f"Arguments `target` and `output` must have the same shape up until the last dimension: "
                         f"target.shape={tuple(target.shape)}, output.shape={tuple(output.shape)}")
    if not from_logits:
        eps = _constant(_epsilon(), output)
        output = M.log(M.clip_by_value(output, eps, M.subtract(_constant(1.0, output), eps)))
    return N.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


# ---------------------------------------------------------- normalization ---
def moments(x, axes, keepdims=False, synchronized=False):
    """Mean and biased variance over ``axes`` (float16 is computed in float32)."""
    x = to_float(x)
    return N.moments(x, list(axes_tuple(axes, x.ndim, op="moments")), keepdims=keepdims)


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, with 1-D statistics along ``axis``."""
    x = to_float(x)
    axis = normalize_axis(int(axis), x.ndim, op="batch_normalization")
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]

    def along_axis(v):
        v = convert(v, x.dtype.name)
        if v.ndim == 1:
            if v.shape[0] != x.shape[axis]:
                raise ValueError(f"batch_normalization: statistics of length {v.shape[0]} do not match axis {axis} "
                                 f"of x (size {x.shape[axis]})")
            return A.reshape(v, shape)
        return v
    offset = None if offset is None else along_axis(offset)
    scale = None if scale is None else along_axis(scale)
    return N.batch_normalization(x, along_axis(mean), along_axis(variance), offset, scale, epsilon)


def normalize(x, axis=-1, order=2, epsilon=None):
    """x divided by its ``order``-norm along ``axis`` (norms below epsilon count as epsilon)."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = to_float(x)
    if x.ndim == 0:
        x = A.reshape(x, (1,))
    eps = _epsilon() if epsilon is None else epsilon
    axis = axes_tuple(axis, x.ndim, op="normalize")
    if order == 2:
        squares = R.reduce_sum(M.square(x), axis, keepdims=True)
        large = M.greater(squares, _constant(eps * eps, x))
        # rsqrt only where it is finite, so a zero vector has a zero (not NaN) gradient.
        inverse = A.where(large, M.rsqrt(A.where(large, squares, _constant(1.0, x))), _constant(1.0 / eps, x))
        return M.multiply(x, inverse)
    norm = R.reduce_sum(M.pow(M.abs(x), _constant(order, x)), axis, keepdims=True)
    norm = M.pow(norm, _constant(1.0 / order, x))
    return M.divide(x, M.maximum(norm, _constant(eps, x)))


def rms_normalization(x, scale=1, axis=-1, epsilon=None):
    x = to_float(x)
    eps = _epsilon() if epsilon is None else epsilon
    mean_square = R.reduce_mean(M.square(x), axes_tuple(axis, x.ndim, op="rms_normalization"), keepdims=True)
    return M.multiply(M.multiply(x, M.rsqrt(M.add(mean_square, _constant(eps, x)))), convert(scale, x.dtype.name))


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None):
    x = to_float(x)
    eps = _epsilon() if epsilon is None else epsilon
    mean, variance = N.moments(x, list(axes_tuple(axis, x.ndim, op="layer_normalization")), keepdims=True)
    out = M.multiply(M.subtract(x, mean), M.rsqrt(M.add(variance, _constant(eps, x))))
    if gamma is not None:
        out = M.multiply(out, convert(gamma, x.dtype.name))
    if beta is not None:
        out = M.add(out, convert(beta, x.dtype.name))
    return out


def psnr(x1, x2, max_val):
    """Peak signal-to-noise ratio in dB: 20 log10(max_val) - 10 log10(mean((x1 - x2)^2))."""
    x1, x2 = to_float(x1), to_float(x2)
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(f"psnr: x1 and x2 must have the same shape, received {tuple(x1.shape)} and "
                         f"{tuple(x2.shape)}")
    mse = R.reduce_mean(M.square(M.subtract(x1, x2)))
    ten = _constant(np.log(10.0), mse)
    return M.subtract(_constant(20 * np.log10(float(max_val)), mse), M.divide(M.multiply(M.log(mse), 10.0), ten))


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """softmax(q k^T * scale + bias, masked) v on [batch, length, heads, head_dim] tensors."""
    if flash_attention:
        raise ValueError("dot_product_attention: flash_attention is not available with tapeflow")
    q, k, v = (to_float(t) for t in (query, key, value))
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"dot_product_attention: query, key and value must be 4-D [batch, length, heads, dim], "
                         f"received {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = M.multiply(M.einsum("btnh,bsnh->bnts", q, k), _constant(scale, q))
    if attn_logits_soft_cap is not None:
        cap = _constant(attn_logits_soft_cap, q)
        logits = M.multiply(M.tanh(M.divide(logits, cap)), cap)
    if bias is not None:
        logits = M.add(logits, convert(bias, q.dtype.name))
    keep = None
    if mask is not None:
        keep = convert(mask, "bool")
    if is_causal:
        causal = convert(np.tril(np.ones((q.shape[1], k.shape[1]), bool)))
        keep = causal if keep is None else M.logical_and(keep, causal)
    if keep is not None:
        logits = A.where(keep, logits, _constant(np.finfo(q.dtype.name).min, q))
    weights = N.softmax(logits, -1)
    return M.einsum("bnts,bsnh->btnh", weights, v)


records_operations(globals(), "keras.src.ops.nn")   # called on KerasTensors: graph operations

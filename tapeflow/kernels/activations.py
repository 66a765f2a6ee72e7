"""Elementwise activation kernels and their fused gradients.

Each kernel works on flat contiguous 1-D arrays and writes into ``out``; the
wrappers at the bottom handle shapes and dtypes. Kernels compile on first use
(``cache=True`` keeps the machine code between processes).

NaN and infinities behave as in TensorFlow's CPU kernels: a NaN input gives a
NaN output (relu(nan) is nan, not 0), and the relu-family gradients multiply
the cotangent by a 0/1 mask (``g * (y > 0)``), so an inf or nan cotangent where
the unit is inactive gives nan and a negative one gives -0.0.
"""
import math

import numpy as np
from numba import njit

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


@njit(cache=True)
def relu(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = 0 if v <= 0 else v  # a nan fails the test and passes through


@njit(cache=True)
def relu_grad(g, y, out):
    for i in range(g.size):
        out[i] = g[i] * (y[i] > 0)


@njit(cache=True)
def relu6(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = 0 if v < 0 else (6 if v > 6 else v)


@njit(cache=True)
def relu6_grad(g, x, out):
    for i in range(g.size):
        v = x[i]
        out[i] = g[i] * (v > 0 and v < 6)


@njit(cache=True)
def leaky_relu(x, alpha, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v > 0 else alpha * v


@njit(cache=True)
def leaky_relu_grad(g, x, alpha, out):
    for i in range(g.size):
        out[i] = g[i] if x[i] > 0 else alpha * g[i]


@njit(cache=True)
def elu(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v > 0 else math.expm1(v)


@njit(cache=True)
def elu_grad(g, y, out):
    for i in range(g.size):
        # TensorFlow selects on y < 0, so a nan activation passes g through.
        out[i] = g[i] * (y[i] + 1) if y[i] < 0 else g[i]


@njit(cache=True)
def selu(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = SELU_SCALE * v if v > 0 else SELU_SCALE * SELU_ALPHA * math.expm1(v)


@njit(cache=True)
def selu_grad(g, y, out):
    for i in range(g.size):
        # activations < 0 use the exponential branch; y == 0 (x == 0) takes the linear slope, as TensorFlow.
        out[i] = g[i] * (y[i] + SELU_SCALE * SELU_ALPHA) if y[i] < 0 else g[i] * SELU_SCALE


@njit(cache=True)
def sigmoid(x, out):
    for i in range(x.size):
        v = x[i]
        if v >= 0:
            out[i] = 1.0 / (1.0 + math.exp(-v))
        else:
            e = math.exp(v)
            out[i] = e / (1.0 + e)


@njit(cache=True)
def sigmoid_grad(y, g, out):
    for i in range(g.size):
        out[i] = g[i] * y[i] * (1 - y[i])


@njit(cache=True)
def tanh(x, out):
    for i in range(x.size):
        out[i] = math.tanh(x[i])


@njit(cache=True)
def tanh_grad(y, g, out):
    for i in range(g.size):
        out[i] = g[i] * (1 - y[i] * y[i])


@njit(cache=True)
def softplus(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = (v if v > 0 else 0) + math.log1p(math.exp(-abs(v)))


@njit(cache=True)
def softplus_grad(g, x, out):
    for i in range(g.size):
        v = x[i]
        if v >= 0:
            s = 1.0 / (1.0 + math.exp(-v))
        else:
            e = math.exp(v)
            s = e / (1.0 + e)
        out[i] = g[i] * s


@njit(cache=True)
def softsign(x, out):
    for i in range(x.size):
        out[i] = x[i] / (1 + abs(x[i]))


@njit(cache=True)
def softsign_grad(g, x, out):
    for i in range(g.size):
        d = 1 + abs(x[i])
        out[i] = g[i] / (d * d)


@njit(cache=True)
def erf(x, out):
    for i in range(x.size):
        out[i] = math.erf(x[i])


@njit(cache=True)
def gelu(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.erf(v * _SQRT1_2))


@njit(cache=True)
def gelu_grad(g, x, out):
    for i in range(g.size):
        v = x[i]
        cdf = 0.5 * (1.0 + math.erf(v * _SQRT1_2))
        pdf = _INV_SQRT_2PI * math.exp(-0.5 * v * v)
        out[i] = g[i] * (cdf + v * pdf)


@njit(cache=True)
def gelu_tanh(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


@njit(cache=True)
def gelu_tanh_grad(g, x, out):
    for i in range(g.size):
        v = x[i]
        u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
        t = math.tanh(u)
        du = 0.7978845608028654 * (1 + 3 * 0.044715 * v * v)
        out[i] = g[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du)


_FLOAT32 = np.dtype(np.float32)
_FLOATS = (_FLOAT32, np.dtype(np.float64))


def _flat(a, work):
    """``a`` as a flat C-contiguous array of dtype ``work`` (a view when it already is one)."""
    if type(a) is np.ndarray and a.dtype is work and a.flags.c_contiguous:
        return a.reshape(-1)
    return np.ascontiguousarray(a, dtype=work).reshape(-1)


def apply(kernel, *arrays, params=()):
    """Runs ``kernel(*flat_arrays, *params, out)``; the result has the broadcast shape.

    float32/float64 run natively; other float types compute in float32 and are
    cast back (numba has no float16 arithmetic).
    """
    dtype = arrays[0].dtype
    work = dtype if dtype in _FLOATS else _FLOAT32
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:  # broadcasting (rare: stacked cotangents take _fused_grad's path)
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            arrays = [np.broadcast_to(a, shape) for a in arrays]
            break
    flats = [_flat(a, work) for a in arrays]
    out = np.empty(flats[0].size, dtype=work)
    kernel(*flats, *params, out)
    out = out.reshape(shape)
    return out if work is dtype else out.astype(dtype)


@njit(cache=True)
def scale_rows(g, slope, out):
    """out[r, j] = g[r, j] * slope[j]: a stack of cotangent rows times one row of derivatives."""
    rows, n = g.shape
    for r in range(rows):
        for j in range(n):
            out[r, j] = g[r, j] * slope[j]


@njit(cache=True)
def bias_relu_rows(x, bias, out):
    """out[r, c] = max(x[r, c] + bias[c], 0) for a C-contiguous 2-D x."""
    rows, cols = x.shape
    for r in range(rows):
        for c in range(cols):
            v = x[r, c] + bias[c]
            out[r, c] = 0 if v <= 0 else v


@njit(cache=True)
def bias_relu_grad_rows(g, y, dx, dbias):
    """dx = g * (y > 0) (relu_grad's mask); dbias[c] = sum over rows of dx[:, c] (one pass over g and y)."""
    rows, cols = g.shape
    for c in range(cols):
        dbias[c] = 0
    for r in range(rows):
        for c in range(cols):
            v = g[r, c]
            if not y[r, c] > 0:
                v = v * 0  # relu_grad's g * 0 (nan for an inf or nan g); as fast as a select, unlike g * mask here
            dx[r, c] = v
            dbias[c] += v

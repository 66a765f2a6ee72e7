"""Fused batch-normalization kernels (training mode) on 2-D (rows, channels) arrays.

Statistics are per channel over the rows, accumulated in float64; the
variance is the biased one (divided by the number of rows), as Keras 3 uses.
The kernels allocate nothing: their float64 per-channel scratch rows come from
the caller, which spares numba compiling its array constructors on a cold cache.
"""
import math

import numpy as np
from numba import njit


@njit(cache=True)
def batch_norm_train(x, gamma, beta, eps, y, mean, var, work):
    """y = (x - mean) / sqrt(var + eps) * gamma + beta, with the batch mean/var written out.

    ``work``: float64 scratch of shape (4, channels).
    """
    rows, channels = x.shape
    acc, mu, scale, shift = work[0], work[1], work[2], work[3]
    for c in range(channels):
        acc[c] = 0.0
    for i in range(rows):
        for c in range(channels):
            acc[c] += x[i, c]
    for c in range(channels):
        mu[c] = acc[c] / rows
        acc[c] = 0.0
    for i in range(rows):
        for c in range(channels):
            d = x[i, c] - mu[c]
            acc[c] += d * d
    for c in range(channels):
        v = acc[c] / rows
        mean[c] = mu[c]
        var[c] = v
        scale[c] = gamma[c] / math.sqrt(v + eps)
        shift[c] = beta[c] - mu[c] * scale[c]
    for i in range(rows):
        for c in range(channels):
            y[i, c] = x[i, c] * scale[c] + shift[c]


@njit(cache=True)
def batch_norm_train_grad(dy, x, gamma, mean, var, g_mean, g_var, eps, dx, dgamma, dbeta, work):
    """Backward of batch_norm_train for cotangents dy (of y), g_mean and g_var (of the batch statistics).

    ``work``: float64 scratch of shape (6, channels).
    """
    rows, channels = x.shape
    sum_dy, sum_dy_xhat, inv, k, a, b = work[0], work[1], work[2], work[3], work[4], work[5]
    for c in range(channels):
        sum_dy[c] = 0.0
        sum_dy_xhat[c] = 0.0
        inv[c] = 1.0 / math.sqrt(var[c] + eps)
    for i in range(rows):
        for c in range(channels):
            g = dy[i, c]
            sum_dy[c] += g
            sum_dy_xhat[c] += g * (x[i, c] - mean[c]) * inv[c]
    for c in range(channels):
        dbeta[c] = sum_dy[c]
        dgamma[c] = sum_dy_xhat[c]
        k[c] = gamma[c] * inv[c]
        # dx = k * (dy - sum_dy/rows - xhat * sum_dy_xhat/rows) + g_mean/rows + 2 g_var (x - mean)/rows
        a[c] = sum_dy[c] / rows
        b[c] = sum_dy_xhat[c] / rows
    for i in range(rows):
        for c in range(channels):
            centered = x[i, c] - mean[c]
            xhat = centered * inv[c]
            dx[i, c] = (k[c] * (dy[i, c] - a[c] - xhat * b[c])
                        + (g_mean[c] + 2.0 * g_var[c] * centered) / rows)


def train_forward(x2d, gamma, beta, eps):
    """(y, mean, var) for a C-contiguous (rows, channels) array."""
    x2d = np.ascontiguousarray(x2d)
    channels = x2d.shape[1]
    y = np.empty_like(x2d)
    mean = np.empty(channels, x2d.dtype)
    var = np.empty(channels, x2d.dtype)
    batch_norm_train(x2d, np.ascontiguousarray(gamma, x2d.dtype), np.ascontiguousarray(beta, x2d.dtype),
                     float(eps), y, mean, var, np.empty((4, channels)))
    return y, mean, var


def train_backward(dy2d, x2d, gamma, mean, var, g_mean, g_var, eps):
    """(dx, dgamma, dbeta) for C-contiguous (rows, channels) arrays."""
    dtype = x2d.dtype
    dx = np.empty_like(x2d)
    channels = x2d.shape[1]
    dgamma = np.empty(channels, dtype)
    dbeta = np.empty(channels, dtype)
    c = np.ascontiguousarray
    batch_norm_train_grad(c(dy2d, dtype), c(x2d), c(gamma, dtype), c(mean, dtype), c(var, dtype),
                          c(g_mean, dtype), c(g_var, dtype), float(eps), dx, dgamma, dbeta, np.empty((6, channels)))
    return dx, dgamma, dbeta

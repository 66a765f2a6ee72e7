"""Bias + relu and its gradient computed in the buffer of their input, where the program owns it.

A compiled program proves, from its own steps, that an operand is a fresh array it made (a
product the host program computed, or a kernel's result) that nothing reads after the op: the op may then write
its result over it. One array read and written in place moves a third less memory than a
read into a new array, and the loop, reading and writing through one name, vectorises
(the same array passed as two arguments would defeat the compiler's aliasing checks).

The arithmetic is that of the ops' kernels (kernels/activations.py), element for element and
the bias sums in the same row order, so the results are the same bits.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def _bias_relu_rows(x, bias):
    rows, cols = x.shape
    for r in range(rows):
        for c in range(cols):
            v = x[r, c] + bias[c]
            x[r, c] = 0 if v <= 0 else v


@njit(cache=True)
def _bias_relu_grad_rows(g, y, dbias):
    rows, cols = g.shape
    for c in range(cols):
        dbias[c] = 0
    for r in range(rows):
        for c in range(cols):
            v = g[r, c] * (y[r, c] > 0)      # g * 1 or g * 0 (NaN for an infinite or NaN g), as relu_grad
            g[r, c] = v
            dbias[c] += v


def bias_relu(x, bias):
    """BiasRelu's result, written over ``x`` (C-contiguous, owned by the caller)."""
    _bias_relu_rows(x.reshape(-1, x.shape[-1]), np.ascontiguousarray(bias))
    return x


def bias_relu_grad(g, y):
    """BiasReluGrad's (dx, dbias), dx written over ``g`` (C-contiguous, owned by the caller)."""
    dbias = np.empty(g.shape[-1], g.dtype)
    _bias_relu_grad_rows(g.reshape(-1, g.shape[-1]), np.ascontiguousarray(y).reshape(-1, g.shape[-1]), dbias)
    return g, dbias


def applies(op, in_shapes, in_dtypes):
    """Whether ``op`` on operands of these proven shapes and dtypes has an in-place form here."""
    if op not in ("BiasRelu", "BiasReluGrad") or len(in_shapes) != 2 or any(s is None for s in in_shapes):
        return False
    (x_shape, other_shape), (x_dtype, other_dtype) = in_shapes, in_dtypes
    if x_dtype not in (np.dtype(np.float32), np.dtype(np.float64)) or other_dtype != x_dtype or not x_shape \
            or 0 in x_shape:
        return False
    if op == "BiasRelu":
        return tuple(other_shape) == (x_shape[-1],)
    return tuple(other_shape) == tuple(x_shape)

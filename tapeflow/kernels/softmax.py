"""Row-wise softmax, log-softmax and fused softmax cross-entropy kernels (2-D, C-contiguous)."""
import math

import numpy as np
from numba import njit


@njit(cache=True)
def softmax_rows(x, out):
    for r in range(x.shape[0]):
        m = x[r, 0]
        for c in range(1, x.shape[1]):
            if x[r, c] > m:
                m = x[r, c]
        s = 0.0
        for c in range(x.shape[1]):
            e = math.exp(x[r, c] - m)
            out[r, c] = e
            s += e
        inv = 1.0 / s
        for c in range(x.shape[1]):
            out[r, c] *= inv


@njit(cache=True)
def log_softmax_rows(x, out):
    for r in range(x.shape[0]):
        m = x[r, 0]
        for c in range(1, x.shape[1]):
            if x[r, c] > m:
                m = x[r, c]
        s = 0.0
        for c in range(x.shape[1]):
            s += math.exp(x[r, c] - m)
        lse = m + math.log(s)
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] - lse


@njit(cache=True)
def softmax_xent_rows(logits, labels, loss, backprop):
    """loss[r] = -sum(labels * log_softmax(logits)); backprop = softmax(logits) - labels.

    Every class enters the sum, a zero label too: as in TensorFlow, a zero label
    against a -inf or nan logit gives a nan loss (0 * inf) rather than hiding it.
    """
    for r in range(logits.shape[0]):
        m = logits[r, 0]
        for c in range(1, logits.shape[1]):
            if logits[r, c] > m:
                m = logits[r, c]
        s = 0.0
        for c in range(logits.shape[1]):
            e = math.exp(logits[r, c] - m)
            backprop[r, c] = e
            s += e
        log_s = math.log(s)
        inv = 1.0 / s
        total = 0.0
        for c in range(logits.shape[1]):
            y = labels[r, c]
            total -= y * (logits[r, c] - m - log_s)
            backprop[r, c] = backprop[r, c] * inv - y
        loss[r] = total


@njit(cache=True)
def sparse_softmax_xent_rows(logits, labels, loss, backprop):
    for r in range(logits.shape[0]):
        m = logits[r, 0]
        for c in range(1, logits.shape[1]):
            if logits[r, c] > m:
                m = logits[r, c]
        s = 0.0
        for c in range(logits.shape[1]):
            e = math.exp(logits[r, c] - m)
            backprop[r, c] = e
            s += e
        inv = 1.0 / s
        k = labels[r]
        loss[r] = -(logits[r, k] - m - math.log(s))
        for c in range(logits.shape[1]):
            backprop[r, c] *= inv
        backprop[r, k] -= 1.0


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _rows(x):
    """x as a C-contiguous (rows, last_dim) array of float32/float64, and its original dtype."""
    dtype = x.dtype
    work = dtype if dtype in _FLOATS else np.dtype(np.float32)
    n_rows = int(np.prod(x.shape[:-1], dtype=np.int64))   # not -1: the last axis may be empty
    return np.ascontiguousarray(x, dtype=work).reshape(n_rows, x.shape[-1]), dtype


def softmax_last_axis(x, log=False):
    rows, dtype = _rows(x)
    out = np.empty_like(rows)
    if rows.shape[1]:
        (log_softmax_rows if log else softmax_rows)(rows, out)
    return out.reshape(x.shape).astype(dtype, copy=False)


def softmax_cross_entropy(logits, labels):
    rows, dtype = _rows(logits)
    lab = np.ascontiguousarray(labels, dtype=rows.dtype).reshape(rows.shape)
    loss = np.zeros(rows.shape[0], rows.dtype)
    backprop = np.empty_like(rows)
    if rows.shape[1]:
        softmax_xent_rows(rows, lab, loss, backprop)
    return loss.reshape(logits.shape[:-1]).astype(dtype, copy=False), backprop.reshape(logits.shape).astype(dtype, copy=False)


def sparse_softmax_cross_entropy(logits, labels):
    rows, dtype = _rows(logits)
    lab = np.ascontiguousarray(labels, dtype=np.int64).reshape(-1)
    loss = np.empty(rows.shape[0], rows.dtype)
    backprop = np.empty_like(rows)
    sparse_softmax_xent_rows(rows, lab, loss, backprop)
    return loss.reshape(logits.shape[:-1]).astype(dtype, copy=False), backprop.reshape(logits.shape).astype(dtype, copy=False)

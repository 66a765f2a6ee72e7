"""Products of one-hot cotangents: batch_jacobian's seeds, kept one-hot by the backward pass.

batch_jacobian seeds its backward pass with C[k, ..., o] = (k == o): one one-hot row per
output, repeated over the batch. An elementwise gradient op keeps that shape of zeros, so
the first MatMul of the backward pass multiplies a matrix A whose rows hold one non-zero
each: A @ W costs K times the work of the K products A[k, ..., k] * W[k, :] it adds up.

The compiled program tries the short product where its operand descends from such a seed,
and proves at each call that it gives what the MatMul gives: A's off-diagonal entries all
zero (not NaN) and W finite, so every term the MatMul would add besides A[k, ..., k] * W[k, h]
is a zero (a NaN or infinity anywhere falls back to the MatMul). The one remaining product
is rounded once either way; only the sign of a zero result may differ.
"""
import numpy as np
from numba import njit


def is_diagonal_seed(c):
    """Whether constant ``c`` is (K, ..., K) with c[k, ..., o] = (k == o)."""
    if c.ndim < 2 or c.shape[0] != c.shape[-1] or c.dtype.kind != "f":
        return False
    k = c.shape[0]
    eye = np.eye(k, dtype=c.dtype).reshape((k,) + (1,) * (c.ndim - 2) + (k,))
    return bool(np.array_equal(c, np.broadcast_to(eye, c.shape)))


def reads_a_seed(graph, node, shapes):
    """Whether MatMul ``node``'s left operand is made by a node that reads a diagonal seed of its shape
    (``shapes``: the graph's static shapes)."""
    ref = graph.nodes[node][1][0]
    if ref[0] != "node":
        return False
    shape = shapes.get(ref)
    return any(r[0] == "const" and graph.constant(r).shape == shape and is_diagonal_seed(graph.constant(r))
               for r in graph.nodes[ref[1]][1])


@njit(cache=True)
def diagonal_times_rows(a, w, out):
    """out[k, m, :] = a[k, m, k] * w[k, :] when every other a[k, m, o] is zero and w is finite; else
    False (``out`` then holds nothing of use)."""
    k_, m_, _ = a.shape
    for k in range(k_):
        for h in range(w.shape[1]):
            if not np.isfinite(w[k, h]):
                return False
    for k in range(k_):
        for m in range(m_):
            nonzero = False
            for o in range(k_):
                nonzero |= (a[k, m, o] != 0) & (o != k)      # NaN is not zero
            if nonzero:
                return False
            d = a[k, m, k]
            for h in range(w.shape[1]):
                out[k, m, h] = d * w[k, h]
    return True


MIN_PRODUCTS = 1 << 15      # below this many multiplications BLAS is quicker than the check


def one_hot_matmul(forward):
    """``forward`` (MatMul's) with the short product first where it provably gives the same result."""
    def matmul(a, b, transpose_a=False, transpose_b=False):
        if not transpose_a and a.ndim >= 2 and b.ndim == 2 and a.dtype == b.dtype and a.dtype.kind == "f" \
                and a.shape[0] == a.shape[-1] == (b.shape[1] if transpose_b else b.shape[0]) \
                and a.size * b.size // a.shape[0] >= MIN_PRODUCTS:
            k = a.shape[0]
            rows = np.ascontiguousarray(a).reshape(k, -1, k)
            w = b.T if transpose_b else b          # (K, H)
            out = np.empty((k, rows.shape[1], w.shape[1]), a.dtype)
            if diagonal_times_rows(rows, np.ascontiguousarray(w), out):
                return out.reshape(a.shape[:-1] + (w.shape[1],))
        return forward(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    return matmul

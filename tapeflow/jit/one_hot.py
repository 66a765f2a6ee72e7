"""Products of one-hot cotangents: batch_jacobian's seeds, kept one-hot by the backward pass.

batch_jacobian seeds its backward pass with the constant C[k, ..., o] = (k == o): one one-hot
row per output, repeated over the batch. The first MatMul of the backward pass multiplies
A = G(C, y) by W, where G is the gradient op of the last activation: A @ W costs K times the
work of the products A[k, ..., k] * W[k, :] that are not multiples of zero.

That A is one-hot is proven from the graph, once, when the program is planned: C is such a
constant, and G maps a zero cotangent to zero whatever its other operand holds:
- ReluGrad: ``0 * (y > 0)`` is 0 for every y;
- LeakyReluGrad with a finite alpha: ``0`` or ``alpha * 0``;
- EluGrad of an Elu's output y (>= -1, or NaN): ``0 * (y + 1)`` for y < 0 (y + 1 finite), else 0;
- or A is C itself.
The product then is, exactly as the MatMul adds its terms (up to the sign of a zero): each
off-diagonal term is 0 * W[o, h], which is 0 unless W[o, h] is infinite or NaN, and then NaN.
So out[k, ..., h] = A[k, ..., k] * W[k, h], or NaN where another row o of W holds a non-finite
value in column h. No data decides which way is taken: both terms are the formula.
"""
import numpy as np
from numba import njit

_ZERO_KEEPING = {"ReluGrad": None, "LeakyReluGrad": None, "EluGrad": "Elu"}   # grad op -> producer of y it needs


def is_diagonal_seed(c):
    """Whether constant ``c`` is (K, ..., K) with c[k, ..., o] = (k == o)."""
    if c is None or c.ndim < 2 or c.shape[0] != c.shape[-1] or c.dtype.kind != "f":
        return False
    k = c.shape[0]
    eye = np.eye(k, dtype=c.dtype).reshape((k,) + (1,) * (c.ndim - 2) + (k,))
    return bool(np.array_equal(c, np.broadcast_to(eye, c.shape)))


def _one_hot_operand(graph, ref, shape):
    """Whether ``ref`` (of static ``shape``) is proven one-hot along its first and last axes."""
    if ref[0] == "const":
        return is_diagonal_seed(graph.constant(ref))
    if ref[0] != "node":
        return False
    op, refs, attrs, _ = graph.nodes[ref[1]]
    if op not in _ZERO_KEEPING or len(refs) != 2:
        return False
    seed, y = (tuple(r) for r in refs)
    c = graph.constant(seed)
    if c is None or c.shape != tuple(shape) or not is_diagonal_seed(c):
        return False
    if op == "LeakyReluGrad" and not np.isfinite(attrs.get("alpha", np.nan)):
        return False
    producer = _ZERO_KEEPING[op]
    return producer is None or (y[0] == "node" and graph.nodes[y[1]][0] == producer)


def proven_one_hot_product(graph, node, shapes):
    """Whether MatMul ``node`` multiplies a proven one-hot A (K, ..., K) by a 2-D W of K rows, both of one float
    dtype (``shapes``: the graph's static shapes)."""
    op, refs, attrs, _ = graph.nodes[node]
    if op != "MatMul" or len(refs) != 2 or attrs.get("transpose_a") or attrs.get("adjoint_a") \
            or attrs.get("adjoint_b"):
        return False
    a, b = (tuple(r) for r in refs)
    a_shape, b_shape = shapes.get(a), shapes.get(b)
    dtypes = {graph.dtype(a), graph.dtype(b), graph.dtype(("node", node, 0))}
    if a_shape is None or b_shape is None or len(dtypes) != 1 or None in dtypes \
            or next(iter(dtypes)) not in (np.dtype(np.float32), np.dtype(np.float64)):
        return False
    k = a_shape[0]
    rows = b_shape[1] if attrs.get("transpose_b") else b_shape[0]
    return len(a_shape) >= 2 and len(b_shape) == 2 and a_shape[-1] == k == rows and k > 0 \
        and _one_hot_operand(graph, a, a_shape)


@njit(cache=True)
def diagonal_times_rows(a, w, out):
    """out[k, m, :] = a[k, m, k] * w[k, :], or NaN in the columns where another row of w is not finite."""
    k_, m_, _ = a.shape
    h_ = w.shape[1]
    non_finite = np.zeros(h_, np.int64)           # per column, rows of w holding an infinity or NaN
    for o in range(k_):
        for h in range(h_):
            non_finite[h] += not np.isfinite(w[o, h])
    for k in range(k_):
        for m in range(m_):
            d = a[k, m, k]
            for h in range(h_):
                others = non_finite[h] - (not np.isfinite(w[k, h]))
                out[k, m, h] = d * w[k, h] if others == 0 else np.nan


def one_hot_product(attrs):
    """MatMul (with ``attrs``) of a proven one-hot A and W as the short product."""
    transpose_b = bool(attrs.get("transpose_b"))

    def matmul(a, b):
        k = a.shape[0]
        rows = np.ascontiguousarray(a).reshape(k, -1, k)
        w = np.ascontiguousarray(b.T if transpose_b else b)          # (K, H)
        out = np.empty((k, rows.shape[1], w.shape[1]), a.dtype)
        diagonal_times_rows(rows, w, out)
        return out.reshape(a.shape[:-1] + (w.shape[1],))
    matmul.binds_attrs = True
    return matmul

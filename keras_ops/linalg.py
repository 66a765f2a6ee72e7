"""``keras.ops.linalg``: norm, det, inv, solve, solve_triangular, cholesky (all differentiable)."""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import decomposition_ops as D
from tapeflow.ops import linalg_ops as L
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import axes_tuple

from .dtypes import convert, promote, result_type
from .symbolic import records_operations

_INF = float("inf")


def _floats(x):
    x = convert(x)
    return M.cast(x, result_type(x.dtype.name, float))


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - Keras's argument name
    """NumPy's vector norms (any p, inf, -inf, 0) over one axis, matrix norms ('fro', 1, -1, 2, inf, -inf)
    over two; with neither ``ord`` nor ``axis``, the 2-norm of all elements."""
    x = _floats(x)
    if axis is None and ord is None:
        return _keep(R.norm(A.reshape(x, [-1]), "euclidean"), x, tuple(range(x.ndim)), keepdims)
    axes = axes_tuple(axis, x.ndim, op="norm") if axis is not None else tuple(range(x.ndim))
    if axis is not None and not isinstance(axis, (int, np.integer)):
        axes = tuple(axes_tuple(a, x.ndim, op="norm")[0] for a in axis)    # keep the order (rows, cols)
    if len(axes) == 1:
        return _vector_norm(x, axes[0], ord, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, axes, ord, keepdims)
    raise ValueError(f"norm: `axis` must name one or two axes, received axis={axis} for a tensor of rank {x.ndim}")


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    return A.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))


def _vector_norm(x, axis, ord, keepdims):
    if ord is None or ord == 2:
        return R.norm(x, "euclidean", axis, keepdims)
    if ord in (_INF, 1):
        return R.norm(x, ord, axis, keepdims)
    if ord == -_INF:
        return R.reduce_min(M.abs(x), axis, keepdims=keepdims)
    if ord == 0:
        return R.reduce_sum(M.cast(M.not_equal(x, convert(0, x.dtype.name)), x.dtype.name), axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid `ord` argument for vector norm. Received: ord={ord}")
    p = convert(ord, x.dtype.name)
    return M.pow(R.reduce_sum(M.pow(M.abs(x), p), axis, keepdims=keepdims), M.reciprocal(p))


def _matrix_norm(x, axes, ord, keepdims):
    rows, cols = axes
    if rows == cols:
        raise ValueError(f"norm: the two axes of a matrix norm must differ, received axis={axes}")
    if ord is None or ord in ("fro", "euclidean"):
        return R.norm(x, "euclidean", list(axes), keepdims)
    if ord in (1, -1, _INF, -_INF):
        summed_over, across = (rows, cols) if ord in (1, -1) else (cols, rows)
        pick = R.reduce_max if ord > 0 else R.reduce_min
        out = pick(R.reduce_sum(M.abs(x), summed_over, keepdims=True), across, keepdims=True)
    elif ord == 2:
        out = R.norm(x, 2, [rows, cols], keepdims=True)
    else:
        raise ValueError(f"Invalid `ord` argument for matrix norm. Received: ord={ord} (supported: None, 'fro', "
                         f"1, -1, 2, inf, -inf)")
    if keepdims:
        return out
    return A.reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def det(a):
    return L.det(_floats(a))


def inv(a):
    return L.inv(_floats(a))


def solve(a, b):
    """x with a @ x = b; ``b`` may be a vector (one fewer axis than ``a``)."""
    a, b = promote(_floats(a), _floats(b))
    if b.ndim == a.ndim - 1:
        return A.squeeze(L.solve(a, A.expand_dims(b, -1)), -1)
    return L.solve(a, b)


def solve_triangular(a, b, lower=False):
    """solve() with only the lower (or upper) triangle of ``a`` read."""
    a = _floats(a)
    n, m = a.shape[-2], a.shape[-1]
    keep = np.tri(n, m, dtype=bool) if lower else ~np.tri(n, m, -1, dtype=bool)
    return solve(A.where(convert(keep), a, convert(0, a.dtype.name)), b)


def cholesky(x, upper=False):
    """The triangular factor of a symmetric positive definite matrix: lower L with L L^T = x (or upper U = L^T)."""
    lower = D.cholesky(_floats(x))
    return A.matrix_transpose(lower) if upper else lower


records_operations(globals(), "keras.src.ops.linalg")   # called on KerasTensors: graph operations

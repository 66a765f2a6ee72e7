"""Products of ``keras.ops``: matmul, dot, tensordot, outer, inner, vdot, einsum, cross, kron.

NumPy's semantics: ``matmul`` accepts vectors (a 1-D operand gains and then
loses a unit axis) and broadcasts batch axes; ``dot`` of N-D and M-D arrays
sums the last axis of the first with the second-to-last of the second.
Operands are promoted to their common Keras dtype.
"""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M

from .dtypes import convert, promote
from .symbolic import records_operations


def matmul(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: operands must not be scalars, received shapes {tuple(x1.shape)} and "
                         f"{tuple(x2.shape)}; use multiply")
    vector1, vector2 = x1.ndim == 1, x2.ndim == 1
    a = A.reshape(x1, (1, -1)) if vector1 else x1
    b = A.reshape(x2, (-1, 1)) if vector2 else x2
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: incompatible shapes {tuple(x1.shape)} and {tuple(x2.shape)}: the last axis "
                         f"of the first ({a.shape[-1]}) must match the second-to-last of the second "
                         f"({b.shape[-2]})")
    out = M.matmul(a, b)
    if vector1 and vector2:
        return A.reshape(out, ())
    if vector1:
        return A.squeeze(out, -2)
    return A.squeeze(out, -1) if vector2 else out


def tensordot(x1, x2, axes=2):
    x1, x2 = promote(x1, x2)
    return M.tensordot(x1, x2, axes)


def dot(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        return M.multiply(x1, x2)
    if x2.ndim == 1:
        return M.tensordot(x1, x2, [[x1.ndim - 1], [0]])
    return M.tensordot(x1, x2, [[x1.ndim - 1], [x2.ndim - 2]])


def inner(x1, x2):
    x1, x2 = promote(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        return M.multiply(x1, x2)
    return M.tensordot(x1, x2, [[x1.ndim - 1], [x2.ndim - 1]])


def outer(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.multiply(A.reshape(x1, (-1, 1)), A.reshape(x2, (1, -1)))


def vdot(x1, x2):
    x1, x2 = promote(x1, x2)
    return M.tensordot(M.conj(A.reshape(x1, [-1])), A.reshape(x2, [-1]), 1)


def einsum(subscripts, *operands):
    return M.einsum(subscripts, *promote(*operands))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of 3-vectors (or 2-vectors, taken with a zero third component) along the given axes."""
    x1, x2 = promote(x1, x2)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = A.transpose(x1, _axis_last(x1.ndim, axisa)), A.transpose(x2, _axis_last(x2.ndim, axisb))
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: the vectors must have 2 or 3 components, received {a.shape[-1]} and "
                         f"{b.shape[-1]}")
    a, b = _three(a), _three(b)
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a1, a2, a3 = A.unstack(A.broadcast_to(a, shape), axis=-1)
    b1, b2, b3 = A.unstack(A.broadcast_to(b, shape), axis=-1)
    if x1.shape[axisa] == 2 and x2.shape[axisb] == 2:
        return M.subtract(M.multiply(a1, b2), M.multiply(a2, b1))
    out = A.stack([M.subtract(M.multiply(a2, b3), M.multiply(a3, b2)),
                   M.subtract(M.multiply(a3, b1), M.multiply(a1, b3)),
                   M.subtract(M.multiply(a1, b2), M.multiply(a2, b1))], axis=-1)
    return A.transpose(out, _axis_from_last(out.ndim, axisc))


def _axis_last(ndim, axis):
    axis %= ndim
    return [a for a in range(ndim) if a != axis] + [axis]


def _axis_from_last(ndim, axis):
    axis %= ndim
    perm = list(range(ndim - 1))
    perm.insert(axis, ndim - 1)
    return perm


def _three(v):
    if v.shape[-1] == 3:
        return v
    return A.concat([v, convert(np.zeros(tuple(v.shape[:-1]) + (1,), v.dtype.name))], -1)


def kron(x1, x2):
    """The Kronecker product: the blocks x1[i, j] * x2, for operands of equal rank (else padded with
    leading unit axes)."""
    x1, x2 = promote(x1, x2)
    rank = max(x1.ndim, x2.ndim)
    a = A.reshape(x1, (1,) * (rank - x1.ndim) + tuple(x1.shape))
    b = A.reshape(x2, (1,) * (rank - x2.ndim) + tuple(x2.shape))
    interleaved_a = [d for n in a.shape for d in (n, 1)]
    interleaved_b = [d for n in b.shape for d in (1, n)]
    product = M.multiply(A.reshape(a, interleaved_a), A.reshape(b, interleaved_b))
    return A.reshape(product, [m * n for m, n in zip(a.shape, b.shape)])


records_operations(globals(), "keras.src.ops.numpy")   # called on KerasTensors: graph operations

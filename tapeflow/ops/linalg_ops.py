"""Linear algebra: solve, inv, det, diagonals, trace, matvec."""
import numpy as np

from ..framework.batching import register_batching_rule
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from . import array_ops, math_ops, reduction_ops
from .common import RegisterGradient, batch_ndim, binary_args, execute, register_op, to_tensor


def _check_square(x, what):
    s = x._value.shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise InvalidArgumentError(f"{what}: input must be a square matrix (or a batch of them), got shape {TensorShape(s)}")


@register_batching_rule("MatrixInverse", "MatrixSolve", "MatrixDeterminant", "LogMatrixDeterminant")
def _stacked_matrices(op, batched):
    """Ops on stacks of matrices keep axis 0 when it is a stacking axis, not a matrix axis."""
    rank = op.inputs[0]._value.ndim
    batch = next(t for t, b in zip(op.inputs, batched) if b)._value.shape[0]
    return (all(t._value.ndim == rank >= 3 for t in op.inputs)
            and all(o._value.shape[:1] == (batch,) for o in op.outputs))


@register_op("MatrixInverse")
def _inv_fwd(a, adjoint):
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Input is not invertible. [Op:MatrixInverse]") from None
    return np.conj(np.swapaxes(inv, -1, -2)) if adjoint else inv


@RegisterGradient("MatrixInverse")
def _inv_grad(op, grad):
    ainv = op.outputs[0]
    nb = batch_ndim(op, grad)
    g = math_ops.negative(math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_b=True), adjoint_a=True))
    if op.attrs["adjoint"]:
        g = array_ops.matrix_transpose(math_ops.conj(g))
    return reduction_ops.sum_to(g, op.inputs[0]._value.shape, nb)


def inv(input, adjoint=False, name=None):
    x = to_tensor(input)
    _check_square(x, "inv")
    return execute("MatrixInverse", (x,), {"adjoint": bool(adjoint)})


@register_op("MatrixSolve")
def _solve_fwd(matrix, rhs, adjoint):
    if adjoint:
        matrix = np.conj(np.swapaxes(matrix, -1, -2))
    try:
        return np.linalg.solve(matrix, rhs)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Input matrix is not invertible. [Op:MatrixSolve]") from None


@RegisterGradient("MatrixSolve")
def _solve_grad(op, grad):
    nb = batch_ndim(op, grad)
    a, b = op.inputs
    x = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    gb = execute("MatrixSolve", (a, grad), {"adjoint": not adjoint})
    if adjoint:
        ga = math_ops.negative(math_ops.matmul(x, gb, adjoint_b=True))
    else:
        ga = math_ops.negative(math_ops.matmul(gb, x, adjoint_b=True))
    return reduction_ops.sum_to(ga, a._value.shape, nb), reduction_ops.sum_to(gb, b._value.shape, nb)


def solve(matrix, rhs, adjoint=False, name=None):
    a, b = binary_args(matrix, rhs, "MatrixSolve", broadcast=False)
    _check_square(a, "solve")
    if b._value.ndim < 2 or b._value.shape[-2] != a._value.shape[-1]:
        raise InvalidArgumentError(f"solve: rhs must have shape [..., {a._value.shape[-1]}, K] to match matrix "
                                   f"{a.shape}, got {b.shape}")
    return execute("MatrixSolve", (a, b), {"adjoint": bool(adjoint)})


@register_op("MatrixDeterminant")
def _det_fwd(a):
    return np.asarray(np.linalg.det(a), dtype=a.dtype)


@RegisterGradient("MatrixDeterminant")
def _det_grad(op, grad):
    a = op.inputs[0]
    scaled = math_ops.multiply(grad, op.outputs[0])
    scaled = array_ops.expand_dims(array_ops.expand_dims(scaled, -1), -1)
    return math_ops.multiply(scaled, array_ops.matrix_transpose(inv(a)))


def det(input, name=None):
    x = to_tensor(input)
    _check_square(x, "det")
    return execute("MatrixDeterminant", (x,))


@register_op("LogMatrixDeterminant", num_outputs=2)
def _slogdet_fwd(a):
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, dtype=a.dtype), np.asarray(logabs, dtype=a.dtype)


@RegisterGradient("LogMatrixDeterminant")
def _slogdet_grad(op, grad_sign, grad_logabs):
    # d log|det A| / dA = A^-T; the sign is piecewise constant.
    g = array_ops.expand_dims(array_ops.expand_dims(grad_logabs, -1), -1)
    return math_ops.multiply(g, array_ops.matrix_transpose(inv(op.inputs[0])))


def slogdet(input, name=None):
    """(sign(det), log|det|) of the innermost square matrices, stable for large determinants."""
    x = to_tensor(input)
    _check_square(x, "slogdet")
    return execute("LogMatrixDeterminant", (x,))


def logdet(matrix, name=None):
    """log(det(matrix)) for Hermitian positive definite matrices (via log|det|, no overflow)."""
    x = to_tensor(matrix)
    _check_square(x, "logdet")
    return slogdet(x)[1]


def diag_part(input, name=None, k=0):
    """The main diagonal of the innermost matrices (einsum ``...ii->...i`` on the leading square block)."""
    x = to_tensor(input)
    s = x._value.shape
    if len(s) < 2:
        raise InvalidArgumentError(f"diag_part: input must have rank >= 2, got shape {TensorShape(s)}")
    if k:
        raise ValueError("diag_part: only the main diagonal (k=0) is supported")
    n = min(s[-1], s[-2])
    if s[-1] != s[-2]:
        x = x[..., :n, :n]
    return math_ops.einsum("...ii->...i", x)


def diag(diagonal, name=None, k=0):
    v = to_tensor(diagonal)
    if k:
        raise ValueError("diag: only the main diagonal (k=0) is supported")
    n = v._value.shape[-1]
    return math_ops.einsum("...i,ij->...ij", v, Tensor(np.eye(n, dtype=v._value.dtype)))


def trace(x, name=None):
    return reduction_ops.reduce_sum(diag_part(x), -1)


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    b = array_ops.expand_dims(b, -1)
    return array_ops.squeeze(math_ops.matmul(a, b, transpose_a=transpose_a, adjoint_a=adjoint_a), -1)


def matrix_transpose(a, name=None, conjugate=False):
    return array_ops.matrix_transpose(a, conjugate=conjugate)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    x = to_tensor(x)
    sq = reduction_ops.reduce_sum(math_ops.square(x), axis if dim is None else dim, keepdims=True)
    return math_ops.multiply(x, math_ops.rsqrt(math_ops.maximum(sq, epsilon)))


def cross(a, b, name=None):
    a, b = binary_args(a, b, "Cross")
    ax, ay, az = array_ops.unstack(a, axis=-1)
    bx, by, bz = array_ops.unstack(b, axis=-1)
    M = math_ops
    return array_ops.stack([M.subtract(M.multiply(ay, bz), M.multiply(az, by)),
                            M.subtract(M.multiply(az, bx), M.multiply(ax, bz)),
                            M.subtract(M.multiply(ax, by), M.multiply(ay, bx))], axis=-1)

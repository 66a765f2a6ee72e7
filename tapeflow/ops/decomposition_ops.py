"""Matrix decompositions with gradients written in ops: Cholesky.

The gradient of A = L L^T (Murray, "Differentiation of the Cholesky
decomposition", 2016, as TensorFlow's CholeskyGrad): with Phi taking the lower
triangle and halving the diagonal,
dA = sym(L^-T Phi(L^T dL) L^-1), symmetric because only A's symmetric part is
defined by the factorisation.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from . import array_ops, linalg_ops, math_ops, reduction_ops
from .common import RegisterGradient, batch_ndim, execute, register_op, to_tensor


@register_op("Cholesky")
def _cholesky_fwd(a):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Cholesky decomposition was not successful. The input might not be valid "
                                   "(it must be symmetric positive definite). [Op:Cholesky]") from None


@RegisterGradient("Cholesky")
def _cholesky_grad(op, grad):
    lower = op.outputs[0]
    n = lower._value.shape[-1]
    phi = Tensor(np.tril(np.ones((n, n)), -1).astype(grad._value.dtype) + 0.5 * np.eye(n, dtype=grad._value.dtype))
    l_inverse = linalg_ops.inv(lower)
    middle = math_ops.multiply(math_ops.matmul(lower, grad, adjoint_a=True), phi)
    g = math_ops.matmul(math_ops.matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    g = math_ops.multiply(math_ops.add(g, array_ops.matrix_transpose(g)), 0.5)
    return reduction_ops.sum_to(g, op.inputs[0]._value.shape, batch_ndim(op, grad))


def cholesky(a, name=None):
    """The lower-triangular L with L L^T = a, for symmetric positive definite (batches of) matrices."""
    a = to_tensor(a)
    s = a._value.shape
    if len(s) < 2 or s[-1] != s[-2] or a._value.dtype.kind != "f":
        raise InvalidArgumentError(f"cholesky: input must be a square float matrix (or a batch of them), got shape "
                                   f"{list(s)} of {a.dtype.name}")
    return execute("Cholesky", (a,))

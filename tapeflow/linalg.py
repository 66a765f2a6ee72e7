"""tf.linalg"""
from .ops.array_ops import eye  # noqa: F401
from .ops.math_ops import einsum, matmul, tensordot  # noqa: F401
from .ops.linalg_ops import (cross, det, diag, diag_part, inv, l2_normalize, logdet, matrix_transpose,  # noqa: F401
                             matvec, slogdet, solve, trace)
from .ops.reduction_ops import norm  # noqa: F401

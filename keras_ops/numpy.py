"""``keras.ops.numpy``: the NumPy-like ops, gathered from the modules that implement them."""
from .creation import (arange, array, diag, empty, eye, full, full_like, identity, linspace, logspace,  # noqa: F401
                       meshgrid, ones, ones_like, tri, zeros, zeros_like)
from .elementwise import (abs, absolute, add, allclose, arccos, arccosh, arcsin, arcsinh, arctan,  # noqa: F401
                          arctan2, arctanh, bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or,
                          bitwise_right_shift, bitwise_xor, ceil, clip, conj, conjugate, cos, cosh, deg2rad, divide,
                          divide_no_nan, equal, exp, exp2, expm1, floor, floor_divide, greater, greater_equal, hypot,
                          imag, isclose, isfinite, isinf, isnan, left_shift, less, less_equal, log, log1p, log2,
                          log10, logaddexp, logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod,
                          multiply, nan_to_num, negative, not_equal, power, rad2deg, real, reciprocal, right_shift,
                          round, sign, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc, where)
from .indexing import (argsort, bincount, diagonal, digitize, nonzero, searchsorted, select, sort, take,  # noqa: F401
                       take_along_axis, trace, tril, triu, unique)
from .products import cross, dot, einsum, inner, kron, matmul, outer, tensordot, vdot  # noqa: F401
from .reductions import (all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod,  # noqa: F401
                         cumsum, max, mean, median, min, prod, ptp, quantile, std, sum, var)
from .shapes import (append, array_split, broadcast_to, concatenate, diff, dstack, expand_dims, flip,  # noqa: F401
                     hsplit, hstack, moveaxis, ndim, pad, ravel, repeat, reshape, roll, rot90, size, split,
                     squeeze, stack, swapaxes, tile, transpose, vsplit, vstack)

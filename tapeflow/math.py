"""tf.math"""
from .ops.array_ops import where  # noqa: F401
from .ops.math_ops import (abs, acos, add, add_n, asin, atan, ceil, conj, cos, cosh, divide, div_no_nan,  # noqa: F401
                           equal, erf, exp, expm1, floor, floordiv, floormod, greater, greater_equal, imag,
                           is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and, logical_not,
                           logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal, pow,
                           real, reciprocal, rint, round, rsqrt, sign, sin, sinh, sqrt, square, squared_difference,
                           subtract, tan, tanh, truediv)
from .ops.nn_ops import sigmoid, softplus, softsign, log_softmax, softmax  # noqa: F401
from .ops.reduction_ops import (argmax, argmin, count_nonzero, cumsum, reduce_all, reduce_any,  # noqa: F401
                                reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std,
                                reduce_sum, reduce_variance)
from .ops.linalg_ops import l2_normalize  # noqa: F401
from .ops.math_ops import complex_ as complex  # noqa: F401
from .ops.array_ops import unsorted_segment_sum  # noqa: F401
from .ops.nn_ops import log_sigmoid, top_k  # noqa: F401
from .ops.reduction_ops import reduce_euclidean_norm  # noqa: F401
divide_no_nan = div_no_nan  # TensorFlow 2's public name

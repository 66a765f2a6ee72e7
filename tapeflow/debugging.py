"""tf.debugging: assertions on values (ops, checked at every call) and on static shapes (checked now).

Value assertions raise ``tf.errors.InvalidArgumentError``; shape and rank
assertions on known shapes raise ``ValueError``, as TensorFlow does.
"""
import numpy as np

from .framework import dtypes, recording
from .framework.tensor_shape import TensorShape
from .ops import math_ops
from .ops.check_ops import assert_that, check_numerics  # noqa: F401
from .ops.common import to_tensor
from .ops.math_ops import is_finite, is_inf, is_nan  # noqa: F401

Assert = assert_that


def _assert_elementwise(condition, data, words, message, summarize):
    text = f"{message + chr(10) if message else ''}Condition x {words} did not hold element-wise:"
    assert_that(condition, data, text, summarize or 3)


def _comparison(name, test, symbol):
    def assertion(x, y, message=None, summarize=None, name=None):
        x, y = to_tensor(x), to_tensor(y, dtype=to_tensor(x).dtype)
        _assert_elementwise(test(x, y), [x, y], f"{symbol} y", message, summarize)
    assertion.__name__ = name
    return assertion


assert_equal = _comparison("assert_equal", math_ops.equal, "==")
assert_none_equal = _comparison("assert_none_equal", math_ops.not_equal, "!=")
assert_less = _comparison("assert_less", math_ops.less, "<")
assert_less_equal = _comparison("assert_less_equal", math_ops.less_equal, "<=")
assert_greater = _comparison("assert_greater", math_ops.greater, ">")
assert_greater_equal = _comparison("assert_greater_equal", math_ops.greater_equal, ">=")


def _sign_assertion(name, test, words):
    def assertion(x, message=None, summarize=None, name=None):
        x = to_tensor(x)
        _assert_elementwise(test(x, math_ops.cast(0, x.dtype)), [x], words, message, summarize)
    assertion.__name__ = name
    return assertion


assert_positive = _sign_assertion("assert_positive", math_ops.greater, "> 0")
assert_negative = _sign_assertion("assert_negative", math_ops.less, "< 0")
assert_non_negative = _sign_assertion("assert_non_negative", math_ops.greater_equal, ">= 0")
assert_non_positive = _sign_assertion("assert_non_positive", math_ops.less_equal, "<= 0")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| element-wise; both tolerances default to 10 * eps of the dtype."""
    x = to_tensor(x)
    y = to_tensor(y, dtype=x.dtype)
    eps = np.finfo(x.dtype.as_numpy_dtype).eps if x.dtype.is_floating else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    difference = math_ops.abs(math_ops.subtract(x, y))
    bound = math_ops.add(math_ops.cast(atol, x.dtype), math_ops.multiply(math_ops.cast(rtol, x.dtype),
                                                                         math_ops.abs(y)))
    text = (f"{message + chr(10) if message else ''}x and y not equal to tolerance rtol = {rtol}, "
            f"atol = {atol}")
    assert_that(math_ops.less_equal(difference, bound), [x, y], text, summarize or 3)


def assert_all_finite(t, message, name=None):
    check_numerics(t, message)


def assert_type(tensor, tf_type, message=None, name=None):
    tf_type = dtypes.as_dtype(tf_type)
    if to_tensor(tensor).dtype != tf_type:
        raise TypeError(f"{message + ': ' if message else ''}tensor must be of type {tf_type.name}, "
                        f"got {to_tensor(tensor).dtype.name}")


def _static_shape(x):
    return TensorShape(x.shape) if hasattr(x, "shape") else TensorShape(np.shape(x))


def assert_rank(x, rank, message=None, name=None):
    shape = _static_shape(x)
    if shape.rank is not None and shape.rank != int(rank):
        raise ValueError(f"{message + ' ' if message else ''}Tensor must have rank {int(rank)}. Received rank "
                         f"{shape.rank}, shape {shape}")


def assert_rank_at_least(x, rank, message=None, name=None):
    shape = _static_shape(x)
    if shape.rank is not None and shape.rank < int(rank):
        raise ValueError(f"{message + ' ' if message else ''}Tensor must have rank at least {int(rank)}. "
                         f"Received rank {shape.rank}, shape {shape}")


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks tensors against shape specs whose entries are sizes, symbols (names shared between
    tensors) or None; a spec may start with '...' for any leading dimensions."""
    pairs = shapes.items() if isinstance(shapes, dict) else shapes
    symbols = {}
    for i, (x, spec) in enumerate(pairs):
        shape = _static_shape(x)
        if shape.rank is None:
            continue
        spec = list(spec) if not isinstance(spec, str) else ([] if spec in ("", "()") else list(spec))
        dims = list(shape.as_list())
        if spec[:1] == ["..."]:
            spec = spec[1:]
            dims = dims[len(dims) - len(spec):] if len(spec) <= len(dims) else None
        if dims is None or len(dims) != len(spec):
            raise ValueError(f"{message + ' ' if message else ''}Specified by tensor {i}: tensor of shape "
                             f"{shape} does not have the rank {len(spec)} of its spec {spec}")
        for axis, (dim, want) in enumerate(zip(dims, spec)):
            if want is None or want == "." or dim is None:
                continue
            if isinstance(want, str):
                want = symbols.setdefault(want, dim)
            if dim != int(want):
                raise ValueError(f"{message + ' ' if message else ''}Specified by tensor {i} dimension {axis}: "
                                 f"tensor of shape {shape} has size {dim}, expected {int(want)} "
                                 f"(spec {spec})")


def is_numeric_tensor(tensor):
    return hasattr(tensor, "dtype") and (tensor.dtype.is_floating or tensor.dtype.is_integer
                                         or tensor.dtype.is_complex)


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """From now on every op's floating-point outputs are checked; NaN or Inf raises, naming the op."""
    recording.set_numerics_checked(True)


def disable_check_numerics():
    recording.set_numerics_checked(False)


__all__ = ["Assert", "assert_all_finite", "assert_equal", "assert_greater", "assert_greater_equal",
           "assert_less", "assert_less_equal", "assert_near", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank", "assert_rank_at_least",
           "assert_shapes", "assert_type", "check_numerics", "disable_check_numerics", "enable_check_numerics",
           "is_finite", "is_inf", "is_nan", "is_numeric_tensor"]

"""Runtime checks as ops: ``CheckNumerics`` and ``Assert``.

They are ops, not Python checks, so that a traced ``tf.function`` checks the
values of every call, not the placeholders of its trace. Both raise
``InvalidArgumentError`` as TensorFlow's kernels do.
"""
import numpy as np

from ..framework.batching import declare, elementwise
from ..framework.errors import InvalidArgumentError
from .common import RegisterGradient, execute, no_gradient, register_op, to_tensor
from .print_ops import format_tensor


@register_op("CheckNumerics", at_trace=lambda x, message: x)
def _check_numerics_fwd(x, message):
    if x.dtype.kind in "fc" and not np.isfinite(x).all():
        kinds = [what for what, bad in (("NaN", np.isnan(x).any()), ("Inf", np.isinf(x).any())) if bad]
        raise InvalidArgumentError(f"{message} : Tensor had {' and '.join(kinds)} values")
    return x


declare(elementwise, "CheckNumerics")


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return check_numerics(grad, f"Not a number (NaN) or infinity (Inf) values detected in gradient. "
                                f"{op.attrs['message']}")


def check_numerics(tensor, message, name=None):
    """``tensor``, after checking it holds no NaN and no infinity (``tf.debugging.check_numerics``)."""
    return execute("CheckNumerics", (to_tensor(tensor),), {"message": str(message)})


@register_op("Assert", num_outputs=-1, at_trace=lambda *tensors, **attrs: ())
def _assert_fwd(condition, *data, message, summarize):
    if not np.all(condition):
        shown = "\n".join(format_tensor(d, summarize) for d in data)
        raise InvalidArgumentError(f"assertion failed: {message}" + (f"\n{shown}" if shown else ""))
    return ()


no_gradient("Assert")


def assert_that(condition, data=(), message="", summarize=3):
    """Raises InvalidArgumentError, showing ``data``, unless every element of ``condition`` is true."""
    tensors = [to_tensor(condition)] + [to_tensor(d) for d in data]
    execute("Assert", tuple(tensors), {"message": str(message), "summarize": int(summarize)})

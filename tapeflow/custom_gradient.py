"""tf.custom_gradient: a function whose gradient the user supplies.

Eagerly, the function body runs with the tapes paused and one op is recorded
whose gradient function calls the user's ``grad_fn``. Forward accumulators do
see the body, so forward mode differentiates the forward ops (as TensorFlow).
While tracing a tf.function, the outputs go through an ``IdentityN`` op whose
``_gradient_op_type`` attribute names a gradient registered for this call
(see tapeflow.function), so the gradient can be saved with the graph.
"""
import functools
import inspect

from .framework import nest
from .framework.conversion import convert_to_tensor
from .framework import recording
from .framework.recording import record
from .framework.tensor import Tensor
from .framework.variables import Variable


def _accepts_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _as_input(x):
    if isinstance(x, Variable):
        return x._as_tensor()
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(x)


def make_gradient_function(grad_fn, n_inputs, variables):
    """Wraps the user's ``grad_fn`` into ``fn(op, *upstream) -> grads for inputs + variables``."""
    def op_gradient(op, *upstream):
        if variables:
            result = grad_fn(*upstream, variables=list(variables))
            if not isinstance(result, (list, tuple)) or len(result) != 2:
                raise ValueError("@tf.custom_gradient grad_fn must return (input_grads, variable_grads) when "
                                 "the function uses variables.")
            input_grads, var_grads = result
            var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
            if len(var_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads, var_grads = grad_fn(*upstream), []
        input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != n_inputs:
            raise ValueError(f"custom_gradient function expected to return {n_inputs} gradients, "
                             f"but returned {len(input_grads)} instead.")
        return [None if g is None else convert_to_tensor(g) for g in input_grads + var_grads]
    return op_gradient


def _run_body(f, args, kwargs):
    """Runs ``f``, collecting the trainable variables it reads."""
    with recording.watching_variables() as watcher:
        result = f(*args, **kwargs)
    if not isinstance(result, (tuple, list)) or len(result) != 2 or not callable(result[1]):
        raise TypeError(f"@tf.custom_gradient function {f.__name__!r} must return a pair (outputs, grad_fn).")
    return result[0], result[1], sorted(watcher.values(), key=lambda v: v._id)


def _eager_call(f, args, kwargs):
    inputs = [_as_input(a) for a in args]
    call_args = [i if not isinstance(a, Variable) else a for i, a in zip(inputs, args)]
    outputs, grad_fn, variables = _run_body(f, call_args, kwargs)
    variables = [v for v in variables if not any(v is a for a in args)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses "
                        f"variables: {variables}")
    flat = [convert_to_tensor(o) for o in nest.flatten(outputs)]
    fresh = [Tensor(o._value) for o in flat]
    for acc in recording.active_accumulators():
        acc._alias(flat, fresh)
    handles = [v._as_tensor() for v in variables]
    record(f.__name__, tuple(inputs + handles), tuple(fresh),
           grad_fn=make_gradient_function(grad_fn, len(inputs), variables), forward_mode=False)
    return nest.pack_sequence_as(outputs, fresh)


def custom_gradient(f=None):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)`` with ``grad_fn(*dy) -> dx``.

    Tensors passed as keyword arguments are treated as constants (they get no
    gradient); TensorFlow silently ignores the custom gradient in that case.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if recording.tracing_graph() is not None:
            from .function import traced_custom_gradient_call
            return traced_custom_gradient_call(f, args, kwargs)
        return _eager_call(f, args, kwargs)
    return decorated

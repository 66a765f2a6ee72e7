"""Control-flow ops: ``If``, ``While`` and ``Shape``, as they run when a traced graph replays.

An ``If`` or ``While`` node holds its branches (or loop condition and body) as
attributes: traced sub-graphs (ConcreteFunctions) whose inputs are all explicit.
The node's inputs are the predicate (``If``) or the loop variables (``While``),
then every outer tensor the sub-graphs use, in the order of their extra inputs.

    If(pred, *captured; then_branch, else_branch) -> the chosen branch's outputs
    While(*loop_vars, *captured; cond, body)      -> final loop_vars, iteration count (int32)

The forwards below run the sub-graphs on arrays; their gradients (tapeflow/
control_flow.py) are built from ``cond`` and ``while_loop`` themselves, which is
what makes derivatives of any order work.
"""
import numpy as np

from .common import execute, no_gradient, register_op
from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor


def run_subgraph(function, arrays):
    """The flat outputs (arrays) of a control-flow sub-graph called on ``arrays``."""
    graph = function.graph
    outputs = function._array_replay([Tensor(a) for a in arrays], function._graph_constants, (), graph.variables)
    return [t._value for t in outputs]


def output_count(function):
    return len(function.graph.outputs)


def truth(pred):
    """A predicate's value: a scalar boolean (or number), as TensorFlow requires."""
    pred = np.asarray(pred)
    if pred.size != 1 or pred.ndim > 1:
        raise ValueError(f"The predicate of a cond or while_loop must be a scalar, got a tensor of shape {pred.shape}")
    return bool(pred.reshape(()))


def _if_at_trace(pred, *inputs, then_branch, else_branch):
    """While tracing, the outputs stand for the then branch's traced values (nothing runs: a branch
    may print or assign)."""
    return tuple(then_branch.trace_outputs)


@register_op("If", num_outputs=-1, at_trace=_if_at_trace)
def _if_fwd(pred, *inputs, then_branch, else_branch):
    return tuple(run_subgraph(then_branch if truth(pred) else else_branch, inputs))


def _while_at_trace(*inputs, cond, body):
    n = output_count(body)
    return tuple(inputs[:n]) + (np.zeros((), np.int32),)


@register_op("While", num_outputs=-1, at_trace=_while_at_trace)
def _while_fwd(*inputs, cond, body):
    n = output_count(body)
    state, captured = list(inputs[:n]), list(inputs[n:])
    count = 0
    while truth(run_subgraph(cond, state + captured)[0]):
        state = run_subgraph(body, state + captured)
        count += 1
    return tuple(state) + (np.array(count, np.int32),)


@register_op("Shape")
def _shape_fwd(x, out_type="int32"):
    return np.array(x.shape, dtype=dtypes.as_dtype(out_type)._np)


no_gradient("Shape")


@register_op("Range")
def _range_fwd(start, limit, delta, dtype="int32"):
    if delta == 0:
        raise InvalidArgumentError("Requires delta != 0")
    return np.arange(start.item(), limit.item(), delta.item(), dtype=dtypes.as_dtype(dtype)._np)


no_gradient("Range")


@register_op("ZerosLike")
def _zeros_like_fwd(x, dtype=None):
    """Zeros shaped as ``x`` is when the graph runs (a branch or loop may change the shape)."""
    np_dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)._np
    return np.full(x.shape, b"", dtype=object) if np_dtype.kind == "O" else np.zeros(x.shape, np_dtype)


@register_op("OnesLike")
def _ones_like_fwd(x, dtype=None):
    return np.ones(x.shape, x.dtype if dtype is None else dtypes.as_dtype(dtype)._np)


no_gradient("ZerosLike")
no_gradient("OnesLike")


def zeros_like(x):
    return execute("ZerosLike", (x,))

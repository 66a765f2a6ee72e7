"""Horovod-style helpers for hand-written loops, where TensorFlow has no name for them.

They act on the strategy in scope, else on this process's MPI world (a single
worker when the process was not started by an MPI launcher)::

    import tapeflow.distribute as dist
    dist.rank(), dist.size()                       # this worker, how many
    dist.broadcast_variables(model.variables)      # every worker takes worker 0's values
    g = dist.allreduce(g, op=dist.ReduceOp.MEAN)   # mean of a value over the workers
"""

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import collective_ops

from . import distribute_lib
from .distribute_lib import ReduceOp


def _strategy():
    return distribute_lib.replica_strategy() or distribute_lib.scope_strategy()


def _backend():
    strategy = _strategy()
    if strategy is not None:
        return strategy.extended.backend
    from .strategy import world_backend
    return world_backend()


def _group_key():
    strategy = _strategy()
    return collective_ops.WORLD if strategy is None else strategy.extended.group_key


def rank():
    """This worker's number, 0 to ``size() - 1``."""
    return _backend().rank


def size():
    """The number of workers."""
    return _backend().size


def is_chief():
    """True on worker 0, the one that writes files and prints."""
    return _backend().rank == 0


def allreduce(value, op=ReduceOp.MEAN):
    """``value`` combined over all workers (MEAN by default, as Horovod); a Tensor on every worker. An op:
    inside a tf.function it runs at every call, and it is differentiable (the gradient is all-reduced)."""
    if op in (ReduceOp.MEAN, "MEAN", "mean"):
        reduction = "MEAN"
    elif op in (ReduceOp.SUM, "SUM", "sum"):
        reduction = "SUM"
    else:
        raise ValueError(f"`op` must be ReduceOp.SUM or ReduceOp.MEAN. Received: {op!r}")
    return collective_ops.all_reduce([value], _group_key(), reduction)[0]


def allgather(value):
    """Every worker's ``value`` concatenated along the first axis, in rank order (sizes may differ)."""
    from .strategy import allgather_concat
    return Tensor(allgather_concat(_backend(), distribute_lib.as_array(value), 0))


def broadcast(value, root_rank=0):
    """Worker ``root_rank``'s ``value``, on every worker."""
    return Tensor(distribute_lib.broadcast_arrays(_backend(), [distribute_lib.as_array(value)], root_rank)[0])


def broadcast_variables(variables, root_rank=0):
    """Assigns worker ``root_rank``'s values to ``variables`` on every worker (one broadcast per dtype)."""
    variables = list(variables)
    values = distribute_lib.broadcast_arrays(_backend(), [v.numpy() for v in variables], root_rank)
    for variable, value in zip(variables, values):
        variable.assign(value)


def barrier():
    """Returns when every worker has reached it."""
    _backend().barrier()

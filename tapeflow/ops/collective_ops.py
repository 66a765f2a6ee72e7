"""Collective ops: tensors combined over the workers of a tf.distribute strategy.

``CollectiveAllReduce(*tensors; group_key, reduction)`` sums (or averages) each
input over the workers of a group and gives every worker the result, one packed
collective per dtype (TensorFlow's ``CollectiveReduceV2``). Like every op it
runs eagerly, is recorded by a trace and runs at every replay of the graph, so
an optimizer's gradient aggregation or a ``strategy.reduce`` inside a
``tf.function`` happens at every call. A trace never runs the collective (one
worker may retrace, on a short last batch, while the others replay): it
continues on a stand-in of the inputs' shapes.

A group is a process's collective backend, named by an integer key that the
graph records: key 0 is this process's MPI world (the group of every
MultiWorkerMirroredStrategy, and the one a reloaded graph finds in a new
process); other keys name backends registered in this process.
"""
import itertools
import weakref

import numpy as np

from .common import RegisterGradient, execute, register_op, to_tensor

WORLD = 0
REDUCTIONS = ("SUM", "MEAN")
_groups = weakref.WeakValueDictionary()   # group key -> backend
_next_key = itertools.count(1)


def register_group(backend, world=False):
    """The group key under which collective ops reach ``backend`` (0 for the process's MPI world)."""
    for key, known in _groups.items():
        if known is backend:
            return key
    key = WORLD if world else next(_next_key)
    _groups[key] = backend
    return key


def _backend(group_key):
    backend = _groups.get(group_key)
    if backend is None and group_key == WORLD:
        from tapeflow.distribute.strategy import world_backend   # lazy: mpi4py loads only when used
        backend = world_backend()
        _groups[WORLD] = backend
    if backend is None:
        raise ValueError(f"CollectiveAllReduce: no collective group {group_key} in this process (the strategy "
                         "it belonged to is gone); a graph run in another process can only reduce over the MPI "
                         "world, group 0.")
    return backend


def packed_by_dtype(arrays, collective):
    """``arrays`` (numpy) after ``collective(flat)``, run once per dtype on all arrays of that dtype packed
    into one flat buffer; ``collective`` returns the buffer's new values. The inputs are not written."""
    out = list(arrays)
    groups = {}
    for i, a in enumerate(out):
        groups.setdefault(a.dtype, []).append(i)
    for indices in groups.values():
        flat = np.concatenate([out[i].reshape(-1) for i in indices]) if len(indices) > 1 \
            else np.array(out[indices[0]].reshape(-1), copy=True)
        flat = collective(flat)
        offset = 0
        for i in indices:
            n = out[i].size
            out[i] = flat[offset:offset + n].reshape(out[i].shape)
            offset += n
    return out


def reduce_arrays(backend, arrays, reduction="SUM"):
    """``arrays`` (numpy) reduced over the workers: one collective per dtype on a packed buffer.
    MEAN divides by the number of workers (integers: floor division)."""
    def all_reduce(flat):
        backend.allreduce(flat, "sum")
        if reduction == "MEAN":
            return flat / flat.dtype.type(backend.size) if flat.dtype.kind in "fc" else flat // backend.size
        return flat
    return packed_by_dtype(arrays, all_reduce)


def _stand_in(*arrays, group_key, reduction):
    return tuple(np.array(a, copy=True) for a in arrays)


@register_op("CollectiveAllReduce", num_outputs=-1, at_trace=_stand_in)
def _all_reduce_fwd(*arrays, group_key, reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"CollectiveAllReduce: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return tuple(reduce_arrays(_backend(group_key), [np.asarray(a) for a in arrays], reduction))


@RegisterGradient("CollectiveAllReduce")
def _all_reduce_grad(op, *grads):
    """Every worker's output depends on every worker's input: the gradient of a sum over the workers is
    the sum of the workers' incoming gradients (of a mean, their mean), as in TensorFlow."""
    return all_reduce(list(grads), op.attrs["group_key"], op.attrs["reduction"])


def all_reduce(tensors, group_key, reduction="SUM"):
    """Each tensor of ``tensors`` reduced over the group's workers (a list, in order)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"`reduction` must be one of {REDUCTIONS}. Received: {reduction!r}")
    if not tensors:
        return []
    out = execute("CollectiveAllReduce", tuple(to_tensor(t) for t in tensors),
                  {"group_key": int(group_key), "reduction": reduction})
    return list(out)

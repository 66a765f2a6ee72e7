"""Which strategy is in force, and the two things a strategy does to the rest of tapeflow.

* A variable created inside ``strategy.scope()`` starts, on every worker, from
  worker 0's value (one broadcast at creation) and remembers its strategy.
* Gradients applied to such variables are summed over the workers first
  (``aggregate_gradients``, called by the optimizer): one packed all-reduce
  per step, TensorFlow's ``apply_gradients`` semantics in a replica context.

Scopes and replica contexts are per thread, as in TensorFlow.
"""
import enum
import threading

import numpy as np

from tapeflow.framework import variables as _variables

from tapeflow.ops import collective_ops

from .collective_backend import SUM


class ReduceOp(enum.Enum):
    """How values of the replicas combine: ``tf.distribute.ReduceOp``."""
    SUM = "SUM"
    MEAN = "MEAN"


_local = threading.local()


def _scopes():
    if not hasattr(_local, "scopes"):
        _local.scopes = []
        _local.replica = []
    return _local.scopes


def scope_strategy():
    """The strategy of the innermost ``strategy.scope()`` of this thread, or None."""
    scopes = _scopes()
    return scopes[-1] if scopes else None


def replica_strategy():
    """The strategy whose ``run`` is executing the current function, or None."""
    _scopes()
    return _local.replica[-1] if _local.replica else None


def enter_scope(strategy):
    current = scope_strategy()
    if current is not None and current is not strategy and not getattr(current, "_is_default", False):
        raise ValueError("Mixing different tf.distribute.Strategy objects: a scope of "
                         f"{type(current).__name__} is already open; close it before entering "
                         f"{type(strategy).__name__}'s scope.")
    if _on_variable_created not in _variables.creation_observers:
        _variables.creation_observers.append(_on_variable_created)
    _scopes().append(strategy)


def exit_scope(strategy):
    scopes = _scopes()
    if not scopes or scopes[-1] is not strategy:
        raise RuntimeError("tf.distribute scopes must be closed in the order they were opened.")
    scopes.pop()


def enter_replica(strategy):
    _scopes()
    _local.replica.append(strategy)


def exit_replica(strategy):
    _local.replica.pop()


def is_chief():
    """True on the worker that writes files and prints (rank 0); True when not distributed."""
    strategy = replica_strategy() or scope_strategy()
    return strategy is None or strategy.extended.backend.rank == 0


# ----------------------------------------------------------------- variables ---
def variable_strategy(variable):
    return getattr(getattr(variable, "_parent", variable), "_distribute_strategy", None)


def _on_variable_created(variable):
    strategy = scope_strategy()
    if strategy is None or getattr(strategy, "_is_default", False):
        return
    variable._distribute_strategy = strategy
    backend = strategy.extended.backend
    if backend.size > 1:
        value = np.array(variable.numpy(), copy=True, order="C")
        if value.dtype.kind not in "biufc":
            raise TypeError(f"Cannot create variable '{variable.name}' of dtype {value.dtype} inside "
                            f"{type(strategy).__name__}.scope(): only numeric and boolean variables can be "
                            "synchronized between workers.")
        backend.broadcast(value.view(np.uint8) if value.dtype.kind == "b" else value, root=0)
        _variables.load_array(variable, value)


# ----------------------------------------------------------------- gradients ---
def update_strategy(variables):
    """The strategy that owns an update of ``variables``: the one running the replica function, else
    the one whose scope is open, else the one the variables were created under (None: a local update).

    A multi-worker update of a variable created outside that strategy's scope is refused: nothing made
    its value the same on every worker, and summed gradients would then move diverging copies."""
    strategy = replica_strategy() or scope_strategy()
    if strategy is None:
        found = {id(s): s for s in map(variable_strategy, variables) if s is not None}
        if len(found) > 1:
            raise ValueError("The variables being updated were created under different tf.distribute "
                             "strategies; create the model and its optimizer inside one `strategy.scope()`.")
        strategy = next(iter(found.values()), None)
    if strategy is not None and strategy.num_replicas_in_sync > 1:
        strays = [v for v in variables if variable_strategy(v) is not strategy]
        if strays:
            name = getattr(strays[0], "path", None) or getattr(strays[0], "name", "?")
            more = f" (and {len(strays) - 1} other variables)" if len(strays) > 1 else ""
            raise ValueError(f"Variable '{name}'{more} was not created inside the scope of the "
                             f"{type(strategy).__name__} that updates it, so its value may differ between "
                             "workers. Create the model (and its optimizer) inside `with strategy.scope():`.")
    return strategy


def aggregate_gradients(grads, variables):
    """The gradients (tensors, or None) summed over all workers when the variables are distributed: a
    ``CollectiveAllReduce`` op (one packed collective per dtype), which a traced step runs at every call.
    Else ``grads`` as they are."""
    strategy = update_strategy(variables)
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return grads
    present = [i for i, g in enumerate(grads) if g is not None]
    summed = collective_ops.all_reduce([grads[i] for i in present], strategy.extended.group_key, "SUM")
    out = list(grads)
    for i, g in zip(present, summed):
        out[i] = g
    return out


def allreduce_arrays(backend, arrays, op=SUM):
    """``arrays`` (numpy, or None) summed over the workers now: one collective per dtype on a packed
    buffer (for host-side state, such as metric sums, outside any graph)."""
    present = [i for i, a in enumerate(arrays) if a is not None]
    reduced = collective_ops.reduce_arrays(backend, [np.asarray(arrays[i]) for i in present])
    out = list(arrays)
    for i, a in zip(present, reduced):
        out[i] = a
    return out


def as_array(value):
    """A tensor, variable (tf or Keras) or array-like value as a numpy array, for a host-side collective."""
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def broadcast_arrays(backend, arrays, root=0):
    """Copies of ``arrays`` holding worker ``root``'s values (one broadcast per dtype)."""
    def broadcast(flat):
        if flat.dtype.kind not in "biufc":
            raise TypeError(f"Cannot broadcast values of dtype {flat.dtype} between workers.")
        backend.broadcast(flat.view(np.uint8) if flat.dtype.kind == "b" else flat, root=root)
        return flat
    return collective_ops.packed_by_dtype([np.asarray(a) for a in arrays], broadcast)


def check_same_on_workers(value, what):
    """Raises on every worker when the integer ``value`` differs between workers (e.g. the epoch a
    backup resumes from: a worker that cannot see the backup directory would start over)."""
    strategy = replica_strategy() or scope_strategy()
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return
    values = strategy.extended.backend.allgather(np.array([value], np.int64))[:, 0].tolist()
    if len(set(values)) > 1:
        raise RuntimeError(f"The workers disagree on {what}: {values} (by rank). Every worker must see the same "
                           "files: put them on a file system shared by all workers.")

"""tf.distribute strategies: one replica per process, the processes joined by a collective backend.

``MultiWorkerMirroredStrategy`` is data parallelism over the workers an MPI
launcher started; ``MirroredStrategy`` and the default strategy are one
process (a host's CPU cores already serve every op of the one replica).
"""
import contextlib
import warnings

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.recording import tracing_graph
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, collective_ops, math_ops, reduction_ops

from . import distribute_lib
from .cluster_resolver import MPIClusterResolver
from .collective_backend import LocalBackend
from .distribute_lib import ReduceOp
from .input_lib import DatasetsFromFunction, DistributedDataset


def _check_reduce_op(reduce_op):
    if isinstance(reduce_op, str):
        try:
            return ReduceOp[reduce_op.upper()]
        except KeyError:
            pass
    if not isinstance(reduce_op, ReduceOp):
        raise ValueError(f"`reduce_op` must be tf.distribute.ReduceOp.SUM or .MEAN (or 'SUM'/'MEAN'). "
                         f"Received: {reduce_op!r}")
    return reduce_op


class StrategyExtended:
    """``strategy.extended``: the backend and the chief's duties."""

    def __init__(self, strategy, backend):
        self._strategy = strategy
        self.backend = backend
        # how the collective ops of this strategy's steps name its backend (0: the process's MPI world)
        self.group_key = collective_ops.register_group(backend, world=backend is _WORLD.get("backend"))

    @property
    def should_checkpoint(self):
        return self.backend.rank == 0

    @property
    def should_save_summary(self):
        return self.backend.rank == 0

    @property
    def should_init(self):
        return True

    @property
    def experimental_between_graph(self):
        return self.backend.size > 1


class ReplicaContext:
    """``tf.distribute.get_replica_context()`` inside ``strategy.run``."""

    def __init__(self, strategy):
        self.strategy = strategy

    @property
    def num_replicas_in_sync(self):
        return self.strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self.strategy.extended.backend.rank

    def all_reduce(self, reduce_op, value, options=None):
        """``value`` (a tensor or nest of them) combined over all replicas; every replica gets the result.
        Differentiable as in TensorFlow: the gradient is the all-reduce of the incoming gradients."""
        reduce_op = _check_reduce_op(reduce_op)
        leaves = nest.flatten(value)
        reduced = collective_ops.all_reduce(leaves, self.strategy.extended.group_key, reduce_op.value)
        return nest.pack_sequence_as(value, reduced)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        return merge_fn(self.strategy, *args, **(kwargs or {}))


class Strategy:
    """The TensorFlow 2 ``tf.distribute.Strategy`` API over one replica per process."""

    _is_default = False

    def __init__(self, backend=None):
        self._extended = StrategyExtended(self, backend or LocalBackend())
        self._cluster_resolver = MPIClusterResolver(self._extended.backend.rank, self._extended.backend.size) \
            if not self._is_default else None

    @property
    def extended(self):
        return self._extended

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    @property
    def num_replicas_in_sync(self):
        return self._extended.backend.size

    @contextlib.contextmanager
    def scope(self):
        """Variables created inside start from worker 0's values on every worker, and their gradients are
        summed over the workers when an optimizer applies them."""
        distribute_lib.enter_scope(self)
        try:
            yield self
        finally:
            distribute_lib.exit_scope(self)

    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs ``fn(*args, **kwargs)`` as this worker's replica (inside the scope, in a replica context)."""
        with self.scope():
            distribute_lib.enter_replica(self)
            try:
                return fn(*args, **(kwargs or {}))
            finally:
                distribute_lib.exit_replica(self)

    def reduce(self, reduce_op, value, axis=None):
        """Combines the replicas' ``value`` into one (a Tensor on every worker). With ``axis``, the values
        are first reduced along that axis, and MEAN divides by the global number of elements along it."""
        reduce_op = _check_reduce_op(reduce_op)
        leaves = [convert_to_tensor(v) for v in nest.flatten(value)]
        key = self._extended.group_key
        if axis is None:
            return nest.pack_sequence_as(value, collective_ops.all_reduce(leaves, key, reduce_op.value))
        sums = [reduction_ops.reduce_sum(t, axis=axis) for t in leaves]
        if reduce_op is ReduceOp.SUM:
            return nest.pack_sequence_as(value, collective_ops.all_reduce(sums, key, "SUM"))
        counts = [math_ops.cast(array_ops.shape(t, out_type="int64")[axis], "float64") for t in leaves]
        reduced = collective_ops.all_reduce(sums + counts, key, "SUM")
        out = [math_ops.divide(s, math_ops.cast(n, s.dtype)) if s.dtype.is_floating or s.dtype.is_complex
               else math_ops.floordiv(s, math_ops.cast(n, s.dtype))
               for s, n in zip(reduced[:len(sums)], reduced[len(sums):])]
        return nest.pack_sequence_as(value, out)

    def gather(self, value, axis=0):
        """The replicas' values concatenated along ``axis`` (their sizes along it may differ)."""
        if tracing_graph() is not None:
            raise NotImplementedError("strategy.gather inside a tf.function: the result's shape depends on the "
                                      "other workers; call it outside the function.")
        backend = self._extended.backend
        leaves = [distribute_lib.as_array(v) for v in nest.flatten(value)]
        return nest.pack_sequence_as(value, [Tensor(allgather_concat(backend, a, axis)) for a in leaves])

    def experimental_local_results(self, value):
        return (value,)

    def experimental_distribute_dataset(self, dataset, options=None):
        """Each worker iterates its shard of every global batch of ``dataset``."""
        return DistributedDataset(dataset, self)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """``dataset_fn(input_context)`` builds this worker's dataset (already per-replica batches)."""
        return DatasetsFromFunction(dataset_fn, self)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def __repr__(self):
        backend = self._extended.backend
        return f"<{type(self).__name__} worker {backend.rank} of {backend.size}>"


def allgather_concat(backend, array, axis=0):
    """Every worker's ``array`` concatenated along ``axis`` in rank order (sizes along ``axis`` may differ)."""
    array = np.ascontiguousarray(np.moveaxis(array, axis, 0))
    sizes = backend.allgather(np.array([array.shape[0]], np.int64))[:, 0]
    padded = np.zeros((int(sizes.max()),) + array.shape[1:], array.dtype)
    padded[:array.shape[0]] = array
    rows = backend.allgather(padded)
    out = np.concatenate([rows[r, :int(n)] for r, n in enumerate(sizes)], axis=0)
    return np.moveaxis(out, 0, axis)


_WORLD = {}


def world_backend():
    """This process's MPI world (one per process), or a single worker when mpi4py is missing and no
    launcher started several."""
    if "backend" not in _WORLD:
        try:
            from .mpi_backend import MPIBackend
            _WORLD["backend"] = MPIBackend()
        except ImportError:
            if _launched_workers() > 1:
                raise
            _WORLD["backend"] = LocalBackend()
    return _WORLD["backend"]


def _launched_workers():
    import os
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_NTASKS"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 1


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism over the processes of an MPI job (``mpiexec -n N python train.py``).

    Every worker holds a full copy of the variables; each step, each worker runs its shard of the
    global batch and the gradients are summed over the workers (one all-reduce) before every copy
    applies the same update.
    """

    def __init__(self, cluster_resolver=None, communication_options=None):
        super().__init__(world_backend())
        rank = self._cluster_resolver.task_id
        if cluster_resolver is not None:
            workers = sum(len(v) for k, v in cluster_resolver.cluster_spec().as_dict().items()
                          if k in ("chief", "worker"))
            if workers and workers != self.num_replicas_in_sync:
                raise ValueError(f"The cluster_resolver describes {workers} workers but the MPI launcher started "
                                 f"{self.num_replicas_in_sync}.")
            if getattr(cluster_resolver, "task_id", rank) != rank:
                warnings.warn(f"The cluster_resolver says task_id={cluster_resolver.task_id}, but the MPI launcher "
                              f"made this process rank {rank}; the rank decides.", stacklevel=2)


class MirroredStrategy(Strategy):
    """One replica on this host (``devices`` are accepted; the CPU runs every op of the replica)."""

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__(LocalBackend())


class _DefaultStrategy(Strategy):
    _is_default = True

    @contextlib.contextmanager
    def scope(self):
        yield self


_DEFAULT = _DefaultStrategy()

"""Each worker's shard of every global batch.

A global batch of ``n`` rows is cut into ``size`` contiguous slices, in rank
order, of ``n // size`` or ``n // size + 1`` rows (the first ``n % size``
workers take one more): concatenating the slices of all workers gives back the
global batch, so data-parallel training sees exactly the data of one process.
"""
import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor


def shard_bounds(n, rank, size):
    """``(start, stop)`` of worker ``rank``'s rows in a global batch of ``n`` rows."""
    base, extra = divmod(int(n), int(size))
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def batch_rows(batch):
    """The number of rows of a (nested) batch; every component must have the same."""
    rows = {int(np.shape(leaf)[0]) for leaf in nest.flatten(batch)
            if np.ndim(leaf) > 0}
    if len(rows) != 1:
        raise ValueError("Cannot split a batch between workers: its components have "
                         + (f"different numbers of rows {sorted(rows)}." if rows else "no batch dimension.")
                         + " Batch the dataset (`dataset.batch(global_batch_size)`) before distributing it.")
    return rows.pop()


def local_shard(batch, rank, size):
    """This worker's rows of every component of ``batch`` (Tensors stay Tensors)."""
    start, stop = shard_bounds(batch_rows(batch), rank, size)

    def take(leaf):
        if isinstance(leaf, Tensor):
            return Tensor(np.asarray(leaf)[start:stop])
        return np.asarray(leaf)[start:stop]
    return nest.map_structure(take, batch)


class DistributedDataset:
    """``strategy.experimental_distribute_dataset(dataset)``: iterating it yields this worker's shard of
    each element (a global batch) of ``dataset``, in order."""

    def __init__(self, dataset, strategy):
        self._dataset = dataset
        self._strategy = strategy

    @property
    def element_spec(self):
        return getattr(self._dataset, "element_spec", None)

    def __iter__(self):
        backend = self._strategy.extended.backend
        for batch in self._dataset:
            yield local_shard(batch, backend.rank, backend.size)

    def reduce(self, initial_state, reduce_fn):
        state = initial_state
        for batch in self:
            state = reduce_fn(state, batch)
        return state


class InputContext:
    """What ``distribute_datasets_from_function``'s function is told: ``tf.distribute.InputContext``."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible by "
                             f"`num_replicas_in_sync` {self.num_replicas_in_sync}")
        return global_batch_size // self.num_replicas_in_sync

    def __repr__(self):
        return (f"tf.distribute.InputContext(input pipeline id {self.input_pipeline_id}, total: "
                f"{self.num_input_pipelines})")


class DatasetsFromFunction:
    """``distribute_datasets_from_function``: each worker builds (and shards) its own dataset."""

    def __init__(self, dataset_fn, strategy):
        backend = strategy.extended.backend
        self._dataset = dataset_fn(InputContext(backend.size, backend.rank, strategy.num_replicas_in_sync))

    @property
    def element_spec(self):
        return getattr(self._dataset, "element_spec", None)

    def __iter__(self):
        return iter(self._dataset)

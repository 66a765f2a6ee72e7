"""fit / evaluate / predict under a multi-worker strategy (data parallelism), as Keras does under tf.distribute.

The model remembers the strategy whose scope it was created in; its
``fit``/``evaluate``/``predict`` run inside that scope. Then:

* ``batch_size`` is the global batch: every worker takes its rows of each
  global batch (``tapeflow.distribute.input_lib.shard_bounds``); shuffling
  follows one permutation drawn by worker 0 and broadcast.
* ``compute_loss`` weighs each worker's loss by its share of the global batch
  (``rows here / rows in the global batch``), so the gradients summed by the
  optimizer are the gradients of the global batch's loss, even when the last
  batch does not split evenly.
* metric results (and the loss tracker) are computed from the metric state
  summed over the workers: every worker logs the global figures.
* non-trainable weights updated in the forward pass (BatchNorm moving
  statistics) are averaged over the workers at the end of every epoch; their
  update is affine, so this equals averaging them every step.
* predictions are gathered: every worker gets the whole output.

Only worker 0 draws progress bars and writes checkpoint files.
"""
import contextlib
import functools
import threading

import numpy as np

from tapeflow.distribute import distribute_lib
from tapeflow.distribute.collective_backend import SUM
from tapeflow.distribute.input_lib import batch_rows, shard_bounds
from tapeflow.distribute.strategy import allgather_concat
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import collective_ops, math_ops

from ..utils import tree
from .data_adapter import ArrayDataAdapter, epoch_order, unpack_x_y_sample_weight
from .step_functions import run_step

_replica = threading.local()   # this worker's share of the global batch being run


def creation_strategy():
    """Recorded by a model at construction: the strategy whose scope it is created in (or None)."""
    return distribute_lib.scope_strategy()


def _active():
    """The multi-worker strategy in force for this thread (None: one process)."""
    strategy = distribute_lib.replica_strategy() or distribute_lib.scope_strategy()
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return None
    return strategy


def in_model_scope(method):
    """Runs a model's fit/evaluate/predict inside the scope of the strategy it was created under."""
    @functools.wraps(method)
    def wrapper(model, *args, **kwargs):
        strategy = model.__dict__.get("_distribute_strategy")
        scope = strategy.scope() if strategy is not None and distribute_lib.scope_strategy() is not strategy \
            else contextlib.nullcontext()
        try:
            with scope:
                return method(model, *args, **kwargs)
        finally:
            _replica.__dict__.pop("share", None)   # the share of the last batch run
    return wrapper


def prints():
    """Only worker 0 draws progress bars."""
    return distribute_lib.is_chief()


# ---------------------------------------------------------------------- data ---
def shard(data):
    """This worker's part of every global batch of a data adapter (the adapter itself on one process)."""
    strategy = _active()
    if data is None or strategy is None:
        return data
    return _ShardedBatches(data, strategy.extended.backend)


class _ShardedBatches:
    def __init__(self, adapter, backend):
        self._adapter = adapter
        self._backend = backend
        self.num_batches = adapter.num_batches
        for name in ("num_samples", "x", "y", "sample_weight", "batch_size"):
            if hasattr(adapter, name):
                setattr(self, name, getattr(adapter, name))

    def __iter__(self):
        rank, size = self._backend.rank, self._backend.size
        source = self._array_batches() if isinstance(self._adapter, ArrayDataAdapter) else self._sliced()
        for step, (rows, batch) in enumerate(source):
            if step == 0 and rows < size:
                raise ValueError(f"The first global batch has {rows} rows, fewer than the {size} workers: every "
                                 "worker needs data to build its model, metrics and optimizer. Use a larger "
                                 "`batch_size` (it is the global batch, split between the workers).")
            start, stop = shard_bounds(rows, rank, size)
            _replica.share = (stop - start) / rows
            yield batch

    def _sliced(self):
        rank, size = self._backend.rank, self._backend.size
        for batch in self._adapter:
            rows = batch_rows([leaf for leaf in batch if leaf is not None])
            start, stop = shard_bounds(rows, rank, size)
            yield rows, tuple(None if part is None else tree.map_structure(
                lambda t: Tensor(np.asarray(t)[start:stop]), part) for part in batch)

    def _array_batches(self):
        adapter, backend = self._adapter, self._backend
        n, bs = adapter.num_samples, adapter.batch_size
        order = None
        if adapter.shuffle and adapter.shuffle != "batch":
            order = epoch_order(n).astype(np.int64) if backend.rank == 0 \
                else np.empty(n, np.int64)
            backend.broadcast(order, root=0)
        for b in range(adapter.num_batches):
            first, last = b * bs, min(n, (b + 1) * bs)
            start, stop = shard_bounds(last - first, backend.rank, backend.size)
            index = slice(first + start, first + stop) if order is None else order[first + start:first + stop]

            def take(a, index=index):
                return Tensor(a[index])
            yield last - first, tuple(None if part is None else tree.map_structure(take, part)
                                      for part in (adapter.x, adapter.y, adapter.sample_weight))


# ---------------------------------------------------------------------- loss ---
def _splits_loss(model):
    strategy = _active() or model.__dict__.get("_distribute_strategy")
    return strategy is not None and strategy.num_replicas_in_sync > 1


def _hold_share(model):
    """Before a step of fit/evaluate runs (eagerly): this worker's share of the global batch goes into a
    variable of the model, which the step's loss scaling reads, so a traced step uses each call's share."""
    share = getattr(_replica, "share", None)
    if share is None or not _splits_loss(model):
        return
    variable = model.__dict__.get("_batch_share")
    if variable is None:    # every worker creates it at the same (first) step
        variable = model.__dict__["_batch_share"] = Variable(share, trainable=False, name="batch_share",
                                                              dtype="float64")
    variable.assign(share)


def _share(model):
    """The share of the global batch this worker's loss stands for (None on one worker): the share held
    for the step of fit/evaluate being run, else (a custom loop, each worker with a batch of its own)
    1 / number of workers, as Keras."""
    if not _splits_loss(model):
        return None
    if getattr(_replica, "share", None) is not None and "_batch_share" in model.__dict__:
        return model.__dict__["_batch_share"]
    strategy = _active() or model.__dict__.get("_distribute_strategy")
    return 1.0 / strategy.num_replicas_in_sync


def scale_loss(model, loss):
    """The loss this worker differentiates: its share of the global batch's loss."""
    share = _share(model)
    if share is None:
        return loss
    return math_ops.multiply(loss, math_ops.cast(share, loss.dtype))


def unscale_loss(model, loss):
    """The worker's own mean loss again (for the loss tracker, whose state is summed over workers)."""
    share = _share(model)
    if share is None:
        return loss
    return math_ops.divide(loss, math_ops.cast(share, loss.dtype))


def train_step(model, data):
    """``model.train_step(data)``; a worker whose shard of a short last batch is empty still joins the
    step's all-reduce (with zero gradients) so that every worker applies the same update."""
    _hold_share(model)
    if _active() is None or batch_rows(unpack_x_y_sample_weight(data)[0]) > 0:
        return run_step(model, "train", data)
    if type(model).train_step is not _default_train_step():
        raise ValueError("A global batch has fewer rows than there are workers, so this worker's shard is empty, "
                         "and the model overrides `train_step`. Choose a `batch_size` (and number of samples) "
                         "that gives every worker at least one row of every batch.")
    variables = model.trainable_weights
    if variables:
        zeros = [np.zeros(tuple(v.shape), v.dtype._np) for v in variables]
        model.optimizer.apply_gradients(zip(zeros, variables))
    return model.get_metrics_result()


def test_step(model, data):
    """``model.test_step(data)``; a worker with an empty shard only joins the metric reduction."""
    _hold_share(model)
    if _active() is None or batch_rows(unpack_x_y_sample_weight(data)[0]) > 0:
        return run_step(model, "test", data)
    return model.get_metrics_result()


def _default_train_step():
    from .trainer import Trainer
    return Trainer.train_step


# ------------------------------------------------------------------- metrics ---
@contextlib.contextmanager
def global_metric_state(model):
    """While open, the model's metric variables hold their sums over the workers (their
    'mean'-aggregated ones, the average); the workers' own states come back afterwards. Written with
    ops (reads, an all-reduce, assigns), so a traced step reduces the state of each call."""
    strategy = _active() or model.__dict__.get("_distribute_strategy")
    variables = [] if strategy is None or strategy.num_replicas_in_sync == 1 else \
        [v for m in model.metrics for v in m.variables]
    if not variables:
        yield
        return
    local = [v.read_value() for v in variables]
    summed = collective_ops.all_reduce(local, strategy.extended.group_key, "SUM")
    workers = strategy.num_replicas_in_sync
    for v, total in zip(variables, summed):
        if str(getattr(v, "aggregation", "sum")).lower().endswith("mean"):
            count = math_ops.cast(workers, total.dtype)
            total = math_ops.divide(total, count) if total.dtype.is_floating else math_ops.floordiv(total, count)
        v.assign(total)
    try:
        yield
    finally:
        for v, value in zip(variables, local):
            v.assign(value)


# ------------------------------------------------------------------- weights ---
def average_non_trainable(model):
    """Averages the floating-point non-trainable weights over the workers; weights equal on every
    worker keep their exact value (the average is taken as worker 0's value plus the mean difference)."""
    strategy = _active()
    if strategy is None:
        return
    variables = [v for v in model.non_trainable_weights if v.dtype._np.kind == "f"]
    if not variables:
        return
    backend = strategy.extended.backend
    values = [np.array(v.numpy(), copy=True) for v in variables]
    reference = distribute_lib.broadcast_arrays(backend, values, root=0)
    deltas = distribute_lib.allreduce_arrays(backend, [v - r for v, r in zip(values, reference)], SUM)
    for variable, r, d in zip(variables, reference, deltas):
        variable.assign(r + d / d.dtype.type(backend.size))


# ------------------------------------------------------------------- predict ---
def gather_batch(outputs):
    """Every worker's rows of a predicted batch, in rank order (the whole global batch everywhere)."""
    strategy = _active()
    if strategy is None:
        return outputs
    backend = strategy.extended.backend
    return tree.map_structure(lambda a: allgather_concat(backend, np.asarray(a), 0), outputs)

"""Losses of a replica, scaled so that summing them (and their gradients) over replicas gives the
global batch's figures: ``tf.nn.compute_average_loss`` and ``tf.nn.scale_regularization_loss``."""
import numpy as np

from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.ops import array_ops, math_ops, reduction_ops

from . import distribute_lib


def _num_replicas():
    strategy = distribute_lib.replica_strategy() or distribute_lib.scope_strategy()
    return 1 if strategy is None else strategy.num_replicas_in_sync


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """``sum(per_example_loss * sample_weight) / global_batch_size``; without ``global_batch_size``, the
    replica's batch size times the number of replicas."""
    loss = convert_to_tensor(per_example_loss)
    if loss.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError(f"`per_example_loss` must be a floating-point tensor, got {loss.dtype.name}.")
    if sample_weight is not None:
        loss = math_ops.multiply(loss, math_ops.cast(convert_to_tensor(sample_weight), loss.dtype))
    total = reduction_ops.reduce_sum(loss)
    if global_batch_size is None:
        rows = 1 if not loss.shape.rank else loss.shape[0]
        if rows is None:    # a traced step with an unknown batch size: the size of each call's batch
            rows = array_ops.shape(loss)[0]
        global_batch_size = rows * _num_replicas()
    if isinstance(global_batch_size, (int, float, np.integer, np.floating)) and (
            int(global_batch_size) != global_batch_size or global_batch_size <= 0):
        raise ValueError(f"`global_batch_size` must be a positive integer. Received: {global_batch_size!r}")
    return math_ops.divide(total, math_ops.cast(convert_to_tensor(global_batch_size), loss.dtype))


def scale_regularization_loss(regularization_loss):
    """``regularization_loss / num_replicas_in_sync`` (summed over replicas it counts once)."""
    if isinstance(regularization_loss, (list, tuple)):
        loss = math_ops.add_n([convert_to_tensor(v) for v in regularization_loss])
    else:
        loss = convert_to_tensor(regularization_loss)
    return math_ops.divide(loss, math_ops.cast(convert_to_tensor(_num_replicas()), loss.dtype))

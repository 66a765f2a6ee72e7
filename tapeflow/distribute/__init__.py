"""tf.distribute: data-parallel training over the processes of an MPI job.

``MultiWorkerMirroredStrategy`` (launch with ``mpiexec -n N python train.py``),
``MirroredStrategy`` and the default strategy, with TensorFlow's API
(``scope``, ``run``, ``reduce``, ``experimental_distribute_dataset``, ...);
Horovod-style helpers for hand-written loops (``rank``, ``size``,
``allreduce``, ``broadcast_variables``). mpi4py is imported only when a
multi-worker strategy (or a helper) first needs it.
"""
from .collectives import (allgather, allreduce, barrier, broadcast, broadcast_variables, is_chief, rank,  # noqa: F401
                          size)
from .cluster_resolver import ClusterSpec, MPIClusterResolver  # noqa: F401
from .distribute_lib import ReduceOp, replica_strategy as _replica_strategy, scope_strategy as _scope_strategy
from .input_lib import InputContext  # noqa: F401
from .strategy import (MirroredStrategy, MultiWorkerMirroredStrategy, ReplicaContext, Strategy,  # noqa: F401
                       _DEFAULT)

__all__ = ["MirroredStrategy", "MultiWorkerMirroredStrategy", "Strategy", "ReduceOp", "InputContext",
           "get_strategy", "has_strategy", "in_cross_replica_context", "get_replica_context",
           "rank", "size", "is_chief", "allreduce", "allgather", "broadcast", "broadcast_variables", "barrier"]


def get_strategy():
    """The strategy of the enclosing ``scope()`` or ``run``, else the default (one-process) strategy."""
    return _replica_strategy() or _scope_strategy() or _DEFAULT


def has_strategy():
    """True inside a non-default strategy's ``scope()``."""
    return (_replica_strategy() or _scope_strategy()) is not None


def in_cross_replica_context():
    """True inside a ``scope()`` but outside ``run``."""
    return _replica_strategy() is None and _scope_strategy() is not None


def get_replica_context():
    """The replica context inside ``run`` (or outside any scope: the default one); None in a cross-replica
    context."""
    if in_cross_replica_context():
        return None
    return ReplicaContext(get_strategy())


class experimental:  # noqa: N801  (tf.distribute.experimental namespace)
    """``tf.distribute.experimental``: the names TF code passes to the strategies."""

    MultiWorkerMirroredStrategy = MultiWorkerMirroredStrategy

    class CommunicationImplementation:
        AUTO = "AUTO"
        RING = "RING"
        NCCL = "NCCL"

    class CommunicationOptions:
        def __init__(self, bytes_per_pack=0, timeout_seconds=None, implementation="AUTO"):
            self.bytes_per_pack = bytes_per_pack
            self.timeout_seconds = timeout_seconds
            self.implementation = implementation

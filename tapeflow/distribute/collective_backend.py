"""The collective operations a strategy needs, on numpy buffers, and the one-process engine.

An engine (``MPIBackend`` in ``mpi_backend``; another could plug in later) gives
every worker its ``rank`` among ``size`` workers and six collectives. Buffers
are contiguous numpy arrays; ``allreduce`` and ``broadcast`` work in place so
that a step's gradients travel in the buffer they were packed into.
"""
import numpy as np

SUM = "sum"
MAX = "max"
MIN = "min"


class CollectiveBackend:
    """The interface: every worker calls the same collectives in the same order."""

    rank = 0
    size = 1

    def allreduce(self, buffer, op=SUM):
        """Replaces ``buffer`` on every worker by the element-wise ``op`` over all workers."""
        raise NotImplementedError

    def broadcast(self, buffer, root=0):
        """Overwrites ``buffer`` on every worker with the one of worker ``root``."""
        raise NotImplementedError

    def allgather(self, buffer):
        """A new array ``(size, *buffer.shape)``: row ``r`` is worker ``r``'s buffer (same shape everywhere)."""
        raise NotImplementedError

    def reduce_scatter(self, buffer, op=SUM):
        """Worker ``r`` receives block ``r`` (of ``size`` equal blocks of ``buffer``'s first axis),
        reduced over all workers."""
        raise NotImplementedError

    def barrier(self):
        raise NotImplementedError

    def abort(self, code=1):
        """Ends every worker of the job now (a failed worker must not leave the others waiting)."""
        raise SystemExit(code)


def check_buffer(buffer, what):
    if not isinstance(buffer, np.ndarray) or not buffer.flags.c_contiguous:
        raise TypeError(f"{what} needs a C-contiguous numpy array, got {type(buffer).__name__}"
                        + ("" if not isinstance(buffer, np.ndarray) else " that is not contiguous"))
    if not buffer.flags.writeable:
        raise ValueError(f"{what} writes its result into the buffer, which is read-only.")


def blocks_of(buffer, size, what):
    if buffer.ndim == 0 or buffer.shape[0] % size:
        raise ValueError(f"{what}: the first axis ({buffer.shape[0] if buffer.ndim else 'scalar'}) must split into "
                         f"{size} equal blocks, one per worker.")
    return buffer.shape[0] // size


class LocalBackend(CollectiveBackend):
    """One worker: every collective is the identity (the default strategy, MirroredStrategy on one host)."""

    def allreduce(self, buffer, op=SUM):
        check_buffer(buffer, "allreduce")
        return buffer

    def broadcast(self, buffer, root=0):
        check_buffer(buffer, "broadcast")
        if root != 0:
            raise ValueError(f"broadcast from worker {root}: this job has a single worker (rank 0).")
        return buffer

    def allgather(self, buffer):
        return np.ascontiguousarray(buffer)[None].copy()

    def reduce_scatter(self, buffer, op=SUM):
        blocks_of(buffer, 1, "reduce_scatter")
        return np.array(buffer, copy=True)

    def barrier(self):
        pass

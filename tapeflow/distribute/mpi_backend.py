"""The MPI engine, through mpi4py's buffer calls (upper-case: no pickling, no copies of our own).

mpi4py is imported when the first multi-worker strategy is created, never by
``import tapeflow``. The job is whatever launched this process: ``mpiexec``,
``srun``, or a plain ``python`` (one worker).

A worker that dies of an uncaught exception ends the whole job through
``MPI_Abort``: the other workers are blocked in a collective and would wait
for it forever.
"""
import sys
import time

import numpy as np

from .collective_backend import MAX, MIN, SUM, CollectiveBackend, blocks_of, check_buffer

_INSTALL_HINT = ("Multi-worker training needs mpi4py: `pip install tapeflow[distributed]` (and an MPI: the one of "
                 "your cluster, or `pip install mpich` on a single machine).")


def import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"{_INSTALL_HINT} ({e})") from e
    return MPI


class MPIBackend(CollectiveBackend):
    def __init__(self, comm=None):
        MPI = import_mpi()
        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._ops = {SUM: MPI.SUM, MAX: MPI.MAX, MIN: MPI.MIN}
        if self.size > 1:
            _abort_job_on_uncaught_exception(self)

    def _op(self, op):
        try:
            return self._ops[op]
        except KeyError:
            raise ValueError(f"Unknown reduction {op!r}; expected one of {sorted(self._ops)}.") from None

    def allreduce(self, buffer, op=SUM):
        check_buffer(buffer, "allreduce")
        self.comm.Allreduce(self._MPI.IN_PLACE, buffer, op=self._op(op))
        return buffer

    def broadcast(self, buffer, root=0):
        check_buffer(buffer, "broadcast")
        self.comm.Bcast(buffer, root=root)
        return buffer

    def allgather(self, buffer):
        buffer = np.ascontiguousarray(buffer)
        out = np.empty((self.size,) + buffer.shape, buffer.dtype)
        self.comm.Allgather(buffer, out)
        return out

    def reduce_scatter(self, buffer, op=SUM):
        buffer = np.ascontiguousarray(buffer)
        block = blocks_of(buffer, self.size, "reduce_scatter")
        out = np.empty((block,) + buffer.shape[1:], buffer.dtype)
        self.comm.Reduce_scatter_block(buffer, out, op=self._op(op))
        return out

    def barrier(self):
        self.comm.Barrier()

    def abort(self, code=1):
        self.comm.Abort(code)


def _abort_job_on_uncaught_exception(backend):
    previous = sys.excepthook
    if getattr(previous, "_tapeflow_aborts", False):
        return

    def excepthook(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stderr.write(f"tapeflow.distribute: worker {backend.rank} of {backend.size} stopped on an uncaught "
                         f"{kind.__name__}; aborting the whole MPI job so that the other workers do not wait "
                         "for it.\n")
        sys.stderr.flush()
        time.sleep(0.3)   # the launcher forwards our output asynchronously; MPI_Abort would cut it short
        backend.abort(1)

    excepthook._tapeflow_aborts = True
    sys.excepthook = excepthook

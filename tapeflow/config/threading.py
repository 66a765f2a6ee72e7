"""tf.config.threading: how many threads one op may use (numba kernels and BLAS).

``0`` means "let the system choose" (every CPU), as in TensorFlow.
"""
_intra = [0]
_inter = [0]


def set_intra_op_parallelism_threads(num_threads):
    num_threads = int(num_threads)
    if num_threads < 0:
        raise ValueError(f"num_threads must be >= 0, got {num_threads}")
    import numba
    from threadpoolctl import threadpool_limits
    from ..kernels import optimizers as optimizer_kernels
    limit = numba.config.NUMBA_NUM_THREADS if num_threads == 0 else min(num_threads, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(limit)
    optimizer_kernels.MAX_THREADS = None if num_threads == 0 else limit
    threadpool_limits(limits=None if num_threads == 0 else num_threads, user_api="blas")
    _intra[0] = num_threads


def get_intra_op_parallelism_threads():
    return _intra[0]


def set_inter_op_parallelism_threads(num_threads):
    """Ops run one after the other in tapeflow; the value is kept for get_inter_op_parallelism_threads."""
    _inter[0] = int(num_threads)


def get_inter_op_parallelism_threads():
    return _inter[0]

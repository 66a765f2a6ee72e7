"""Fused optimizer update kernels.

Each kernel updates a variable and its slot arrays in place, in one pass over
memory: every array is read once and written once per step. The arrays are
flat, contiguous, 1-D and of one float dtype (float32 or float64); scalars
come in that same dtype (``np.float32`` / ``np.float64``), so every operation
rounds exactly as the separate elementwise ops of Keras do. Never mix in
Python literals (``1.0``, ``1``): numba would promote float32 arithmetic to
float64 and the results would no longer match Keras bit for bit.

Every update kernel takes, after its arrays, ``decay, wd, lr``: when
``decay`` is true the decoupled weight decay of Keras, ``w - w * wd * lr``,
is applied to the element before the update itself (it is the same
arithmetic as a separate pass, without reading and writing ``w`` twice).

``error_model="numpy"``: a division by zero gives inf/nan as IEEE (and
TensorFlow) say, instead of a Python ZeroDivisionError check in the loop,
which would also stop LLVM from vectorizing it.

Kernels compile on first use (``cache=True`` keeps the machine code between
processes); importing this module compiles nothing.

``run`` calls a kernel; a large array is cut into contiguous chunks updated
by several threads at once (the kernels release the GIL). One core alone
cannot saturate the memory bus, and every element is independent, so the
result is the same bit for bit. Python threads rather than numba's
``parallel=True``: no OpenMP runtime, so a process that forks after
training (multiprocessing) stays safe.
"""
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from numba import config, njit

# Below this many elements one thread is faster than handing out work.
PARALLEL_MIN_SIZE = 1 << 18
# Most threads one update uses; None: NUMBA_NUM_THREADS (the number of CPUs unless set).
MAX_THREADS = None
_CHUNK_ALIGN = 64          # elements; chunk boundaries on cache-line multiples
_pool = [None, None]       # (executor, pid that created it)
_pool_lock = threading.Lock()


def _executor(workers):
    with _pool_lock:
        pool, pid = _pool
        if pool is None or pid != os.getpid() or pool._max_workers < workers:  # a forked child needs its own
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tapeflow-optimizer")
            _pool[0], _pool[1] = pool, os.getpid()
        return pool


def run(kernel, arrays, scalars, threads=None):
    """``kernel(*arrays, *scalars)``; arrays of ``PARALLEL_MIN_SIZE`` elements or
    more are split into one contiguous chunk per thread (``threads`` defaults to
    ``MAX_THREADS``). Arrays of another size (empty scratch) are passed whole."""
    n = arrays[0].size
    if threads is None:
        threads = config.NUMBA_NUM_THREADS if MAX_THREADS is None else MAX_THREADS
    threads = min(threads, n // (PARALLEL_MIN_SIZE // 4))
    if n < PARALLEL_MIN_SIZE or threads < 2:
        kernel(*arrays, *scalars)
        return
    step = -(-n // threads)
    step += -step % _CHUNK_ALIGN
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
    pool = _executor(len(bounds) - 1)
    futures = [pool.submit(kernel, *[a[lo:hi] if a.size == n else a for a in arrays], *scalars)
               for lo, hi in bounds[1:]]
    lo, hi = bounds[0]
    kernel(*[a[lo:hi] if a.size == n else a for a in arrays], *scalars)
    for future in futures:
        future.result()


@njit(cache=True, nogil=True, error_model="numpy")
def sgd(w, g, decay, wd, lr):
    for i in range(w.size):
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - g[i] * lr


@njit(cache=True, nogil=True, error_model="numpy")
def sgd_momentum(w, g, m, decay, wd, lr, momentum, nesterov):
    for i in range(w.size):
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        step = g[i] * lr
        mi = m[i] * momentum - step
        m[i] = mi
        if nesterov:
            w[i] = wi + (mi * momentum - step)
        else:
            w[i] = wi + mi


@njit(cache=True, nogil=True, error_model="numpy")
def adam(w, g, m, v, decay, wd, lr, alpha, c1, c2, eps):
    for i in range(w.size):
        gi = g[i]
        mi = m[i]
        vi = v[i]
        mi = mi + (gi - mi) * c1
        vi = vi + (gi * gi - vi) * c2
        m[i] = mi
        v[i] = vi
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - (mi * alpha) / (math.sqrt(vi) + eps)


@njit(cache=True, nogil=True, error_model="numpy")
def adam_amsgrad(w, g, m, v, vhat, decay, wd, lr, alpha, c1, c2, eps):
    for i in range(w.size):
        gi = g[i]
        mi = m[i]
        vi = v[i]
        mi = mi + (gi - mi) * c1
        vi = vi + (gi * gi - vi) * c2
        m[i] = mi
        v[i] = vi
        vh = max(vhat[i], vi)
        vhat[i] = vh
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - (mi * alpha) / (math.sqrt(vh) + eps)


@njit(cache=True, nogil=True, error_model="numpy")
def rmsprop(w, g, v, mom, avg, decay, wd, lr, rho, c, eps, momentum, use_momentum, centered):
    """``mom`` / ``avg`` are only touched when ``use_momentum`` / ``centered``."""
    for i in range(w.size):
        gi = g[i]
        vi = rho * v[i] + c * (gi * gi)
        v[i] = vi
        if centered:
            ai = rho * avg[i] + c * gi
            avg[i] = ai
            denom = vi - ai * ai + eps
        else:
            denom = vi + eps
        inc = (lr * gi) / math.sqrt(denom)
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        if use_momentum:
            mi = momentum * mom[i] + inc
            mom[i] = mi
            w[i] = wi - mi
        else:
            w[i] = wi - inc


@njit(cache=True, nogil=True, error_model="numpy")
def adagrad(w, g, acc, decay, wd, lr, eps):
    for i in range(w.size):
        gi = g[i]
        ai = acc[i] + gi * gi
        acc[i] = ai
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - (lr * gi) / math.sqrt(ai + eps)


@njit(cache=True, nogil=True, error_model="numpy")
def adadelta(w, g, acc_grad, acc_delta, decay, wd, lr, rho, c, eps):
    for i in range(w.size):
        gi = g[i]
        ag = rho * acc_grad[i] + c * (gi * gi)
        acc_grad[i] = ag
        ad = acc_delta[i]
        delta = -((math.sqrt(ad + eps) * gi) / math.sqrt(ag + eps))
        acc_delta[i] = rho * ad + c * (delta * delta)
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi + lr * delta


@njit(cache=True, nogil=True, error_model="numpy")
def adamax(w, g, m, u, decay, wd, lr, c1, beta_2, eps, bias):
    """``bias`` is ``1 - beta_1 ** t``."""
    for i in range(w.size):
        gi = g[i]
        mi = m[i] + (gi - m[i]) * c1
        m[i] = mi
        ui = max(beta_2 * u[i], abs(gi))
        u[i] = ui
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - (lr * mi) / (bias * (ui + eps))


@njit(cache=True, nogil=True, error_model="numpy")
def nadam(w, g, m, v, decay, wd, lr, c1, c2, eps, u_next, one_minus_u, one_minus_prod_next,
          one_minus_prod, one_minus_b2_power):
    for i in range(w.size):
        gi = g[i]
        mi = m[i] + (gi - m[i]) * c1
        vi = v[i] + (gi * gi - v[i]) * c2
        m[i] = mi
        v[i] = vi
        m_hat = (u_next * mi) / one_minus_prod_next + (one_minus_u * gi) / one_minus_prod
        v_hat = vi / one_minus_b2_power
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        w[i] = wi - (m_hat * lr) / (math.sqrt(v_hat) + eps)


@njit(cache=True, nogil=True, error_model="numpy")
def lion(w, g, m, decay, wd, lr, beta_1, c1, beta_2, c2):
    for i in range(w.size):
        gi = g[i]
        mi = m[i]
        u = mi * beta_1 + gi * c1
        wi = w[i]
        if decay:
            wi = wi - wi * wd * lr
        if u > 0:
            wi = wi - lr
        elif u < 0:
            wi = wi + lr
        else:  # sign(0) = 0 leaves w alone; sign(nan) = nan poisons it, as in Keras
            wi = wi - lr * (u - u)
        w[i] = wi
        m[i] = mi * beta_2 + gi * c2


@njit(cache=True, nogil=True, error_model="numpy")
def ema(average, w, momentum, one_minus_momentum):
    """average = momentum * average + (1 - momentum) * w."""
    for i in range(w.size):
        average[i] = momentum * average[i] + one_minus_momentum * w[i]


@njit(cache=True, nogil=True, error_model="numpy")
def accumulate(acc, g):
    for i in range(acc.size):
        acc[i] = g[i] + acc[i]

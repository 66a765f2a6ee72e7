"""numba kernels of the shuffle buffer on int64 row indices (compiled on first use, cached on disk)."""
import numpy as np
from numba import njit


@njit(cache=True)
def shuffle_steady(buffer, incoming, raws, out):
    """While input lasts: output k is drawn from the full buffer and its slot takes incoming[k]."""
    size = np.uint64(buffer.shape[0])
    for k in range(incoming.shape[0]):
        slot = np.int64(raws[k] % size)
        out[k] = buffer[slot]
        buffer[slot] = incoming[k]


@njit(cache=True)
def shuffle_drain(buffer, raws, out):
    """After the input: each draw's slot takes the buffer's last element and the buffer shrinks."""
    n = buffer.shape[0]
    for k in range(n):
        size = n - k
        slot = np.int64(raws[k] % np.uint64(size))
        out[k] = buffer[slot]
        buffer[slot] = buffer[size - 1]

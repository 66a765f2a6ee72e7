"""numba kernels of the shuffle buffer on int64 row indices (compiled on first use, cached on disk)."""
import numpy as np
from numba import njit


@njit(cache=True)
def shuffle_steady(ring, start, incoming, words, out):
    """While input lasts (the ring full, its run starting at slot ``start``): output k is the run's slot at
    offset words[k] % size, which takes the run's first element; incoming[k] then enters at the run's end
    (the first slot, freed). Returns the next run start."""
    size = ring.shape[0]
    for k in range(incoming.shape[0]):
        slot = (start + np.int64(words[k] % np.uint64(size))) % size
        out[k] = ring[slot]
        ring[slot] = ring[start]
        ring[start] = incoming[k]
        start = (start + 1) % size
    return start


@njit(cache=True)
def shuffle_drain(ring, start, words, out):
    """After the input: each output is the run's slot at offset words[k] % (run length), which takes the run's
    first element; the run then starts one slot later."""
    size = ring.shape[0]
    for k in range(size):
        length = size - k
        first = (start + k) % size
        slot = (first + np.int64(words[k] % np.uint64(length))) % size
        out[k] = ring[slot]
        ring[slot] = ring[first]

"""The fast path of in-memory pipelines: elements as rows gathered by index.

A source whose elements are rows of arrays (``from_tensor_slices``,
``range``) offers an IndexPlan: a ``gather(indices)`` that returns the rows
stacked along a new first axis, and ``chunks()``, one iteration's stream of
row indices (int64 arrays). Order-only transformations (shuffle, repeat,
take, skip) transform that stream and keep the plan, so ``batch`` over such
a pipeline gathers each batch with one fancy index per array instead of
stacking elements one by one. That the plan applies is decided by the
pipeline's structure alone: every node either transforms the index stream
exactly as its element-wise version transforms elements, or offers no plan.
"""
import numpy as np

CHUNK = 1 << 16


class IndexPlan:
    __slots__ = ("gather", "chunks")

    def __init__(self, gather, chunks):
        self.gather = gather    # int64 index array -> element structure of stacked rows
        self.chunks = chunks    # () -> iterator of int64 index arrays: one iteration, in element order


def arange_chunks(n):
    for start in range(0, n, CHUNK):
        yield np.arange(start, min(n, start + CHUNK), dtype=np.int64)


def take_chunks(chunks, count):
    """The first ``count`` indices (all of them when count is -1)."""
    if count < 0:
        yield from chunks
        return
    if count == 0:
        return                  # as the element-wise take(0): the input is never started
    left = count
    for chunk in chunks:
        if len(chunk) >= left:
            yield chunk[:left]
            return
        left -= len(chunk)
        yield chunk


def skip_chunks(chunks, count):
    """All but the first ``count`` indices (none when count is -1)."""
    if count < 0:
        for _ in chunks:
            pass
        return
    left = count
    for chunk in chunks:
        if left >= len(chunk):
            left -= len(chunk)
            continue
        yield chunk[left:]
        left = 0


def batch_indices(chunks, batch_size, drop_remainder):
    """The index stream cut into arrays of ``batch_size`` (the last may be shorter)."""
    pending = []
    pending_size = 0
    for chunk in chunks:
        if pending_size + len(chunk) < batch_size:
            pending.append(chunk)
            pending_size += len(chunk)
            continue
        stream = np.concatenate(pending + [chunk]) if pending else chunk
        full = len(stream) // batch_size * batch_size
        for start in range(0, full, batch_size):
            yield stream[start:start + batch_size]
        pending = [stream[full:]] if full < len(stream) else []
        pending_size = len(stream) - full
    if pending_size and not drop_remainder:
        yield np.concatenate(pending)

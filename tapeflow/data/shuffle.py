"""shuffle: TensorFlow's buffer, seeds and random stream, so a seeded pipeline gives TensorFlow's order.

The buffer is a ring of ``buffer_size`` slots holding a run [start, end) of the input. Each output picks
offset ``word % (end - start)`` of the run, swaps that slot with the run's first and hands it out; the next
input element then enters at the end. ``word`` is the pass's next 32-bit word of the Philox stream keyed by
the pass's seeds (seed, seed2): with ``reshuffle_each_iteration``, pass k of the dataset takes words 2k and
2k+1 of the stream keyed by the dataset's own seeds (TensorFlow's seed generator); without, the dataset's
seeds themselves. The dataset's seeds follow TensorFlow's rules (``random_ops.seed_pair``).

The same algorithm runs on Python elements (``_shuffle_elements``) and, for an IndexPlan, on int64 row
indices in numba kernels (``_shuffle_chunks``): both consume one word per output, so they give one order.
"""
import contextlib
import itertools
import threading

import numpy as np

from .dataset import Dataset
from .index_plan import IndexPlan

_WORD_BLOCK = 1024


def seed_material(seed):
    """The dataset's (seed, seed2), by TensorFlow's global and op seed rules (random ones when neither is set)."""
    from ..ops import random_ops
    if hasattr(seed, "_value"):
        seed = seed._value
    return random_ops.seed_pair(None if seed is None else int(seed))


class PhiloxWords:
    """The 32-bit words of the Philox stream keyed by ``seed`` with ``seed2`` as the counter's high half, in
    order (TensorFlow's PhiloxRandom(seed, seed2) read one word at a time)."""

    def __init__(self, seed, seed2):
        self.key, self.high = np.uint64(seed % 2 ** 64), np.uint64(seed2 % 2 ** 64)
        self.block = 0          # the next chunk's first Philox block
        self.pending = np.empty(0, np.uint64)

    def take(self, n):
        """The next n words (as uint64)."""
        from ..kernels import philox
        parts, have = [self.pending], len(self.pending)
        while have < n:
            words = np.empty(_WORD_BLOCK, np.uint32)
            philox.fill_words(self.key, np.uint64(self.block), self.high, words)
            self.block += _WORD_BLOCK // 4
            parts.append(words.astype(np.uint64))
            have += _WORD_BLOCK
        words = np.concatenate(parts)
        self.pending = words[n:]
        return words[:n]

    def __iter__(self):
        while True:
            yield from self.take(_WORD_BLOCK).tolist()


class IterationSeeds:
    """The seeds of a random node and the numbering of its passes.

    Pass k of the node (k counts the passes of every iterator over it, in the order they start, as
    TensorFlow's seed generator does) draws from seeds derived from the node's seeds and k; without
    reshuffling, from the node's seeds alone. An iterator claims the number of its first pass when it is
    made (``claim_serial``) and numbers its later passes on from there; it is the active one while it pulls
    (``active``), so its draws depend on nothing but its own history: a checkpoint records that first number
    and replays the same draws (iterator_state.py).
    """

    def __init__(self, seed, reshuffle):
        self.material = seed_material(seed)
        self.reshuffle = bool(reshuffle)
        self.next_serial = 0

    def claim_serial(self):
        serial, self.next_serial = self.next_serial, self.next_serial + 1
        return serial

    def _pass_number(self):
        state = active.state
        position = state.pass_of(self) if state is not None else None
        if position is None:
            return self.claim_serial()
        first, number = position
        self.next_serial = max(self.next_serial, first + number + 1)
        return first + number

    def generator(self):
        """A numpy generator for one pass (sampling nodes: their own streams, not TensorFlow's)."""
        words = list(self.material)
        if self.reshuffle:
            words += [self._pass_number(), 0]
        return np.random.Generator(np.random.PCG64(words))

    def words(self):
        """The Philox words of one pass, as TensorFlow's shuffle draws them."""
        seed, seed2 = self.material
        if self.reshuffle:
            k = self._pass_number()
            pair = PhiloxWords(seed, seed2).take(2 * k + 2)
            seed, seed2 = int(pair[2 * k]), int(pair[2 * k + 1])
        return PhiloxWords(seed, seed2)

    def fingerprint(self):
        """A number identifying the seed (an iterator checkpoint checks it before replaying)."""
        import zlib
        return zlib.crc32(repr((self.material, self.reshuffle)).encode())


class _Active(threading.local):
    state = None     # the IteratorState of the iterator pulling on this thread


active = _Active()


@contextlib.contextmanager
def pulling_for(state):
    """Marks ``state``'s iterator as the one this thread pulls for."""
    saved, active.state = active.state, state
    try:
        yield
    finally:
        active.state = saved


class ShuffleDataset(Dataset):
    _tf_name = "_ShuffleDataset"

    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        from ..framework.errors import InvalidArgumentError
        if buffer_size <= 0:
            raise InvalidArgumentError("buffer_size must be greater than zero.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._buffer_size = buffer_size
        self._seeds = IterationSeeds(seed, reshuffle_each_iteration)

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        return self._input._cardinality()

    def _words(self):
        """The word stream of one iteration (the same one every time without reshuffling)."""
        return self._seeds.words()

    def _iterate(self):
        return _shuffle_elements(self._input, self._buffer_size, self._words)

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        return IndexPlan(plan.gather, lambda: _shuffle_chunks(plan.chunks, self._buffer_size, self._words))


def _shuffle_elements(input_dataset, buffer_size, make_words):
    elements = input_dataset._iterate()
    ring = list(itertools.islice(elements, buffer_size))    # the stream is made on the first next()
    words = iter(make_words())
    start, end = 0, len(ring)
    exhausted = end < buffer_size
    while start < end:
        size = len(ring)
        slot = (start + next(words) % (end - start)) % size
        first = start % size
        yield ring[slot]
        ring[slot] = ring[first]
        start += 1
        following = _END if exhausted else next(elements, _END)
        if following is _END:
            exhausted = True
        else:
            ring[first] = following           # the run's end slot, (start - 1 + size) % size
            end += 1


_END = object()


def _shuffle_chunks(input_chunks, buffer_size, make_words):
    from .kernels import shuffle_drain, shuffle_steady
    chunks = input_chunks()
    pending = []
    filled = 0
    chunk = None
    for chunk in chunks:                      # fill the buffer
        take = min(len(chunk), buffer_size - filled)
        pending.append(chunk[:take])
        filled += take
        chunk = chunk[take:]
        if filled == buffer_size:
            break
    words = make_words()
    ring = np.concatenate(pending) if pending else np.empty(0, np.int64)
    start = 0
    if filled == buffer_size:
        for part in itertools.chain([chunk], chunks):
            if len(part):
                out = np.empty(len(part), np.int64)
                start = shuffle_steady(ring, start, part, words.take(len(part)), out)
                yield out
    size = len(ring)
    if size:
        out = np.empty(size, np.int64)
        shuffle_drain(ring, start, words.take(size), out)
        yield out

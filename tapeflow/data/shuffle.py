"""shuffle: TensorFlow's buffer semantics.

A buffer holds the next ``buffer_size`` elements. Each output is drawn
uniformly from the buffer, and its slot is refilled with the next input
element; once the input is exhausted the slot takes the buffer's last
element and the buffer shrinks. Draw ``k`` is ``raw[k] % len(buffer)``, with
``raw`` the 64-bit stream of a PCG64 generator seeded by the dataset's seed
and (with ``reshuffle_each_iteration``) the iteration's number.

The same algorithm runs on Python elements (``_shuffle_elements``) and, for
an IndexPlan, on int64 row indices in numba kernels (``_shuffle_chunks``):
both consume the raw stream one draw per output, so they give the same order.
"""
import contextlib
import itertools
import threading

import numpy as np

from .dataset import Dataset
from .index_plan import IndexPlan

_DEFAULT_GLOBAL_SEED = 87654321   # TensorFlow's global seed when only an op seed is given
_RAW_BLOCK = 1024


def _global_seed():
    from ..ops import random_ops
    return random_ops._state["global_seed"]


def seed_material(seed):
    """The integers that seed every iteration's generator (TensorFlow's global and op seed contract)."""
    from ..ops import random_ops
    global_seed = _global_seed()
    if seed is None:
        if global_seed is None:
            return (int(np.random.SeedSequence().entropy),)
        return (global_seed, int(random_ops.get_global_generator().integers(2 ** 63)))
    if hasattr(seed, "_value"):
        seed = seed._value
    return (_DEFAULT_GLOBAL_SEED if global_seed is None else global_seed, int(seed))


class IterationSeeds:
    """The seed of a random node and the numbering of its iterations.

    Each pass (each ``_iterate`` of the node) draws from a generator seeded by
    the seed, the *serial* of the iterator it serves and the pass's number
    within that iterator; without reshuffling, by the seed alone. An iterator
    claims a serial per random node when it is made (``claim_serial``) and is
    the active one while it pulls (``active``), so its draws depend on nothing
    but its own history: a checkpoint records the serial and replays the
    same draws (iterator_state.py).
    """

    def __init__(self, seed, reshuffle):
        self.material = seed_material(seed)
        self.reshuffle = bool(reshuffle)
        self.next_serial = 0

    def claim_serial(self):
        serial, self.next_serial = self.next_serial, self.next_serial + 1
        return serial

    def generator(self):
        words = list(self.material)
        if self.reshuffle:
            state = active.state
            position = state.pass_of(self) if state is not None else None
            words += [self.claim_serial(), 0] if position is None else list(position)
        return np.random.Generator(np.random.PCG64(words))

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

    def _generator(self):
        """A fresh generator for one iteration (the same one every time without reshuffling)."""
        return self._seeds.generator()

    def _iterate(self):
        return _shuffle_elements(self._input, self._buffer_size, self._generator)

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        return IndexPlan(plan.gather, lambda: _shuffle_chunks(plan.chunks, self._buffer_size, self._generator))


def _raw_draws(bit_generator):
    while True:
        yield from bit_generator.random_raw(_RAW_BLOCK).tolist()


def _shuffle_elements(input_dataset, buffer_size, make_generator):
    elements = input_dataset._iterate()
    buffer = list(itertools.islice(elements, buffer_size))   # the generator is made on the first next()
    draws = _raw_draws(make_generator().bit_generator)
    exhausted = len(buffer) < buffer_size
    while buffer:
        slot = next(draws) % len(buffer)
        yield buffer[slot]
        following = _END if exhausted else next(elements, _END)
        if following is _END:
            exhausted = True
            buffer[slot] = buffer[-1]
            buffer.pop()
        else:
            buffer[slot] = following


_END = object()


def _shuffle_chunks(input_chunks, buffer_size, make_generator):
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
    bit_generator = make_generator().bit_generator
    buffer = np.concatenate(pending) if pending else np.empty(0, np.int64)
    if filled == buffer_size:
        for part in itertools.chain([chunk], chunks):
            if len(part):
                out = np.empty(len(part), np.int64)
                shuffle_steady(buffer, part, bit_generator.random_raw(len(part)), out)
                yield out
    size = len(buffer)
    if size:
        out = np.empty(size, np.int64)
        shuffle_drain(buffer, bit_generator.random_raw(size), out)
        yield out

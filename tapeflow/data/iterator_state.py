"""Checkpointing an iterator's position: ``tf.train.Checkpoint(iterator=iter(dataset))``.

TensorFlow saves the internal state of every node (positions, shuffle
buffers). Here the state is three kinds of numbers, kept in one int64
variable that the checkpoint saves like any other (the checkpoint calls
``_checkpoint_children`` when it saves and when it restores):

    [format version, elements consumed, then for each random node of the
     pipeline (shuffle, sample_from_datasets, ...): its seed's fingerprint
     and the serial this iterator claimed from it]

A random node's draws depend only on its seed, that serial and the pass's
number within the iterator (shuffle.IterationSeeds). Restoring rebuilds the
pipeline under the saved serials and pulls (then drops) the consumed
elements: the same draws again, so iteration continues exactly where it
stopped. A random node whose seed differs from the saved
one (an unseeded shuffle in another process) cannot be replayed exactly, so
restoring it raises an error instead. Replay costs the time of producing the
consumed elements again, and re-runs their map functions' side effects.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError

FORMAT_VERSION = 1
_HEADER = 2


def random_nodes(dataset):
    """The IterationSeeds of the pipeline's random nodes, in a fixed depth-first order."""
    seen, found = set(), []

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        seeds = getattr(node, "_seeds", None)
        if seeds is not None:
            found.append(seeds)
        for child in node._inputs:
            visit(child)
    visit(dataset)
    return found


def skip_iteration(dataset):
    """Numbers one iteration of the pipeline's random nodes without running it, as an iterator made and
    dropped unused does (Keras on TensorFlow makes two iterators each time it iterates a dataset and uses the
    first, so each epoch takes two of a shuffle's seed pairs)."""
    for seeds in random_nodes(dataset):
        seeds.claim_serial()


class IteratorState:
    """The numbers of one iterator's position, and the variable that a checkpoint saves them in."""

    def __init__(self, dataset):
        self._seeds = random_nodes(dataset)
        self._index = {id(s): k for k, s in enumerate(self._seeds)}
        self.serials = [s.claim_serial() for s in self._seeds]
        self.passes = [0] * len(self._seeds)
        self.consumed = 0
        self._variable = None
        self._written = None

    def pass_of(self, seeds):
        """(serial, pass number) for a new pass of random node ``seeds``, or None if it is not one of this
        pipeline's nodes (a dataset made by a flat_map function)."""
        k = self._index.get(id(seeds))
        if k is None:
            return None
        number, self.passes[k] = self.passes[k], self.passes[k] + 1
        return self.serials[k], number

    def _vector(self):
        numbers = [FORMAT_VERSION, self.consumed]
        for seeds, serial in zip(self._seeds, self.serials):
            numbers += [seeds.fingerprint(), serial]
        return np.array(numbers, dtype=np.int64)

    def variable(self):
        """The variable holding the current position (brought up to date: a checkpoint is reading it)."""
        from ..framework.variables import Variable
        vector = self._vector()
        if self._variable is None:
            self._variable = Variable(vector, trainable=False, name="iterator_state")
        else:
            self._variable.assign(vector)
        self._written = vector
        return self._variable

    def restored_vector(self):
        """The numbers a checkpoint restore assigned to the variable since it was last written, or None."""
        current = self._variable.numpy()
        if np.array_equal(current, self._written):
            return None
        self._written = current
        return current

    def apply(self, vector, dataset):
        """Takes a restored vector, checked against this pipeline: the position to replay to."""
        expected = _HEADER + 2 * len(self._seeds)
        if vector.shape != (expected,) or vector[0] != FORMAT_VERSION:
            raise InvalidArgumentError(f"The checkpointed iterator state {vector.tolist()} does not fit the "
                                       f"pipeline of {dataset!r} (it has {len(self._seeds)} random nodes)")
        consumed = int(vector[1])
        serials = [int(vector[_HEADER + 2 * k + 1]) for k in range(len(self._seeds))]
        if consumed < 0 or any(s < 0 for s in serials):
            raise InvalidArgumentError(f"The checkpointed iterator state {vector.tolist()} holds a negative "
                                       "position")
        for k, seeds in enumerate(self._seeds):
            if int(vector[_HEADER + 2 * k]) != seeds.fingerprint():
                raise InvalidArgumentError(
                    f"Cannot restore the iterator's position: random node {k} of the pipeline (a shuffle or "
                    "sample_from_datasets) has a different seed than when the checkpoint was saved, so its order "
                    "cannot be replayed; give it a seed (or set tf.random.set_seed) to checkpoint iterators over it")
        for seeds, serial in zip(self._seeds, serials):     # later iterators never reuse a restored serial
            seeds.next_serial = max(seeds.next_serial, serial + 1)
        self.serials, self.passes, self.consumed = serials, [0] * len(self._seeds), consumed
        return consumed

"""Iterators over a dataset: ``iter(dataset)`` and ``dataset.as_numpy_iterator()``.

``next(iterator)`` raises StopIteration at the end; ``iterator.get_next()``
raises ``tf.errors.OutOfRangeError``, as in TensorFlow. An exhausted iterator
stays exhausted. Inside a tf.function, ``next(iterator)`` is a graph op that
pulls from this iterator at each call (graph_iteration.py).
"""
from ..errors import OutOfRangeError
from ..framework.recording import tracing_graph
from . import structure
from .shuffle import active, pulling_for

_END = object()


def _tracing():
    return tracing_graph() is not None


class OwnedIterator:
    """``iter(dataset)``: yields the elements as (nested structures of) Tensors."""

    def __init__(self, dataset):
        from .iterator_state import IteratorState
        self._dataset = dataset
        self._state = IteratorState(dataset)
        with pulling_for(self._state):
            self._elements = dataset._iterate()

    # -- checkpointing (iterator_state.py) ----------------------------------
    def _checkpoint_children(self):
        return [("_iterator_state", self._state.variable())]

    def _restore_if_assigned(self):
        vector = self._state.restored_vector()
        if vector is None:
            return
        consumed = self._state.apply(vector, self._dataset)
        self._elements = self._dataset._iterate()
        for _ in range(consumed):
            if next(self._elements, _END) is _END:
                self._elements = None
                break

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def _next_element(self):
        saved, active.state = active.state, self._state    # random nodes draw for this iterator
        try:
            if self._state._variable is not None:
                self._restore_if_assigned()
            if self._elements is None:
                return _END
            element = next(self._elements, _END)
        finally:
            active.state = saved
        if element is _END:
            self._elements = None
        else:
            self._state.consumed += 1
        return element

    def __next__(self):
        if _tracing():   # inside a tf.function: a graph op that pulls from this iterator at each call
            from . import graph_iteration
            graph_iteration.refuse_python_loop("iterator", 1)
            return graph_iteration.captured_iterator(self).get_next()
        element = self._next_element()
        if element is _END:
            raise StopIteration
        return structure.to_user(element)

    def get_next(self):
        if _tracing():
            from . import graph_iteration
            return graph_iteration.captured_iterator(self).get_next()
        element = self._next_element()
        if element is _END:
            raise OutOfRangeError("End of sequence")
        return structure.to_user(element)

    def __repr__(self):
        return f"<tapeflow.data.OwnedIterator element_spec={self.element_spec!r}>"


class NumpyIterator(OwnedIterator):
    """``dataset.as_numpy_iterator()``: the elements as numpy values."""

    def __next__(self):
        element = self._next_element()
        if element is _END:
            raise StopIteration
        return structure.to_numpy(element)

    next = __next__

    def __repr__(self):
        return f"<tapeflow.data.NumpyIterator element_spec={self.element_spec!r}>"

"""Iterators over a dataset: ``iter(dataset)`` and ``dataset.as_numpy_iterator()``.

``next(iterator)`` raises StopIteration at the end; ``iterator.get_next()``
raises ``tf.errors.OutOfRangeError``, as in TensorFlow. An exhausted iterator
stays exhausted. Inside a tf.function, ``next(iterator)`` is a graph op that
pulls from this iterator at each call (graph_iteration.py).
"""
from ..errors import OutOfRangeError
from ..framework.recording import tracing_graph
from . import structure

_END = object()


def _tracing():
    return tracing_graph() is not None


class OwnedIterator:
    """``iter(dataset)``: yields the elements as (nested structures of) Tensors."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._elements = dataset._iterate()

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def _next_element(self):
        if self._elements is None:
            return _END
        element = next(self._elements, _END)
        if element is _END:
            self._elements = None
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

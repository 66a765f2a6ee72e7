"""Iterating a dataset inside a tf.function: graph ops that pull the elements at each call.

``for x in dataset:`` in a tf.function must not unroll at trace time (that would
freeze the data of one pass into the graph, and the graph would grow with the
dataset). As in TensorFlow, the loop becomes a ``While`` node that pulls one
element per iteration when the graph runs, so every call iterates afresh (a
``shuffle`` reshuffles) and the graph's size does not depend on the data.

The dataset itself is a Python pipeline, not something a graph can compute. A
trace *captures it by reference*, as it captures a variable: the
``DatasetIterator`` node holds the dataset object as an attribute and, at each
run, makes a new iterator over it. Its output is a handle: a 0-d object tensor
holding that iterator (TensorFlow's resource tensor). The handle flows into the
loop's sub-graphs like any other tensor. Four non-differentiable, impure ops
(no graph pass removes, merges or folds them):

    DatasetIterator(; dataset)             -> handle to a new iterator over ``dataset``
    CapturedIterator(; iterator)           -> handle to ``iterator`` itself (an ``iter(ds)`` made outside
                                              the function: each call continues where the last one stopped)
    IteratorGetNext(handle; dtypes, shapes)       -> the element's components; OutOfRangeError at the end
    IteratorGetNextOrEnd(handle; dtypes, shapes)  -> has_value (bool), then the components
                                                     (zeros when the iterator is exhausted)

AutoGraph (tapeflow/autograph/dataset_loops.py) turns ``for x in ds`` into::

    handle = DatasetIterator(ds)
    more = True
    while more [and not break]:
        more, *x = IteratorGetNextOrEnd(handle)
        if more:            # the body runs only on a real element
            <body>

``iter(ds)`` inside a function gives a GraphIterator (the handle and the element
spec); ``next(it)`` is one IteratorGetNext. The elements' Python pipeline
(``map`` functions, generators) runs eagerly at each pull, hidden from tapes and
traces. While tracing, the components stand for elements of the dataset's
``element_spec``: a dimension the spec leaves unknown is unknown in the trace
(its placeholder value has size 2).

Not saveable: a SavedModel holds graphs and variables as data, and a dataset is
Python code (generators, map functions) and file readers; saving a function
whose graph captures one raises an error naming the dataset (saving/graph_io.py
asks each op's forward for ``unsaveable_capture``). Not differentiable through
the loop: a tape watching a While that pulls elements would need the loop run
again, which would pull other elements, so control_flow.py refuses it; a tape
inside the loop body (a training step) works as usual.
"""
import contextlib
import dis
import sys
import threading

import numpy as np

from ..framework import dtypes, recording
from ..framework.errors import InvalidArgumentError, OutOfRangeError
from ..framework.recording import execute, register_op
from ..framework.registry import no_gradient
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_spec import TensorSpec
from . import structure
from .iterator import _END, OwnedIterator

DATASET_ITERATOR = "DatasetIterator"
CAPTURED_ITERATOR = "CapturedIterator"
GET_NEXT = "IteratorGetNext"
GET_NEXT_OR_END = "IteratorGetNextOrEnd"
ITERATOR_OPS = frozenset((DATASET_ITERATOR, CAPTURED_ITERATOR, GET_NEXT, GET_NEXT_OR_END))
TRACE_SIZE = 2   # the size a trace gives dimensions the element spec leaves unknown


class _TraceSize(threading.local):
    size = TRACE_SIZE


_trace_size = _TraceSize()


@contextlib.contextmanager
def trace_size(size):
    """Traces in this block give unknown dimensions of elements the size ``size`` (to check that a loop
    body does not depend on it)."""
    saved, _trace_size.size = _trace_size.size, size
    try:
        yield
    finally:
        _trace_size.size = saved


def _handle(iterator):
    array = np.empty((), dtype=object)
    array[()] = iterator
    return array


def _no_handle(**attrs):
    """While tracing nothing is iterated: the handle holds no iterator yet."""
    return _handle(None)


@register_op(DATASET_ITERATOR, at_trace=_no_handle)
def _dataset_iterator(dataset):
    with _eager():
        return _handle(OwnedIterator(dataset))


@register_op(CAPTURED_ITERATOR, at_trace=_no_handle)
def _captured_iterator(iterator):
    return _handle(iterator)


def _describe_dataset(attrs):
    return f"the tf.data dataset {attrs['dataset']!r}"


def _describe_iterator(attrs):
    return f"the tf.data iterator {attrs['iterator']!r}"


_dataset_iterator.unsaveable_capture = _describe_dataset
_captured_iterator.unsaveable_capture = _describe_iterator


def _eager():
    """Pulling runs the pipeline's Python (map functions, generators) eagerly, unseen by tapes and traces."""
    return recording.init_scope()


def _next_element(iterator):
    state = recording.current()
    if state is None or not (state.graph is not None or state.tapes or state.accumulators or state.watchers):
        return iterator._next_element()     # nothing records on this thread: nothing to hide
    with _eager():
        return iterator._next_element()


def _pull(handle, dtypes, shapes):
    """The next element's components (arrays), or None at the end."""
    element = _next_element(handle[()])
    if element is _END:
        return None
    components = structure.leaves(element)
    if len(components) != len(dtypes):
        raise InvalidArgumentError(f"The dataset gave an element with {len(components)} components where its "
                                   f"element_spec has {len(dtypes)}")
    out = []
    for i, (c, dtype, shape) in enumerate(zip(components, dtypes, shapes)):
        c = np.asarray(c)
        if c.dtype != _numpy_dtype(dtype) or not _fits(c.shape, shape):
            raise InvalidArgumentError(f"Component {i} of a dataset element is a {c.dtype} array of shape "
                                       f"{c.shape}, not the {dtype} {TensorShape(shape)} of its element_spec")
        out.append(c)
    return out


def _fits(shape, spec_shape):
    if spec_shape is None:
        return True
    return len(shape) == len(spec_shape) and all(d is None or d == n for n, d in zip(shape, spec_shape))


def _numpy_dtype(name):
    return dtypes.as_dtype(name)._np


def placeholder_value(dtype, shape, size=None):
    """A value standing for a component of dtype name ``dtype`` and ``shape`` while tracing (unknown
    dimensions of ``size``; a scalar when the rank is unknown): ones for floating point, zeros otherwise
    (a valid index or label)."""
    shape = () if shape is None else tuple(size if d is None else d for d in shape)
    if dtype == "string":
        return np.full(shape, b"", dtype=object)
    fill = 1 if dtypes.as_dtype(dtype).is_floating else 0
    return np.full(shape, fill, dtype=_numpy_dtype(dtype))


def _trace_components(handle, dtypes, shapes):
    return tuple(placeholder_value(d, s, _trace_size.size) for d, s in zip(dtypes, shapes))


def _trace_components_or_end(handle, dtypes, shapes):
    return (np.array(True),) + _trace_components(handle, dtypes, shapes)


@register_op(GET_NEXT, num_outputs=-1, at_trace=_trace_components)
def _get_next(handle, dtypes, shapes):
    components = _pull(handle, dtypes, shapes)
    if components is None:
        raise OutOfRangeError("End of sequence")
    return tuple(components)


@register_op(GET_NEXT_OR_END, num_outputs=-1, at_trace=_trace_components_or_end)
def _get_next_or_end(handle, dtypes, shapes):
    components = _pull(handle, dtypes, shapes)
    if components is None:
        return (np.array(False),) + tuple(_empty_component(t, s) for t, s in zip(dtypes, shapes))
    return (np.array(True),) + tuple(components)


def _empty_component(dtype, shape):
    """The stand-in for a component once the iterator is exhausted (unused: the loop body does not run)."""
    if shape is None:       # unknown rank: a scalar
        shape = ()
    if dtype == "string":
        return np.full([0 if d is None else d for d in shape], b"", dtype=object)
    return np.zeros([0 if d is None else d for d in shape], _numpy_dtype(dtype))


for _op in ITERATOR_OPS:
    no_gradient(_op)
_get_next.unrepeatable = _get_next_or_end.unrepeatable = "pulls the next element of a dataset iterator"


# ------------------------------------------------------------- building ---
def tracing():
    return recording.tracing_graph() is not None


def _leaf_specs(spec):
    flat = structure.leaves(spec)
    for leaf in flat:
        if not isinstance(leaf, TensorSpec):
            raise TypeError(f"A tf.function cannot iterate over a dataset whose elements hold {leaf!r} (a dataset "
                            "of windows): flat_map the windows into tensors first")
    return flat


class GraphIterator:
    """``iter(dataset)`` inside a tf.function: ``next()`` and ``get_next()`` pull at each call."""

    def __init__(self, handle, element_spec):
        self._handle = handle
        self._element_spec = element_spec
        self._leaves = _leaf_specs(element_spec)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def has_unknown_dimensions(self):
        return any(s.shape.rank is None or None in s.shape.dims for s in self._leaves)

    def __iter__(self):
        return self

    def _attrs(self):
        return {"dtypes": [s.dtype.name for s in self._leaves],
                "shapes": [None if s.shape.rank is None else list(s.shape.dims) for s in self._leaves]}

    def _outputs(self, results):
        for t, s in zip(results, self._leaves):
            t._static_shape = s.shape
        return structure.pack(self._element_spec, list(results))

    def get_next(self):
        if not self._leaves:
            raise TypeError("A tf.function cannot iterate over a dataset whose elements have no components")
        return self._outputs(execute(GET_NEXT, (self._handle,), self._attrs()))

    def __next__(self):
        refuse_python_loop("iterator", 1)
        return self.get_next()

    def get_next_or_end(self):
        """(has_value, element): a boolean tensor, and the element (zeros when it is False)."""
        results = execute(GET_NEXT_OR_END, (self._handle,), self._attrs())
        return results[0], self._outputs(results[1:])

    def __repr__(self):
        return f"<tapeflow.data.GraphIterator element_spec={self._element_spec!r}>"


def _spec_of(dataset):
    with _eager():   # finding a spec may call the pipeline's map functions on placeholders
        return dataset.element_spec


def dataset_iterator(dataset):
    """A GraphIterator over a new iterator of ``dataset`` at each run of the graph being traced."""
    spec = _spec_of(dataset)
    return GraphIterator(execute(DATASET_ITERATOR, (), {"dataset": dataset}), spec)


def captured_iterator(iterator):
    """A GraphIterator continuing the eager ``iterator`` (made outside the function) at each run."""
    spec = _spec_of(iterator._dataset)
    return GraphIterator(execute(CAPTURED_ITERATOR, (), {"iterator": iterator}), spec)


def is_iterable_in_graph(iterable):
    """Whether a trace iterates ``iterable`` with graph ops (a dataset or a dataset iterator)."""
    from .dataset import Dataset
    return isinstance(iterable, (Dataset, GraphIterator, OwnedIterator))


def graph_iterator(iterable):
    """While tracing: a GraphIterator for a dataset or a dataset iterator, None for anything else."""
    from .dataset import Dataset
    if isinstance(iterable, GraphIterator):
        return iterable
    if isinstance(iterable, Dataset):
        return dataset_iterator(iterable)
    if isinstance(iterable, OwnedIterator) and type(iterable).__next__ is OwnedIterator.__next__:
        return captured_iterator(iterable)
    return None


def refuse_python_loop(what, depth):
    """Inside a trace, a Python ``for`` loop (or comprehension) straight over a dataset or iterator would
    never end (``next`` cannot know at trace time where the data ends): a clear error instead.
    ``depth``: how many frames up the caller's code is."""
    frame = sys._getframe(depth + 1)
    instruction = _instruction_at(frame.f_code, frame.f_lasti)
    if instruction in ("GET_ITER", "FOR_ITER"):
        raise NotImplementedError(
            f"A Python for loop over a tf.data {what} inside a tf.function is not converted here, so it cannot "
            "end: only AutoGraph turns it into a graph loop, and this loop is in code it does not convert "
            "(autograph=False, a comprehension, a for loop with a return statement or an else clause, a "
            "library function, or a function marked do_not_convert). Write it as a plain for statement in "
            "the tf.function (or a function it calls), or use dataset.reduce")


def _instruction_at(code, offset):
    for instruction in dis.get_instructions(code):
        if instruction.offset == offset:
            return instruction.opname
    return None


def reduce_in_graph(dataset, initial_state, reduce_func):
    """``dataset.reduce`` inside a tf.function: the fold is a graph loop (autograph/dataset_loops.py), so
    every call folds the elements afresh."""
    from ..autograph.dataset_loops import dataset_loop
    from ..framework import nest
    from ..framework.conversion import convert_to_tensor
    state = nest.map_structure(convert_to_tensor, initial_state)
    flat = nest.flatten(state)

    def body(element, *leaves):
        new = reduce_func(nest.pack_sequence_as(state, list(leaves)), element)
        try:
            nest.assert_same_structure(state, new)
        except (ValueError, TypeError):
            raise TypeError(f"The element types for the new state must match the initial state. Expected "
                            f"{state}; got {new}.") from None
        return tuple(convert_to_tensor(v) for v in nest.flatten(new))
    names = tuple(f"<reduce state {i}>" for i in range(len(flat)))
    result = dataset_loop(dataset_iterator(dataset), body, tuple(flat), names, None)
    return nest.pack_sequence_as(state, list(result))

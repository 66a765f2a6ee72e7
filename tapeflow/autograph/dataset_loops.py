"""``for x in dataset`` in a trace: one While node that pulls an element per iteration.

The loop (see tapeflow/data/graph_iteration.py for the iterator ops)::

    handle = DatasetIterator(ds)
    more = True
    while more [and not break]:
        more, *x = IteratorGetNextOrEnd(handle)
        <body>, run only when ``more``

One traced body must serve every element. When the element spec is fully
known, or when the body traced with another size for the unknown dimensions
gives the same graph, the body is a ``cond`` on ``more``: the whole loop is
graph. Otherwise the body depends on the element's size (a gradient that
divides by the batch size, say) and the last, smaller batch of ``batch(n)``
needs a graph of its own: the body is then a ``DatasetLoopBody`` node that
holds one sub-graph per element shape, traced when a shape is first met (at
trace time for the placeholder's shape, at run time for the others), much as
tf.function traces once per input shape. Every such trace is a child of the
loop body's graph: the tensors of the function it uses are inputs of the node,
fixed by the first trace (a later trace that needs another one is refused),
and it reads variables in place. A trace at run time may not create variables.
"""
import contextlib
import io

import numpy as np

from ..control_flow import BranchGraph, close_subgraph
from ..data import graph_iteration, structure
from ..framework import recording
from ..framework.conversion import convert_to_tensor
from ..framework.errors import InvalidArgumentError
from ..framework.recording import execute, register_op
from ..framework.registry import no_gradient
from ..framework.tensor_spec import TensorSpec
from ..function import ConcreteFunction, FuncGraph, GraphTensor
from ..ops import math_ops
from ..ops.control_flow_ops import run_subgraph, truth
from ..tensor_array import TensorArray
from . import operators

WHAT = "the for loop over a dataset"
SPECIALISED_BODY = "DatasetLoopBody"


def dataset_loop(iterator, body_fn, state, names, flag):
    """Runs ``body_fn(element, *state)`` for each element of ``iterator`` (a GraphIterator) as a While
    node; ``flag``: the index of the break flag in ``state``, or None. Returns the final state."""
    state = (convert_to_tensor(True),) + tuple(state)
    names = ("<more>",) + tuple(names)

    def test(s):
        return s[0] if flag is None else math_ops.logical_and(s[0], math_ops.logical_not(s[1 + flag]))

    def cond_body(s):
        more, element = iterator.get_next_or_end()
        new = operators.if_stmt(more, lambda *values: body_fn(element, *values), lambda *values: values, s[1:],
                                names[1:])
        return (more,) + tuple(new)

    def specialised_body(s):
        more, element = iterator.get_next_or_end()
        return (more,) + SpecialisedBody(iterator, body_fn, names[1:], s[1:]).call(more, element)

    def build(body):
        return operators._loop(test, body, state, names, WHAT)[1:]

    if iterator.has_unknown_dimensions and not _size_free(lambda: build(cond_body)):
        return build(specialised_body)
    return build(cond_body)


def _size_free(build):
    """Whether the loop traced with unknown element dimensions of two sizes gives the same graph (traced
    into scratch graphs, printing silenced)."""
    graph = recording.tracing_graph()
    fingerprints = []
    for size in (graph_iteration.TRACE_SIZE, graph_iteration.TRACE_SIZE + 1):
        scratch = FuncGraph(graph.name + "_size_check", parent=graph)
        with graph_iteration.trace_size(size), recording.tracing_into(scratch), \
                contextlib.redirect_stdout(io.StringIO()):
            build()
        fingerprints.append(_loop_fingerprint(scratch))
    return fingerprints[0] == fingerprints[1]


def _loop_fingerprint(graph):
    """The last While node of ``graph``: its sub-graphs, the constants it reads and the shapes its body
    gives the loop variables."""
    op, refs, attrs, _ = next(node for node in reversed(graph.nodes) if node[0] == "While")
    constants = [graph.constants[r[1]] for r in refs if r[0] == "const"]
    return ([attrs[k].graph.signature_of_nodes() for k in ("cond", "body")],
            [(c.dtype.str, c.shape, c.tobytes()) for c in constants],
            [np.shape(v) for v in attrs["body"].trace_outputs])


# ------------------------------------------------- a body per element shape ---
class _BodyGraph(BranchGraph):
    """A trace of the loop body for one element shape: tensors of enclosing graphs become inputs,
    eager tensors become its constants (a trace at run time cannot add inputs), variables are read
    in place."""

    def ref(self, tensor):
        if not isinstance(tensor, GraphTensor) and id(tensor) not in self._refs:
            return FuncGraph.ref(self, tensor)
        return super().ref(tensor)

    def read_variable(self, var):
        return FuncGraph.read_variable(self, var)


class SpecialisedBody:
    """The loop body traced once per element shape (the ``body`` attribute of a DatasetLoopBody node)."""

    def __init__(self, iterator, body_fn, names, state):
        self._body_fn = body_fn
        self._names = names
        self._spec = iterator.element_spec
        self._leaves = structure.leaves(self._spec)
        self._fixed = list(state)
        self._carried = [i for i, v in enumerate(state) if operators._is_tensor_value(v)]
        for i in self._carried:
            if isinstance(state[i], TensorArray):
                raise NotImplementedError(f"'{names[i]}' is a TensorArray carried by a for loop over a dataset "
                                          "whose body depends on the element size; accumulate in tensors instead, "
                                          "or give the elements known shapes (batch(..., drop_remainder=True))")
        tensors = [operators._tensor(state[i]) for i in self._carried]
        self._state_specs = [TensorSpec.from_tensor(t) for t in tensors]
        self._state_values = [np.array(t._value) for t in tensors]   # what the traces run on
        self._parent = recording.tracing_graph()
        self._functions = {}
        self._captures = None

    def call(self, more, element):
        """Emits the node; returns the new state (the body's tensors, the other entries as they were)."""
        components = structure.leaves(element)
        state = [operators._tensor(self._fixed[i]) for i in self._carried]
        shapes = tuple(tuple(c._value.shape) for c in components)
        self._functions[shapes] = self._trace(shapes, first=True)
        self._counts = (len(components), len(state))
        outputs = execute(SPECIALISED_BODY, (more,) + tuple(components) + tuple(state) + tuple(self._captures),
                          {"body": self})
        new = list(self._fixed)
        for i, out, spec in zip(self._carried, outputs, self._state_specs):
            out._static_shape = spec.shape
            new[i] = out
        return tuple(new)

    def function_for(self, shapes):
        function = self._functions.get(shapes)
        if function is None:
            function = self._functions[shapes] = self._trace(shapes, first=False)
        return function

    def _trace(self, shapes, first):
        graph = _BodyGraph("dataset_loop_body", self._parent, frozenset())
        if not first:
            graph.creates_variables = False
        with recording.tracing_into(graph):
            components = [graph.placeholder(TensorSpec(shape, leaf.dtype), graph_iteration.placeholder_value(
                leaf.dtype.name, shape)) for shape, leaf in zip(shapes, self._leaves)]
            state = list(self._fixed)
            for i, spec, value in zip(self._carried, self._state_specs, self._state_values):
                state[i] = graph.placeholder(spec, value)
            new = self._body_fn(structure.pack(self._spec, components), *state)
            for i, (before, after) in enumerate(zip(self._fixed, new)):
                if i not in self._carried and not isinstance(before, operators.Undefined) and after is not before:
                    raise TypeError(f"'{self._names[i]}' is a {type(before).__name__} that {WHAT} changes, but the "
                                    "loop runs as a tf.while_loop, which can only carry tensors")
            outputs = [operators._tensor(new[i]) for i in self._carried]
            graph.set_outputs(outputs)
        self._check_outputs(graph)
        if first:
            self._captures = list(graph.captures)
        position = {id(t): k for k, t in enumerate(self._captures)}
        if any(id(t) not in position for t in graph.captures):
            raise InvalidArgumentError("The body of a for loop over a dataset, traced for an element of shapes "
                                       f"{list(shapes)}, uses a tensor of the function that its first trace did not "
                                       "use; give the elements known shapes (batch(..., drop_remainder=True))")
        close_subgraph(graph, self._captures, position)
        return ConcreteFunction(graph, name=graph.name)

    def _check_outputs(self, graph):
        for i, out, spec, value in zip(self._carried, graph.structured_outputs, self._state_specs,
                                       self._state_values):
            if out.dtype != spec.dtype:
                raise TypeError(f"'{self._names[i]}' enters {WHAT} as {spec.dtype.name} and leaves an iteration "
                                f"as {out.dtype.name}")
            if out._value.shape != value.shape:
                raise ValueError(f"'{self._names[i]}' enters {WHAT} with shape {spec.shape} and leaves an "
                                 f"iteration with shape {out.shape}; a loop variable keeps its shape")


def _body_at_trace(more, *arrays, body):
    n_components, n_state = body._counts
    return tuple(arrays[n_components:n_components + n_state])


@register_op(SPECIALISED_BODY, num_outputs=-1, at_trace=_body_at_trace)
def _specialised_body(more, *arrays, body):
    n_components, n_state = body._counts
    components = list(arrays[:n_components])
    state = list(arrays[n_components:n_components + n_state])
    if not truth(more):
        return tuple(state)
    function = body.function_for(tuple(np.shape(c) for c in components))
    outputs = run_subgraph(function, components + state + list(arrays[n_components + n_state:]))
    for out, before in zip(outputs, state):
        if np.shape(out) != np.shape(before):
            raise InvalidArgumentError(f"A loop variable of {WHAT} entered an iteration with shape {np.shape(before)} "
                                       f"and left it with shape {np.shape(out)}")
    return tuple(outputs)


no_gradient(SPECIALISED_BODY)
_specialised_body.unrepeatable = "runs the Python body of a for loop over a dataset"

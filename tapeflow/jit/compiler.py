"""Compiles an optimised traced graph (a PassGraph) into jitted segments and op calls.

The graph is cut, in node order, into runs of nodes with a lowering (lowering.py),
each generated as one numba kernel (codegen.py), and everything else (ops without
a lowering, values whose shape or dtype is not proven, variable reads and assigns,
deferred Python calls) called as the plain replay calls it. So every graph compiles,
and a graph with nothing to lower runs as its replay does. Two jacobian calls get a
shorter way that each call first proves exact, else they run as replayed: the product
of batch_jacobian's one-hot cotangents (one_hot.py) and the placement of a full
jacobian's blocks on its diagonal (block_diagonal.py).

Everything about a signature is decided once, here: which nodes fuse, which values
stay scalars inside a loop, which get arrays, the shapes results are given back. The
arrays themselves are allocated inside the kernels at each call: a buffer reused
across calls would be shared by two threads calling the function at once, and by a
result handed to the caller.
"""
import time

import numpy as np

from ..framework import nest
from ..framework.recording import _FORWARDS, state_node_parts, state_op_variable_counts
from ..framework.tensor import Tensor
from ..graph_passes.pass_graph import VARIABLE_ASSIGN, VARIABLE_READ, reordered
from ..graph_replay import ASSIGN_METHODS, output_count_error
from .block_diagonal import assembles_blocks, block_diagonal_einsum
from .codegen import Segment, generate
from .lowering import lowering_of
from .module_cache import load_module
from .one_hot import one_hot_matmul, reads_a_seed

_SEGMENT, _OP, _OP_TUPLE, _READ, _ASSIGN, _STATE = range(6)


def _flat(value):
    if type(value) is np.ndarray and value.flags.c_contiguous:
        return value.reshape(-1)
    return np.ascontiguousarray(value).reshape(-1)


def _lowerings(graph, shapes):
    """(node -> lowering kind, ref -> dtype) for ``graph``'s nodes."""
    dtypes = {}
    kinds = {}
    for k, (op, refs, attrs, n_out) in enumerate(graph.nodes):
        if op in (VARIABLE_READ, VARIABLE_ASSIGN) or state_op_variable_counts(op) is not None:
            continue
        outs = [("node", k, j) for j in range(n_out)]
        for r in list(refs) + outs:
            dtypes[r] = graph.dtype(r)
        kind = lowering_of(op, attrs, [dtypes[r] for r in refs], [dtypes[r] for r in outs],
                           [shapes.get(r) for r in refs], [shapes.get(r) for r in outs])
        if kind is not None:
            kinds[k] = kind
    return kinds, dtypes


def schedule(graph, lowered):
    """A node order that keeps lowered nodes together, so fewer, larger kernels.

    Data dependencies hold, and impure nodes (variable reads and assigns, calls, any op not
    declared pure) keep their order among themselves: only pure nodes move. Among the nodes
    ready to run, a lowered node reading the kernel being built joins it; otherwise the
    earliest node that is not lowered runs; lowered nodes wait until nothing else can run,
    so they gather next to the nodes that read them (and a broadcast stays in the loop that
    reads it instead of being materialised).
    """
    n = len(graph.nodes)
    waiting = [0] * n
    readers = [[] for _ in range(n)]
    previous_impure = None
    for k, (_, refs, _, _) in enumerate(graph.nodes):
        producers = {r[1] for r in refs if r[0] == "node"}
        if not graph.is_pure(k):
            if previous_impure is not None:
                producers.add(previous_impure)
            previous_impure = k
        waiting[k] = len(producers)
        for p in producers:
            readers[p].append(k)
    ready = [k for k in range(n) if waiting[k] == 0]
    order = []
    run = set()        # the lowered nodes emitted since the last other node: the kernel being built
    while ready:
        choice = min((k for k in ready if k in lowered and any(r[0] == "node" and r[1] in run
                                                                for r in graph.nodes[k][1])), default=None)
        if choice is None:
            choice = min((k for k in ready if k not in lowered), default=None)
        if choice is None:
            choice = min(ready)
        if choice in lowered:
            run.add(choice)
        else:
            run = set()
        ready.remove(choice)
        order.append(choice)
        for r in readers[choice]:
            waiting[r] -= 1
            if waiting[r] == 0:
                ready.append(r)
    return order


def plan_segments(graph):
    """(graph in kernel-friendly order, segments, kinds, shapes, dtypes): the jitted runs of nodes."""
    kinds, _ = _lowerings(graph, graph.static_shapes())
    graph = reordered(graph, schedule(graph, kinds))
    shapes = graph.static_shapes()
    kinds, dtypes = _lowerings(graph, shapes)
    segments, run = [], []
    for k in range(len(graph.nodes) + 1):
        if k in kinds:
            run.append((k, kinds[k]))
            continue
        if run and any(kind != "reshape" for _, kind in run):   # a kernel only to reshape is not worth a call
            segments.append(Segment(len(segments), run))
        run = []
    return graph, segments, kinds, shapes, dtypes


def _with_dead_values(steps, kept):
    """Each step with, appended, the value slots nobody reads after it (outputs in ``kept`` excepted).

    Dropping values at their last use frees memory early and lets a state op (an optimizer's
    in-place update) find its variable's buffer unshared: no copy-on-write, as in ArrayReplay.
    """
    last_use = {}
    for k, step in enumerate(steps):
        if step[0] == _SEGMENT:
            made, read = [i for i, _ in step[3]], step[2]
        else:
            out, n_out = step[5], step[4]
            made, read = (range(out, out + n_out) if out >= 0 else ()), step[2]
        for i in made:
            last_use[i] = k       # a value nothing reads dies where it is made
        for i in read:
            last_use[i] = k
    dead = [[] for _ in steps]
    for i, k in last_use.items():
        if i not in kept:
            dead[k].append(i)
    return [tuple(step) + (tuple(values),) for step, values in zip(steps, dead)]


class CompiledGraph:
    """A PassGraph's program: jitted segments and op calls; called like ArrayReplay."""

    def __init__(self, graph, output_structure):
        start = time.perf_counter()
        self.graph, segments, kinds, shapes, dtypes = plan_segments(graph)
        graph = self.graph
        read_after = {}
        outputs = {r for r in graph.outputs if r is not None}
        for seg in segments:
            last = seg.nodes[-1][0]
            later = set(outputs)
            for node in graph.nodes[last + 1:]:
                later.update(node[1])
            read_after[seg.index] = later
        self.source = generate(graph, segments, shapes, dtypes, read_after) if segments else ""
        module = load_module(self.source) if segments else None
        self.segments = segments
        self._build_steps(module, segments, shapes)
        self._output_structure = output_structure
        self.plan_seconds = time.perf_counter() - start
        self.first_call_seconds = None

    def _build_steps(self, module, segments, shapes):
        g = self.graph
        starts = {seg.nodes[0][0]: seg for seg in segments}
        inside = {k for seg in segments for k, _ in seg.nodes}
        slot = {}       # only values that live outside the kernels get a place in the list
        for k, node in enumerate(g.nodes):
            produced = [("node", k, j) for j in range(node[3])]
            if k in inside:
                produced = [r for r in produced if any(r in seg.outputs for seg in segments)]
            for r in produced:
                slot[r] = len(slot)
        n = len(slot)
        self._n_nodes = n
        self._bases = {"in": n, "const": n + len(g.input_shapes), "capture": n + len(g.input_shapes) + len(g.constants)}
        self._slot = slot
        steps = []
        for k, (op, refs, attrs, n_out) in enumerate(g.nodes):
            if k in starts:
                seg = starts[k]
                steps.append((_SEGMENT, getattr(module, seg.name), [self.index(r) for r in seg.inputs],
                              [(self.index(r), shapes[r]) for r in seg.outputs], None, None))
            if k in inside:
                continue
            args = [self.index(r) for r in refs]
            out = slot.get(("node", k, 0), -1)
            if op == VARIABLE_READ:
                steps.append((_READ, None, args, attrs, n_out, out))
            elif op == VARIABLE_ASSIGN:
                steps.append((_ASSIGN, None, args, attrs, n_out, out))
            elif state_op_variable_counts(op) is not None:
                steps.append((_STATE, _FORWARDS[op][0], args, state_node_parts(attrs), n_out, out))
            else:
                forward, registered = _FORWARDS[op]
                if op == "MatMul" and reads_a_seed(g, k, shapes):
                    forward = one_hot_matmul(forward)
                elif op == "Einsum" and assembles_blocks(g, k):
                    forward = block_diagonal_einsum(forward)
                steps.append((_OP if registered == 1 else _OP_TUPLE, forward, args, attrs or None, n_out, out, op))
        self._output_slots = [None if r is None else self.index(r) for r in g.outputs]
        self._steps = _with_dead_values(steps, set(self._output_slots))

    def index(self, ref):
        """Values are one list: node outputs, then inputs, constants, captures."""
        if ref[0] == "node":
            return self._slot[ref]
        return self._bases[ref[0]] + ref[1]

    def __call__(self, inputs, constants, captures, variables):
        first = self.first_call_seconds is None
        start = time.perf_counter() if first else 0.0
        values = [None] * self._n_nodes
        values += [t._value for t in inputs]
        values += constants
        values += [t._value for t in captures]
        for step in self._steps:
            kind = step[0]
            if kind == _SEGMENT:
                results = step[1](*[_flat(values[i]) for i in step[2]])
                for (i, shape), array in zip(step[3], results):
                    values[i] = array.reshape(shape)
                for i in step[-1]:
                    values[i] = None
                continue
            _, forward, args, attrs, n_out, out = step[:6]
            if kind <= _OP_TUPLE:
                arrays = [values[i] for i in args]
                result = forward(*arrays) if attrs is None else forward(*arrays, **attrs)
                if kind == _OP:
                    values[out] = result
                elif len(result) == n_out:
                    values[out:out + n_out] = result
                else:
                    raise output_count_error(step[6], n_out, len(result))
            elif kind == _READ:
                values[out] = variables[attrs["variable"]]._as_tensor()._value
            elif kind == _ASSIGN:
                var = variables[attrs["variable"]]
                getattr(var, ASSIGN_METHODS[attrs["mode"]])(Tensor(values[args[0]]))
            else:
                updated, rest = attrs
                forward([variables[i] for i in updated], *[values[i] for i in args], **rest)
            for i in step[-1]:
                values[i] = None
        if first:
            self.first_call_seconds = time.perf_counter() - start
        if self._output_structure is None:
            return None
        return self._pack(values)

    def _pack(self, values):
        structure = self._output_structure
        slots = self._output_slots
        if type(structure) in (tuple, list) and not any(isinstance(leaf, (tuple, list, dict)) for leaf in structure):
            return type(structure)(leaf.python if i is None else Tensor(values[i])
                                   for leaf, i in zip(structure, slots))
        leaves = iter(slots)

        def leaf_value(leaf):
            i = next(leaves)
            return leaf.python if i is None else Tensor(values[i])
        return nest.map_structure(leaf_value, structure)

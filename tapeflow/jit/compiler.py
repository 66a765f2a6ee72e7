"""Compiles an optimised traced graph (a PassGraph) into jitted segments and op calls.

The graph is cut, in node order, into runs of nodes with a lowering (lowering.py),
each generated as one numba kernel (codegen.py), and everything else (ops without
a lowering, values whose shape or dtype is not proven, variable reads and assigns,
deferred Python calls) called as the plain replay calls it. So every graph compiles,
and a graph with nothing to lower runs as its replay does. The host program that calls
kernels and ops in order is generated too (host.py). Some calls take a shorter way proven
from the graph when the program is planned: the product of batch_jacobian's one-hot
cotangents (one_hot.py), bias + relu and its gradient in place (in_place.py), Adam with its
constants bound (adam_step.py), OneHot and Softmax as their kernels (direct.py); the
placement of a full jacobian's blocks on its diagonal (block_diagonal.py) is checked at
each call.

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
from ..graph_replay import output_count_error
from . import adam_step, direct, in_place
from .block_diagonal import assembles_blocks, block_diagonal_einsum
from .codegen import HEADER, Segment, generate
from .host import HostWriter
from .lowering import lowering_of
from .module_cache import load_module
from .one_hot import one_hot_product, proven_one_hot_product


def _flat(value):
    if type(value) is np.ndarray and value.flags.c_contiguous:
        return value.reshape(-1)
    return np.ascontiguousarray(value).reshape(-1)


_HELPERS = {"flat": _flat, "Tensor": Tensor, "count_error": output_count_error, "matmul": np.matmul,
            "bias_relu_in_place": in_place.bias_relu, "bias_relu_grad_in_place": in_place.bias_relu_grad}


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
        forwards = self._forwards(shapes)
        kernels = generate(graph, segments, shapes, dtypes, read_after) if segments else HEADER
        host = HostWriter(graph, segments, shapes, forwards)
        self.source = kernels + "\n".join(host.write())
        module = load_module(self.source)
        self.module = module
        self.segments = segments
        constants = graph.constants
        flat_constants = {int(r[1]): _flat(constants[r[1]]) for r in host.flat_of if r[0] == "const"}
        self._run = module.build(forwards, host.attrs, constants, flat_constants, _HELPERS)
        self._output_structure = output_structure
        self._simple = type(output_structure) in (tuple, list) and not any(
            isinstance(leaf, (tuple, list, dict)) for leaf in output_structure)
        self.plan_seconds = time.perf_counter() - start
        self.first_call_seconds = None

    def _forwards(self, shapes):
        """node -> the forward its call runs (the op's, or a proven shortcut around it)."""
        g = self.graph
        forwards = {}
        for k, (op, refs, attrs, n_out) in enumerate(g.nodes):
            if op in (VARIABLE_READ, VARIABLE_ASSIGN):
                continue
            forward = _FORWARDS[op][0]
            if op == "ApplyAdam":
                updated, own = state_node_parts(attrs)
                dtypes = [g.variable_dtypes[i] if i < len(g.variable_dtypes) else None for i in updated]
                if adam_step.applies(attrs, dtypes):
                    forward = adam_step.AdamStep(own, dtypes[0], forward)
            elif op in ("OneHot", "Softmax") and len(refs) == 1 and n_out == 1:
                x, out = tuple(refs[0]), ("node", k, 0)
                if op == "OneHot":
                    call = direct.one_hot_call(attrs, shapes.get(x), g.dtype(x), shapes.get(out), g.dtype(out))
                else:
                    call = direct.softmax_call(attrs, shapes.get(x), g.dtype(x)) if g.dtype(out) == g.dtype(x) \
                        else None
                forward = call or forward
            elif op == "MatMul" and proven_one_hot_product(g, k, shapes):
                forward = one_hot_product(attrs)
            elif op == "Einsum" and assembles_blocks(g, k):
                forward = block_diagonal_einsum(forward)
            forwards[k] = forward
        return forwards

    def __call__(self, inputs, constants, captures, variables):
        """``constants``: the graph's own (bound when the program was built)."""
        if self.first_call_seconds is None:
            start = time.perf_counter()
            values = self._run(inputs, captures, variables)
            self.first_call_seconds = time.perf_counter() - start
        else:
            values = self._run(inputs, captures, variables)
        if self._output_structure is None:
            return None
        return self._pack(values)

    def _pack(self, values):
        structure = self._output_structure
        if self._simple:
            return type(structure)(leaf.python if v is None else Tensor(v) for leaf, v in zip(structure, values))
        leaves = iter(values)

        def leaf_value(leaf):
            v = next(leaves)
            return leaf.python if v is None else Tensor(v)
        return nest.map_structure(leaf_value, structure)

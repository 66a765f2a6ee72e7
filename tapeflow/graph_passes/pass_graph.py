"""The graph the passes rewrite: a copy of a FuncGraph's nodes, constants and outputs.

The FuncGraph itself is never changed (SavedModel saving, introspection and
trace comparison see the graph as traced); ConcreteFunction plans its replay
from the optimised copy.

References are the FuncGraph's: ``("in", i)``, ``("const", i)``, ``("capture", i)``,
``("node", k, j)``. A pass rewrites a node's uses by recording ``replace(old, new)``
and deleting nodes; ``compact`` then renumbers what is left.
"""
import numpy as np

from ..framework.op_purity import SHAPE_FROM_SHAPES, is_pure, is_removable

VARIABLE_READ = "__VariableRead__"
VARIABLE_ASSIGN = "__VariableAssign__"


class PassGraph:
    """``nodes``: [op_type, refs, attrs, n_out] (None once deleted); ``outputs``: the refs read after the
    last node; ``values``: ref -> the value seen while tracing, where the trace is at hand."""

    def __init__(self, nodes, constants, outputs, input_shapes=(), variable_shapes=(), values=None,
                 variable_dtypes=()):
        self.nodes = [[op, list(refs), dict(attrs), n_out] for op, refs, attrs, n_out in nodes]
        self.constants = list(constants)
        self.outputs = list(outputs)
        self.input_shapes = list(input_shapes)
        self.variable_shapes = list(variable_shapes)
        self.variable_dtypes = list(variable_dtypes)
        self.values = dict(values or {})
        self._replacements = {}

    @classmethod
    def from_func_graph(cls, graph, input_shapes):
        """``input_shapes``: each input's shape where every call has it, else None."""
        values = {}
        refs = getattr(graph, "_refs", {})
        for tensor in getattr(graph, "_alive", ()):
            ref = refs.get(id(tensor))
            if ref is not None and ref[0] in ("node", "in"):
                values[tuple(ref)] = tensor._value
        variable_shapes = [tuple(v.shape.as_list()) if v.shape.is_fully_defined() else None
                           for v in graph.variables]
        variable_dtypes = [np.dtype(v.dtype.as_numpy_dtype) for v in graph.variables]
        return cls(graph.nodes, graph.constants, output_refs(graph), input_shapes, variable_shapes, values,
                   variable_dtypes)

    # -- facts -------------------------------------------------------------------
    def is_pure(self, k):
        return is_pure(self.nodes[k][0])

    def is_removable(self, k):
        return is_removable(self.nodes[k][0])

    def constant(self, ref):
        """The constant array ``ref`` stands for, or None."""
        return self.constants[ref[1]] if ref[0] == "const" else None

    def dtype(self, ref):
        """The dtype of ``ref`` where it is fixed at trace time (None for deferred calls' results)."""
        if ref[0] == "const":
            return self.constants[ref[1]].dtype
        if ref[0] == "node" and not is_pure(self.nodes[ref[1]][0]):
            node = self.nodes[ref[1]]
            if node[0] == VARIABLE_READ and node[2]["variable"] < len(self.variable_dtypes):
                return self.variable_dtypes[node[2]["variable"]]    # a variable's dtype never changes
            return None
        value = self.values.get(tuple(ref))
        return None if value is None else np.asarray(value).dtype

    def static_shapes(self):
        """ref -> shape for every value whose shape is the same at every call (proven, not guessed:
        known input shapes, constants, fixed-shape variables, and ops whose output shapes follow
        from their input shapes)."""
        shapes = {}
        for i, shape in enumerate(self.input_shapes):
            if shape is not None:
                shapes[("in", i)] = shape
        for i, c in enumerate(self.constants):
            shapes[("const", i)] = c.shape
        for k, node in enumerate(self.nodes):
            if node is None:
                continue
            op, refs, attrs, n_out = node
            if op == VARIABLE_READ:
                shape = self.variable_shapes[attrs["variable"]] if attrs["variable"] < len(self.variable_shapes) \
                    else None
                if shape is not None:
                    shapes[("node", k, 0)] = shape
                continue
            if op not in SHAPE_FROM_SHAPES or not all(tuple(r) in shapes for r in refs):
                continue
            for j in range(n_out):
                value = self.values.get(("node", k, j))
                if value is not None:
                    shapes[("node", k, j)] = np.shape(value)
        return shapes

    def users(self):
        """ref -> number of reads (by nodes and outputs)."""
        count = {}
        for node in self.nodes:
            if node is not None:
                for r in node[1]:
                    count[tuple(r)] = count.get(tuple(r), 0) + 1
        for r in self.outputs:
            if r is not None:
                count[r] = count.get(r, 0) + 1
        return count

    # -- rewriting ----------------------------------------------------------------
    def resolve(self, ref):
        ref = tuple(ref)
        while ref in self._replacements:
            ref = self._replacements[ref]
        return ref

    def replace(self, old, new):
        """Every later read of ``old`` reads ``new`` instead (``new`` is defined before ``old``'s readers)."""
        self._replacements[tuple(old)] = tuple(new)

    def add_constant(self, array):
        self.constants.append(array)
        return ("const", len(self.constants) - 1)

    def apply_replacements(self):
        for node in self.nodes:
            if node is not None:
                node[1] = [self.resolve(r) for r in node[1]]
        self.outputs = [None if r is None else self.resolve(r) for r in self.outputs]
        self._replacements = {}

    def compact(self):
        """Drops deleted nodes and unread constants, renumbering references."""
        self.apply_replacements()
        node_index = {}
        kept = []
        for k, node in enumerate(self.nodes):
            if node is not None:
                node_index[k] = len(kept)
                kept.append(node)
        read = sorted({r[1] for node in kept for r in node[1] if r[0] == "const"}
                      | {r[1] for r in self.outputs if r is not None and r[0] == "const"})
        const_index = {old: new for new, old in enumerate(read)}

        def renumber(ref):
            if ref[0] == "node":
                return ("node", node_index[ref[1]], ref[2])
            if ref[0] == "const":
                return ("const", const_index[ref[1]])
            return ref
        values = {}
        for ref, value in self.values.items():
            if ref[0] != "node" or ref[1] in node_index:
                values[renumber(ref) if ref[0] == "node" else ref] = value
        for node in kept:
            node[1] = [renumber(r) for r in node[1]]
        self.nodes = kept
        self.outputs = [None if r is None else renumber(r) for r in self.outputs]
        self.constants = [self.constants[i] for i in read]
        self.values = values


def reordered(graph, order):
    """A copy of ``graph`` (compacted) with its nodes in ``order`` (a topological order), refs renumbered."""
    position = {old: new for new, old in enumerate(order)}

    def renumber(ref):
        return ("node", position[ref[1]], ref[2]) if ref is not None and ref[0] == "node" else ref
    nodes = [[op, [renumber(r) for r in refs], attrs, n_out] for op, refs, attrs, n_out in
             (graph.nodes[k] for k in order)]
    values = {renumber(ref): value for ref, value in graph.values.items()}
    return PassGraph(nodes, graph.constants, [renumber(r) for r in graph.outputs], graph.input_shapes,
                     graph.variable_shapes, values, graph.variable_dtypes)


def output_refs(graph):
    """The refs of a FuncGraph's output leaves in flatten order (None for Python values)."""
    from ..framework import nest
    if graph.outputs is None:
        return []
    return [None if leaf.ref is None else tuple(leaf.ref) for leaf in nest.flatten(graph.outputs)]

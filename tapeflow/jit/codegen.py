"""Generates the numba source of a graph's jitted segments.

A segment is a run of consecutive nodes that all have a lowering (lowering.py).
Inside it, consecutive elementwise nodes of one output shape form one loop: a
value read only inside its loop stays a scalar local and never touches memory;
a value read later is stored in an array. Reshapes are free (arrays are flat). Arrays
cross the segment boundary flattened to 1-D and C-contiguous; the host gives
them back their static shapes.
"""
import numpy as np

from .lowering import ELEMENTWISE


class Segment:
    """The nodes ``nodes`` [(k, kind)], the refs it reads from outside and the refs read after it."""

    def __init__(self, index, nodes):
        self.index = index
        self.nodes = nodes
        self.inputs = []
        self.outputs = []

    @property
    def name(self):
        return f"segment_{self.index}"


def _strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return list(reversed(strides))


def _index(shape, out_shape, loop_var):
    """The flat index into an array of ``shape`` broadcast against ``out_shape`` at flat ``loop_var``."""
    if tuple(shape) == tuple(out_shape):
        return loop_var
    if int(np.prod(shape)) == 1:
        return "0"
    shape = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    in_strides, out_strides = _strides(shape), _strides(out_shape)
    terms = []
    for d, (n_in, n_out) in enumerate(zip(shape, out_shape)):
        if n_in != 1:
            terms.append(f"(({loop_var} // {out_strides[d]}) % {n_out}) * {in_strides[d]}")
    return " + ".join(terms) or "0"


def _dtype(dtype):
    return f"np.{np.dtype(dtype).name}"


class _SegmentWriter:
    def __init__(self, graph, segment, kinds, shapes, read_after):
        self.graph = graph
        self.segment = segment
        self.kinds = kinds
        self.shapes = shapes
        self.read_after = read_after       # refs produced in the segment and read after it
        self.lines = []
        self.names = {}                    # ref -> name of its flat array in the kernel

    def array(self, ref):
        return self.names[ref]

    def write(self):
        seg = self.segment
        produced = {("node", k, 0) for k, _ in seg.nodes}
        inputs = []
        for k, _ in seg.nodes:
            for r in self.graph.nodes[k][1]:
                if r not in produced and r not in inputs:
                    inputs.append(r)
        seg.inputs = inputs
        for i, r in enumerate(inputs):
            self.names[r] = f"x{i}"
        groups = self._groups()
        for group in groups:
            if group[0][1] in ("elementwise", "reduce"):
                self._loop(group, groups)
            else:
                self._single(group[0][0], group[0][1])
        seg.outputs = [("node", k, 0) for k, _ in seg.nodes if ("node", k, 0) in self.read_after]
        args = ", ".join(self.names[r] for r in inputs)
        outs = "".join(self.names[r] + ", " for r in seg.outputs)
        head = [f"@njit(cache=True, error_model='numpy')", f"def {seg.name}({args}):"]
        return head + ["    " + line for line in self.lines] + [f"    return ({outs})", "", ""]

    def loop_shape(self, k, kind):
        """The shape a node's loop runs over: its output's, or for a sum its input's."""
        return self.shapes[self.graph.nodes[k][1][0]] if kind == "reduce" else self.shapes[("node", k, 0)]

    def _groups(self):
        """Consecutive loop nodes over one shape share a loop, unless a node reads a sum of that loop."""
        groups = []
        for k, kind in self.segment.nodes:
            looped = kind in ("elementwise", "reduce")
            if groups and looped and groups[-1][0][1] in ("elementwise", "reduce") \
                    and self.loop_shape(*groups[-1][0]) == self.loop_shape(k, kind) \
                    and not any(r == ("node", j, 0) for j, kind_j in groups[-1] if kind_j == "reduce"
                                for r in self.graph.nodes[k][1]):
                groups[-1].append((k, kind))
            else:
                groups.append([(k, kind)])
        return groups

    def _loop(self, group, groups):
        members = {("node", k, 0) for k, _ in group}
        readers_outside = set(self.read_after)
        for other in groups:
            if other is not group:
                for k, _ in other:
                    readers_outside.update(self.graph.nodes[k][1])
        out_shape = self.loop_shape(*group[0])
        size = int(np.prod(out_shape))
        stored = [("node", k, 0) for k, kind in group if kind == "elementwise" and ("node", k, 0) in readers_outside]
        for r in stored:
            self.names[r] = f"v{r[1]}"
            self.lines.append(f"v{r[1]} = np.empty({size}, {_dtype(self.graph.values_dtype[r])})")
        for k, kind in group:
            if kind == "reduce":
                ref = ("node", k, 0)
                self.names[ref] = f"v{k}"
                self.lines.append(f"v{k} = np.zeros({int(np.prod(self.shapes[ref]))}, "
                                  f"{_dtype(self.graph.values_dtype[ref])})")
        self.lines.append(f"for i in range({size}):")
        body = []
        for k, kind in group:
            op, refs, attrs, _ = self.graph.nodes[k]
            args = []
            for r in refs:
                if r in members:
                    args.append(f"t{r[1]}")
                else:
                    args.append(f"{self.array(r)}[{_index(self.shapes[r], out_shape, 'i')}]")
            if kind == "reduce":
                axes = {a % len(out_shape) for a in attrs["axes"]}
                kept = tuple(1 if d in axes else n for d, n in enumerate(out_shape))
                body.append(f"v{k}[{_index(kept, out_shape, 'i')}] += {args[0]}")
                continue
            names = dict(zip("ab", args))
            expr = ELEMENTWISE[op]
            # substitute whole-word a/b by the argument expressions (parenthesised)
            out = []
            for token in _tokens(expr):
                out.append(f"({names[token]})" if token in names else token)
            dtype = _dtype(self.graph.values_dtype[("node", k, 0)])
            body.append(f"t{k} = {dtype}({''.join(out)})")
            if ("node", k, 0) in stored:
                body.append(f"v{k}[i] = t{k}")
        self.lines.extend("    " + line for line in body)

    def _single(self, k, kind):
        op, refs, attrs, _ = self.graph.nodes[k]
        ref = ("node", k, 0)
        self.names[ref] = f"v{k}"
        assert kind == "reshape", kind
        self.lines.append(f"v{k} = {self.array(refs[0])}")


def _tokens(expr):
    """Splits an expression into identifier tokens and the text between them."""
    tokens, word = [], ""
    for ch in expr:
        if ch.isalnum() or ch == "_" or (ch == "." and word):
            word += ch
        else:
            if word:
                tokens.append(word)
                word = ""
            tokens.append(ch)
    if word:
        tokens.append(word)
    return tokens


def generate(graph, segments, kinds, shapes, read_after):
    """The module source defining one njit function per segment."""
    lines = ['"""Generated by tapeflow.jit from a traced graph: one numba kernel per jitted segment."""',
             "import math", "", "import numpy as np", "from numba import njit", "", ""]
    for segment in segments:
        lines += _SegmentWriter(graph, segment, kinds, shapes, read_after[segment.index]).write()
    return "\n".join(lines)

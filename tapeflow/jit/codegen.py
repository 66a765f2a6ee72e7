"""Generates the numba source of a graph's jitted segments.

A segment is a run of consecutive nodes that all have a lowering (lowering.py).
Inside it, consecutive elementwise nodes of one output shape form one loop: a
value read only inside its loop stays a scalar local and never touches memory;
a value read later is stored in an array. Reshapes are free (arrays are flat). Arrays
cross the segment boundary flattened to 1-D and C-contiguous; the host gives
them back their static shapes.
"""
import numpy as np

from .lowering import expression, operand_shapes


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


class LoopSpace:
    """The nested loops of one loop group, over ``out_shape``, reading arrays of ``patterns`` shapes.

    Adjacent dimensions along which every array is either read in full or broadcast are merged
    into one loop, so a bias added to a matrix is two loops (rows, columns). Each array is read
    through a view with one axis per loop (length 1 where it is broadcast), indexed by the loop
    counters themselves: no flat index arithmetic, which numba would have to check for a
    negative value at every element, so the inner loop vectorises.
    """

    def __init__(self, out_shape, patterns):
        self.rank = len(out_shape)
        self.out_shape = tuple(out_shape)
        padded = [self.pad(p) for p in patterns]
        merged = []
        for d in range(self.rank):
            if out_shape[d] == 1:
                continue
            if merged and all((p[merged[-1][-1]] == 1) == (p[d] == 1) for p in padded):
                merged[-1].append(d)
            else:
                merged.append([d])
        self.merged = merged
        self.sizes = [int(np.prod([out_shape[d] for d in group])) for group in merged]

    def pad(self, shape):
        return (1,) * (self.rank - len(shape)) + tuple(shape)

    def view_shape(self, shape):
        """The shape of the loop view of a flat array of ``shape`` (one of the patterns)."""
        padded = self.pad(shape)
        return tuple(size if padded[group[0]] != 1 else 1 for size, group in zip(self.sizes, self.merged)) or (1,)

    def subscript(self, shape):
        """The loop view's subscript at the current iteration."""
        padded = self.pad(shape)
        terms = [f"j{m}" if padded[group[0]] != 1 else "0" for m, group in enumerate(self.merged)]
        return ", ".join(terms) or "j0"

    def open(self):
        """The loop headers, as lines (each one level deeper), and the depth of the body."""
        lines = []
        for m, size in enumerate(self.sizes or [1]):
            lines.append("    " * m + f"for j{m} in range({size}):")
        return lines, len(self.sizes or [1])


def _dtype(dtype):
    return f"np.{np.dtype(dtype).name}"


class _SegmentWriter:
    def __init__(self, graph, segment, shapes, dtypes, read_after):
        self.graph = graph
        self.dtypes = dtypes
        self.segment = segment
        self.shapes = shapes
        self.read_after = read_after       # refs produced in the segment and read after it
        self.lines = []
        self.names = {}                    # ref -> name of its flat array in the kernel
        self.n_views = 0                   # loop views declared so far (w0, w1, ...)
        self.literals = self._literals()   # const ref -> the scalar every element of it holds, as source

    def array(self, ref):
        return self.names[ref]

    def _literals(self):
        """Float constants read in loops whose elements are all one finite value: the loops use that value
        (an exact literal of the constant's dtype) instead of reading an array of copies of it."""
        literals = {}
        reshaped = {r for k, kind in self.segment.nodes if kind == "reshape" for r in self.graph.nodes[k][1]}
        for k, _ in self.segment.nodes:
            for r in self.graph.nodes[k][1]:
                c = self.graph.constant(r)
                if c is None or r in reshaped or c.dtype not in (np.float32, np.float64) or c.size == 0:
                    continue
                first = c.reshape(-1)[0]
                if np.isfinite(first) and bool(np.all(c.view(np.uint32 if c.dtype == np.float32 else np.uint64)
                                                       == first.view(np.uint32 if c.dtype == np.float32
                                                                     else np.uint64))):
                    literals[r] = f"{_dtype(c.dtype)}({float(first)!r})"
        return literals

    def write(self):
        seg = self.segment
        produced = {("node", k, 0) for k, _ in seg.nodes}
        inputs = []
        for k, _ in seg.nodes:
            for r in self.graph.nodes[k][1]:
                if r not in produced and r not in inputs and r not in self.literals:
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

    def operand_shapes(self, k):
        op, refs, attrs, _ = self.graph.nodes[k]
        return operand_shapes(op, attrs, [self.shapes[r] for r in refs], self.shapes.get(("node", k, 0)))

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
            self.lines.append(f"v{r[1]} = np.empty({size}, {_dtype(self.dtypes[r])})")
        for k, kind in group:
            if kind == "reduce":
                ref = ("node", k, 0)
                self.names[ref] = f"v{k}"
                self.lines.append(f"v{k} = np.zeros({int(np.prod(self.shapes[ref]))}, "
                                  f"{_dtype(self.dtypes[ref])})")
        kept = {}
        patterns = []
        for k, kind in group:
            for r, shape in zip(self.graph.nodes[k][1], self.operand_shapes(k)):
                if r not in members and r not in self.literals:
                    patterns.append(shape)
            if kind == "reduce":
                axes = {a % len(out_shape) for a in self.graph.nodes[k][2]["axes"]}
                kept[k] = tuple(1 if d in axes else n for d, n in enumerate(out_shape))
                patterns.append(kept[k])
        space = LoopSpace(out_shape, patterns)
        views = {}

        def view(name, shape):
            """``name``[...] through the loop view of ``shape``, declared once before the loop."""
            key = (name, space.view_shape(shape))
            if key not in views:
                views[key] = f"w{self.n_views}"
                self.n_views += 1
                self.lines.append(f"{views[key]} = {name}.reshape({key[1]!r})")
            return f"{views[key]}[{space.subscript(shape)}]"
        body = []
        for k, kind in group:
            op, refs, attrs, _ = self.graph.nodes[k]
            args = [f"t{r[1]}" if r in members else self.literals[r] if r in self.literals
                    else view(self.array(r), shape) for r, shape in zip(refs, self.operand_shapes(k))]
            if kind == "reduce":
                body.append(f"{view(f'v{k}', kept[k])} += {args[0]}")
                continue
            names = dict(zip("ab", args))
            names.update({key: repr(float(value)) for key, value in attrs.items() if type(value) is float})
            # substitute whole-word a/b by the argument expressions (parenthesised)
            expr = "".join(f"({names[token]})" if token in names else token for token in _tokens(expression(op)))
            body.append(f"t{k} = {_dtype(self.dtypes[('node', k, 0)])}({expr})")
            if ("node", k, 0) in stored:
                body.append(f"{view(f'v{k}', out_shape)} = t{k}")
        header, depth = space.open()
        self.lines.extend(header)
        self.lines.extend("    " * depth + line for line in body)

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


HEADER = '"""Generated by tapeflow.jit from a traced graph: its kernels and its host program."""\n\n\n'


def generate(graph, segments, shapes, dtypes, read_after):
    """The module source defining one njit function per segment."""
    lines = ['"""Generated by tapeflow.jit from a traced graph: its kernels and its host program."""',
             "import math", "", "import numpy as np", "from numba import njit", "", ""]
    for segment in segments:
        lines += _SegmentWriter(graph, segment, shapes, dtypes, read_after[segment.index]).write()
    return "\n".join(lines)

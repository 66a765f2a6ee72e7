"""Generates the host program of a compiled graph: one Python function calling kernels and ops in order.

The program is the graph's steps written out as straight-line Python, each value a local
variable: no list of values indexed per read, no dispatch on a step's kind, no per-step
tuple unpacking. What the steps call is bound once, when the program is built (the op
forwards, their attributes, the constants and their flat copies), through ``build``'s
arguments; each call binds the inputs, captures and variables it is given. A value is
deleted after its last read (``del``), as the replay drops it, so memory is freed early and a
state op (an optimizer's in-place update) finds its variable's buffer unshared.

Values produced by a kernel come back flat and C-contiguous; they get their static shape only
where something other than a kernel reads them. A 2-D MatMul with static shapes is called as
numpy's matmul on (transposed) views, which is what its forward computes. Bias + relu and its
gradient write over their first operand where the program made it at this call (a product or a
loop's result) and nothing else reads it (in_place.py). A variable read is kept until the next
read of the same variable when no step between them may write it, so both get one snapshot.
"""
import numpy as np

from ..framework.recording import _FORWARDS, state_node_parts, state_op_variable_counts
from ..graph_passes.pass_graph import VARIABLE_ASSIGN, VARIABLE_READ
from ..graph_replay import ASSIGN_METHODS
from . import in_place

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


HELPERS = ("flat", "Tensor", "count_error", "matmul", "bias_relu_in_place", "bias_relu_grad_in_place")


def _name(ref):
    kind = ref[0]
    if kind == "node":
        return f"n{ref[1]}_{ref[2]}"
    return {"in": "i", "const": "c", "capture": "x"}[kind] + str(ref[1])


class HostWriter:
    """The source of ``build(F, A, C, CF, H)`` (H: the HELPERS by name) returning the program
    ``run(inputs, captures, variables)`` -> tuple of output arrays (None for Python-valued outputs)."""

    def __init__(self, graph, segments, shapes, forwards):
        self.graph = graph
        self.segments = segments
        self.shapes = shapes
        self.forwards = forwards          # node -> the forward to call (wrapped where a shortcut applies)
        self.steps = []                   # [(lines, names read, names written)]
        self.attrs = {}                   # node -> attrs dict passed to its call
        self.flat_of = {}                 # ref -> name of its flat array (kernel results, constants)
        self.called = set()               # nodes whose forward the program calls
        self.unshaped = {}                # name of a kernel result -> (its flat name, its shape), until shaped
        self.arrays = set()               # names of values known to be numpy arrays
        self.fresh = set()                # names of arrays made at this call (products, loops' results)
        self.users = graph.users()
        self.effects = {}                 # step -> ("read", variable, name) or ("write", variables or None: all)

    def _flat_arg(self, ref):
        if ref in self.flat_of:
            return self.flat_of[ref]
        if ref[0] == "const":
            name = f"cf{ref[1]}"
            self.flat_of[ref] = name
            return name
        name = _name(ref)
        if name in self.arrays:
            return f"{name}.reshape(-1)"      # a view where C-contiguous, else a C-ordered copy
        return f"flat({name})"

    def write(self):
        g = self.graph
        starts = {seg.nodes[0][0]: seg for seg in self.segments}
        inside = {k for seg in self.segments for k, _ in seg.nodes}
        for k, (op, refs, attrs, n_out) in enumerate(g.nodes):
            if k in starts:
                self._segment(starts[k])
            if k in inside:
                continue
            args = [_name(r) for r in refs]
            if not (op == "MatMul" and self._matmul(k, refs, attrs, args, "") is not None):
                self._shaped(args)
            outs = [_name(("node", k, j)) for j in range(n_out)]
            if op == VARIABLE_READ:
                self.effects[len(self.steps)] = ("read", attrs["variable"], outs[0])
                self._step([f"{outs[0]} = variables[{int(attrs['variable'])}]._as_tensor()._value"], [], outs)
                self.arrays.add(outs[0])
            elif op == VARIABLE_ASSIGN:
                self.effects[len(self.steps)] = ("write", {attrs["variable"]})
                method = ASSIGN_METHODS[attrs["mode"]]
                self._step([f"variables[{int(attrs['variable'])}].{method}(Tensor({args[0]}))"], args, [])
            elif state_op_variable_counts(op) is not None:
                updated, own = state_node_parts(attrs)
                self.effects[len(self.steps)] = ("write", set(updated))
                listed = ", ".join(f"variables[{int(i)}]" for i in updated)   # only numbers enter the source
                self.called.add(k)
                if getattr(self.forwards[k], "binds_attrs", False):      # its attributes are bound in it
                    self._step([f"f{k}([{listed}], {', '.join(args)})"], args, [])
                else:
                    self.attrs[k] = own
                    self._step([f"f{k}([{listed}], {''.join(a + ', ' for a in args)}**a{k})"], args, [])
            else:
                if not g.is_pure(k):
                    self.effects[len(self.steps)] = ("write", None)     # a call that may touch any variable
                self._op(k, op, refs, attrs, n_out, args, outs)
        outputs = [None if r is None else _name(r) for r in g.outputs]
        self._shaped([o for o in outputs if o is not None])
        body = self._with_deletions(set(o for o in outputs if o is not None))
        used_inputs = sorted({r for node in g.nodes for r in map(tuple, node[1]) if r[0] == "in"}
                             | {r for r in g.outputs if r is not None and r[0] == "in"})
        used_captures = sorted({r for node in g.nodes for r in map(tuple, node[1]) if r[0] == "capture"}
                               | {r for r in g.outputs if r is not None and r[0] == "capture"})
        lines = ["def build(F, A, C, CF, H):"]
        for helper in HELPERS:
            lines.append(f"    {helper} = H[{helper!r}]")
        for i in sorted({r[1] for node in g.nodes for r in map(tuple, node[1]) if r[0] == "const"}
                        | {r[1] for r in g.outputs if r is not None and r[0] == "const"}):
            lines.append(f"    c{i} = C[{i}]")
        for ref, name in self.flat_of.items():
            if ref[0] == "const":
                lines.append(f"    {name} = CF[{ref[1]}]")
        for k in sorted(self.called):
            lines.append(f"    f{k} = F[{k}]")
        for k in sorted(self.attrs):
            lines.append(f"    a{k} = A[{k}]")
        lines.append("")
        lines.append("    def run(inputs, captures, variables):")
        for r in used_inputs:
            lines.append(f"        {_name(r)} = inputs[{r[1]}]._value")
        for r in used_captures:
            lines.append(f"        {_name(r)} = captures[{r[1]}]._value")
        lines += ["        " + line for line in body]
        lines.append(f"        return ({''.join((o or 'None') + ', ' for o in outputs)})")
        lines += ["    return run", "", ""]
        return lines

    def _step(self, lines, reads, writes):
        self.steps.append((lines, list(reads), writes))

    def _segment(self, seg):
        kinds = dict(seg.nodes)
        flats = []
        reads = []
        for r in seg.inputs:
            arg = self._flat_arg(r)
            flats.append(arg)
            reads.append(_name(r) if arg.endswith(".reshape(-1)") or arg.startswith("flat(") else arg)
        outs = []
        for r in seg.outputs:
            flat_name = "f" + _name(r)[1:]
            self.flat_of[r] = flat_name
            self.unshaped[_name(r)] = (flat_name, tuple(self.shapes[r]))
            if kinds[r[1]] != "reshape":      # a loop's result is allocated by the kernel at this call; a
                self.fresh.add(_name(r))      # reshape's may be an input the kernel passes through
            outs.append(flat_name)
        self._step([f"{''.join(o + ', ' for o in outs)}= {seg.name}({', '.join(flats)})"], reads, outs)

    def _shaped(self, names):
        """Gives kernel results among ``names`` their static shapes, where not done yet."""
        for name in names:
            if name in self.unshaped:
                flat_name, shape = self.unshaped.pop(name)
                self.arrays.add(name)
                self.steps.append(([f"{name} = {flat_name}.reshape({shape!r})"], [flat_name], [name]))

    def _matmul(self, k, refs, attrs, args, out):
        """A direct numpy matmul where the forward's own steps are known from static shapes, else None."""
        if self.forwards[k] is not _FORWARDS["MatMul"][0] or set(attrs) - {"transpose_a", "transpose_b"}:
            return None
        a_shape, b_shape = (self.shapes.get(tuple(r)) for r in refs)
        dtypes = [self.graph.dtype(tuple(r)) for r in refs]
        if a_shape is None or b_shape is None or any(d not in FLOATS for d in dtypes) or dtypes[0] != dtypes[1]:
            return None
        a, b = (self._operand(r, name) for r, name in zip(refs, args))
        ta, tb = bool(attrs.get("transpose_a")), bool(attrs.get("transpose_b"))
        if len(a_shape) == 2 and len(b_shape) == 2:
            return f"{out} = matmul({a + '.T' if ta else a}, {b + '.T' if tb else b})"
        flat = self.flat_of.get(tuple(refs[0]))
        if len(a_shape) > 2 and len(b_shape) == 2 and not ta and flat is not None and 0 not in a_shape \
                and args[0] in self.unshaped:
            # the forward's stack-of-matrices case on an operand known C-contiguous: one product
            out_shape = self.shapes.get(("node", k, 0))
            if out_shape is None:
                return None
            return (f"{out} = matmul({flat}.reshape(({int(np.prod(a_shape[:-1]))}, {a_shape[-1]})), "
                    f"{b + '.T' if tb else b}).reshape({tuple(out_shape)!r})")
        return None

    def _in_place(self, k, op, refs, args):
        """Whether node k may write its result over its first operand: a product this program made,
        read by nothing else (node k is its only reader, and it is no output)."""
        first = tuple(refs[0])
        if args[0] not in self.fresh or self.users.get(first, 0) != 1 or first in self.graph.outputs:
            return False
        return in_place.applies(op, [self.shapes.get(tuple(r)) for r in refs],
                                [self.graph.dtype(tuple(r)) for r in refs]) and len(refs) == 2 and args[0] != args[1]

    def _operand(self, ref, name):
        """A 2-D operand by name: a kernel result not yet shaped is its flat array, reshaped in place."""
        if name in self.unshaped:
            flat_name, shape = self.unshaped[name]
            return f"{flat_name}.reshape({shape!r})"
        return name

    def _op(self, k, op, refs, attrs, n_out, args, outs):
        call_args = ", ".join(args)
        if op == "MatMul":
            line = self._matmul(k, refs, attrs, args, outs[0])
            if line is not None:
                reads = [self.unshaped[a][0] if a in self.unshaped else a for a in args]
                self._step([line], reads, outs)
                self.fresh.add(outs[0])
                self.arrays.add(outs[0])
                return
        if self._in_place(k, op, refs, args):
            helper = {"BiasRelu": "bias_relu_in_place", "BiasReluGrad": "bias_relu_grad_in_place"}[op]
            self._step([f"{', '.join(outs)} = {helper}({call_args})"], args, outs)
            self.arrays.update(outs)
            return
        if op == "Reshape" and len(refs) == 1 and self.shapes.get(tuple(refs[0])) is not None \
                and self.shapes.get(("node", k, 0)) is not None:
            # a reshape between proven shapes cannot fail: the forward's error handling is not needed
            self._step([f"{outs[0]} = {args[0]}.reshape({tuple(self.shapes[('node', k, 0)])!r})"], args, outs)
            if args[0] in self.arrays or args[0] in self.unshaped:
                self.arrays.add(outs[0])
            return
        self.called.add(k)
        if attrs and not getattr(self.forwards[k], "binds_attrs", False):
            self.attrs[k] = attrs
            call = f"f{k}({call_args + ', ' if args else ''}**a{k})"
        else:
            call = f"f{k}({call_args})"
        if _FORWARDS[op][1] == 1:
            self._step([f"{outs[0]} = {call}"], args, outs)
            return
        lines = [f"r = {call}",
                 f"if len(r) != {n_out}:",
                 f"    raise count_error({op!r}, {n_out}, len(r))"]
        if n_out:
            lines.append(f"{''.join(o + ', ' for o in outs)}= r")
        lines.append("del r")
        self._step(lines, args, outs)

    def _with_deletions(self, kept):
        """The steps' lines, each value deleted after the step that reads it last."""
        last = {}
        for s, (_, reads, writes) in enumerate(self.steps):
            for name in writes:
                last[name] = s
            for name in reads:
                last[name] = s
        # A read is kept alive until the next read of its variable when nothing writes that variable in
        # between: the variable then hands the second read the same snapshot instead of making a new one.
        held = {}
        for s, effect in sorted(self.effects.items()):
            if effect[0] == "read":
                earlier = held.get(effect[1])
                if earlier is not None and last[earlier] < s:
                    last[earlier] = s
                held[effect[1]] = effect[2]
            elif effect[1] is None:
                held.clear()
            else:
                for v in effect[1]:
                    held.pop(v, None)
        dead = [[] for _ in self.steps]
        for name, s in last.items():
            if name not in kept and name[0] in "nf":       # node values and kernel results, not inputs
                dead[s].append(name)
        body = []
        for (lines, _, _), names in zip(self.steps, dead):
            body += lines
            if names:
                body.append("del " + ", ".join(sorted(set(names))))
        return body

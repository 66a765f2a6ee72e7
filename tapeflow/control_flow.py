"""tf.cond, tf.case, tf.switch_case and tf.while_loop, eager and traced, differentiable to any order.

Eagerly (and whenever the predicate is not a symbolic tensor) they run Python
directly: tapes record the ops as usual. Inside a trace, ``cond`` with a symbolic
predicate and every ``while_loop`` become one ``If`` / ``While`` node
(ops/control_flow_ops.py) that chooses or loops each time the graph replays.

Sub-graphs. Each branch, loop condition and body is traced into a BranchGraph,
a child of the graph being traced. Whatever it uses from outside (tensors of
enclosing graphs, constants, variable reads) becomes an extra input, so a
sub-graph is a pure function of its inputs: no captures, no constants. The
node's inputs are the predicate or loop variables, then those outer tensors.
A variable read inside is hoisted: read once before the node and passed in, so
tapes see it and gradients reach the variable. A variable that the sub-graph
also assigns is read in place instead (the sub-graph is traced again with it
marked), so a loop sees its own updates.

Gradients, written with ``cond`` and ``while_loop`` themselves, so that the
gradient of a gradient is built the same way:
- If: ``cond(pred, vjp of the then branch, vjp of the else branch)``.
- While(x0) -> (x_N, N): the node also outputs its iteration count N. The
  gradient (1) recomputes the loop in a ``while_loop`` that stacks the loop
  variables before each iteration (the states x_0 .. x_{N-1}), then (2) runs a
  ``while_loop`` for k = N-1 down to 0 that applies the body's vector-Jacobian
  product at state x_k to the running cotangent, summing the cotangents of the
  captured tensors. Exact, O(N) time (about three forward passes) and memory
  (the stacked states); loop variables must keep their shape across
  iterations to be stacked.
"""
import numpy as np

from .framework import nest
from .framework import recording
from .framework.conversion import convert_to_tensor
from .framework.errors import InvalidArgumentError
from .framework.recording import execute, state_node_parts, state_op_variable_counts
from .framework.registry import RegisterGradient
from .framework.tensor import Tensor
from .framework.tensor_shape import TensorShape
from .framework.tensor_spec import TensorSpec
from .framework.variables import Variable
from .function import VARIABLE_ASSIGN, ConcreteFunction, FuncGraph, GraphTensor
from .ops import array_ops, math_ops
from .ops.random_ops import STATEFUL_RANDOM_OPS
from .ops.control_flow_ops import output_count, truth, zeros_like
from .tensor_array import TensorArray, get_item, reserve_like, write_row


# ------------------------------------------------------------- sub-graphs ---
class BranchGraph(FuncGraph):
    """A control-flow sub-graph traced inside ``parent``; what it takes from outside becomes inputs."""

    def __init__(self, name, parent, local_variables):
        super().__init__(name, parent=parent)
        self.local_variables = local_variables   # ids of variables read in place (assigned in the node)
        self.hoisted = {}                        # id(variable) -> the tensor standing for its read outside
        self.custom_gradients = parent.custom_gradients   # the root graph keeps them for SavedModel

    def ref(self, tensor):
        ref = self._refs.get(id(tensor))
        if ref is not None:
            return ref
        if not isinstance(tensor, GraphTensor) or self._is_ancestor(tensor._graph):
            ref = ("capture", len(self.captures))    # an outer tensor or a constant: an input of the node
            self.captures.append(tensor)
            self._register(tensor, ref)
            return ref
        return super().ref(tensor)   # a tensor of an unrelated graph: FuncGraph's error

    def variable_index(self, var):
        self.parent.variable_index(var)   # the enclosing function lists every variable it may touch
        return super().variable_index(var)

    def read_variable(self, var):
        if id(var) in self.local_variables:
            return super().read_variable(var)
        t = self.hoisted.get(id(var))
        if t is None:
            outer = self.parent.read_variable(var)
            t = GraphTensor(var._value, self, tensor_id=var._id)
            self._register(t, ("capture", len(self.captures)))
            self.captures.append(outer)
            self.hoisted[id(var)] = t
        return t


def _subgraphs(graph):
    for _, _, attrs, _ in graph.nodes:
        for value in attrs.values():
            if isinstance(value, ConcreteFunction):
                yield value.graph


def _assigned_variables(graph):
    """Ids of the variables ``graph`` (or a sub-graph) changes: assigns and state ops (optimizer updates)."""
    found = set()
    for op, _, attrs, _ in graph.nodes:
        if op == VARIABLE_ASSIGN:
            found.add(id(graph.variables[attrs["variable"]]))
        elif state_op_variable_counts(op) is not None:
            found.update(id(graph.variables[i]) for i in state_node_parts(attrs)[0])
    for sub in _subgraphs(graph):
        found |= _assigned_variables(sub)
    return found


def _output_tensor(leaf, what):
    if isinstance(leaf, Variable):
        return leaf._as_tensor()
    if isinstance(leaf, Tensor):
        return leaf
    if isinstance(leaf, (bool, int, float, np.ndarray, np.generic)):
        return convert_to_tensor(leaf)
    raise TypeError(f"{what} must return tensors (in lists, tuples and dicts), got {type(leaf).__name__}")


def _trace_one(fn, specs, parent, local, name, what):
    graph = BranchGraph(name, parent, frozenset(local))
    with recording.tracing_into(graph):
        placeholders = [graph.placeholder(spec, value) for spec, value in specs]
        structure = fn(*placeholders)
        flat = [_output_tensor(leaf, what) for leaf in _flatten(structure)]
        graph.set_outputs(flat)
    return graph, structure


def close_subgraph(graph, shared, position):
    """Turns the graph's captures into trailing inputs: ``shared`` (the node's extra inputs)."""
    first = len(graph.inputs)
    moved = {("capture", i): ("in", first + position[id(t)]) for i, t in enumerate(graph.captures)}
    graph.nodes = [[op, [moved.get(tuple(r), r) for r in refs], attrs, n] for op, refs, attrs, n in graph.nodes]
    for leaf in graph.outputs:
        if leaf.ref is not None:
            leaf.ref = moved.get(tuple(leaf.ref), leaf.ref)
    for t in shared:
        graph.input_specs.append(TensorSpec(t.shape, t.dtype))
        graph.inputs.append(GraphTensor(t._value, graph))
    graph.captures = []


def trace_subgraphs(functions, specs, name, what):
    """Traces each ``fn(*placeholders)`` (one placeholder per (spec, value) of ``specs``) as a sub-graph
    of the graph being traced. Returns ([ConcreteFunction], [returned structure], [outer tensors]):
    every function takes the placeholders, then all the outer tensors any of them uses."""
    parent = recording.tracing_graph()
    local = set(getattr(parent, "local_variables", ()))
    while True:
        traced = [_trace_one(fn, specs, parent, local, f"{name}_{k}", what) for k, fn in enumerate(functions)]
        graphs = [g for g, _ in traced]
        assigned = set().union(*(_assigned_variables(g) for g in graphs))
        hoisted = set().union(*(g.hoisted for g in graphs))
        if not assigned & hoisted:
            break
        local |= assigned
    shared, position = [], {}
    for g in graphs:
        for t in g.captures:
            if id(t) not in position:
                position[id(t)] = len(shared)
                shared.append(t)
    functions = []
    for g in graphs:
        outputs = g.structured_outputs
        close_subgraph(g, shared, position)
        function = ConcreteFunction(g, name=g.name)
        function.trace_outputs = [t._value for t in outputs]
        functions.append(function)
    return functions, [s for _, s in traced], shared


def _flatten(structure):
    """Leaves of a structure, TensorArrays expanded into the tensors that carry them."""
    out = []
    for leaf in nest.flatten(structure):
        if isinstance(leaf, TensorArray):
            out.extend(leaf._flow())
        else:
            out.append(leaf)
    return out


def _pack(structure, flat):
    """Inverse of ``_flatten`` for ``structure``'s shape (TensorArrays rebuilt around their tensors)."""
    flat = iter(flat)
    leaves = [leaf._rebuilt(flat) if isinstance(leaf, TensorArray) else next(flat) for leaf in nest.flatten(structure)]
    return nest.pack_sequence_as(structure, leaves)


def _symbolic(*tensors):
    return recording.tracing_graph() is not None and any(isinstance(t, GraphTensor) for t in tensors)


def _python_truth(pred):
    if isinstance(pred, (Tensor, Variable)):
        return truth(convert_to_tensor(pred)._value)
    return bool(pred)


# ------------------------------------------------------------------- cond ---
def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; a symbolic ``pred`` decides at each call."""
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if not _symbolic(pred):
        return true_fn() if _python_truth(pred) else false_fn()
    if pred.shape.rank not in (None, 0):
        raise ValueError(f"pred must be a scalar, got a tensor of shape {pred.shape}")
    (then_f, else_f), (then_s, else_s), shared = trace_subgraphs([true_fn, false_fn], [], "cond", "cond branches")
    try:
        nest.assert_same_structure(then_s, else_s)
    except ValueError:
        raise ValueError("true_fn and false_fn arguments to tf.cond must have the same number, type, and overall "
                         f"structure of return values.\n\ntrue_fn output: {then_s}\nfalse_fn output: "
                         f"{else_s}") from None
    for i, (a, b) in enumerate(zip(then_f.graph.structured_outputs, else_f.graph.structured_outputs)):
        if a.dtype != b.dtype:
            raise TypeError(f"true_fn and false_fn arguments to tf.cond must have the same number, type, and "
                            f"overall structure of return values: output {i} is {a.dtype.name} in true_fn and "
                            f"{b.dtype.name} in false_fn")
    outputs = execute("If", (convert_to_tensor(pred),) + tuple(shared),
                      {"then_branch": then_f, "else_branch": else_f})
    for out, a, b in zip(outputs, then_f.graph.structured_outputs, else_f.graph.structured_outputs):
        out._static_shape = _most_specific(a.shape, b.shape)   # the branches may disagree
    return _pack(then_s, list(outputs))


def _unrepeatable(graph):
    """What in ``graph`` (or its sub-graphs) would not repeat when the graph runs again, or None: a
    variable assignment or update (it would happen twice), a draw from a random op's hidden state (it
    would draw other numbers), pulling the next element of a dataset iterator (an op whose forward
    declares ``unrepeatable``)."""
    for op_type, _, attrs, _ in graph.nodes:
        if op_type == VARIABLE_ASSIGN:
            return "assigns a variable, which would be assigned again"
        if state_op_variable_counts(op_type) is not None:
            return f"updates variables ({op_type}), which would be updated again"
        if op_type in STATEFUL_RANDOM_OPS:
            return f"draws random numbers ({op_type}), which would draw other numbers"
        try:
            what = getattr(recording.forward_of(op_type)[0], "unrepeatable", None)
        except LookupError:    # a variable read node
            what = None
        if what is not None:
            return what
        for value in attrs.values():
            if isinstance(value, ConcreteFunction):
                what = _unrepeatable(value.graph)
                if what is not None:
                    return what
    return None


def _refuse_rerun(functions, node):
    """The gradients of If and While run their sub-graphs again: refused when that would not repeat them
    (a silently wrong gradient or a doubled side effect otherwise)."""
    for function in functions:
        what = _unrepeatable(function.graph)
        if what is not None:
            raise NotImplementedError(f"Cannot differentiate through this {node}: its gradient runs the {node}'s "
                                      f"sub-graph again, and the sub-graph {what}. Keep side effects and random "
                                      f"draws out of the {node} you differentiate (draw the numbers before it "
                                      "and pass them in), or record the tape inside the loop body (a training "
                                      "step per batch) instead of around the loop.")


@RegisterGradient("If")
def _if_grad(op, *upstream):
    _refuse_rerun([op.attrs["then_branch"], op.attrs["else_branch"]], "tf.cond")
    pred, inputs = op.inputs[0], op.inputs[1:]
    wanted = [i for i, t in enumerate(inputs) if t.dtype.is_floating or t.dtype.is_complex]
    used = [k for k, o in enumerate(op.outputs) if o.dtype.is_floating or o.dtype.is_complex]

    def branch_vjp(branch):
        return lambda: _vjp(branch, list(inputs), wanted, [upstream[k] for k in used], used)
    grads = cond(pred, branch_vjp(op.attrs["then_branch"]), branch_vjp(op.attrs["else_branch"]))
    result = [None] * len(op.inputs)
    for i, g in zip(wanted, grads):
        result[1 + i] = g
    return result


def _vjp(function, inputs, wanted, upstream, used):
    """Gradients of ``function``'s outputs ``used`` (weighted by ``upstream``) with respect to
    ``inputs[wanted]``; zeros where an input does not reach them."""
    from .backprop import GradientTape
    with GradientTape(watch_accessed_variables=False) as tape:
        sources = [array_ops.identity(t) for t in inputs]
        for i in wanted:
            tape.watch(sources[i])
        outputs = function.call_flat(sources)
    if not wanted:
        return []
    grads = tape.gradient([outputs[k] for k in used], [sources[i] for i in wanted], output_gradients=upstream,
                          unconnected_gradients="none")
    return [zeros_like(sources[i]) if g is None else g for i, g in zip(wanted, grads)]


# ------------------------------------------------------------- case ---
def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``branch_fns[branch_index]()``; an index out of range runs ``default`` (the last branch if None)."""
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    else:
        pairs = [item if isinstance(item, tuple) else (k, item) for k, item in enumerate(branch_fns)]
    if not pairs:
        raise ValueError("branch_fns must not be empty")
    keys = [k for k, _ in pairs]
    if keys != list(range(len(keys))):
        raise ValueError(f"branch_fns keys must be 0..{len(keys) - 1}, got {keys}")
    fns = [fn for _, fn in pairs]
    for fn in fns + ([] if default is None else [default]):
        if not callable(fn):
            raise TypeError(f"branch_fns and default must be callables, got {fn!r}")
    default = fns[-1] if default is None else default
    if not _symbolic(branch_index):
        index = int(convert_to_tensor(branch_index)._value)
        return fns[index]() if 0 <= index < len(fns) else default()
    index = convert_to_tensor(branch_index)

    def chain(k):
        if k == len(fns):
            return default()
        return cond(math_ops.equal(index, k), fns[k], lambda: chain(k + 1))
    return chain(0)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate (``default`` if none; without it, the last function)."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs:
        if default is None:
            raise ValueError("pred_fn_pairs is empty and no default was given")
        return default()
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"Each entry of pred_fn_pairs must be a (predicate, callable) pair, got {pair!r}")
    preds = [p for p, _ in pairs]
    if not _symbolic(*preds):
        truths = [_python_truth(p) for p in preds]
        if exclusive and sum(truths) > 1:
            raise InvalidArgumentError(f"Input error: exclusive=True and more than 1 conditions ({sum(truths)}) "
                                       "evaluated as True")
        for t, (_, fn) in zip(truths, pairs):
            if t:
                return fn()
        if default is None:
            return pairs[-1][1]()
        return default()
    last = pairs[-1][1] if default is None else default
    body = pairs[:-1] if default is None else pairs

    def chain(k):
        if k == len(body):
            return last()
        return cond(body[k][0], body[k][1], lambda: chain(k + 1))
    return chain(0)


# ------------------------------------------------------------- while_loop ---
def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, at most ``maximum_iterations``
    times. Inside a trace it becomes a While node; ``parallel_iterations`` and ``swap_memory`` are
    accepted and have no effect (iterations run one after the other)."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars

    def step(state):
        result = body(*state)
        if single or (len(structure) == 1 and not isinstance(result, (list, tuple))):
            result = [result]
        try:
            nest.assert_same_structure(list(structure), list(result))
        except ValueError:
            raise ValueError(f"body of tf.while_loop must return the same structure as loop_vars: loop_vars "
                             f"{structure}, body returned {result}") from None
        return result

    if recording.tracing_graph() is None:
        state = structure
        limit = None if maximum_iterations is None else int(convert_to_tensor(maximum_iterations)._value)
        count = 0
        while (limit is None or count < limit) and _python_truth(cond(*state)):
            state = step(state)
            count += 1
        return state[0] if single else state
    state = _traced_while(cond, step, structure, None if shape_invariants is None else
                          _invariants(structure, [shape_invariants] if single else shape_invariants),
                          maximum_iterations)
    return state[0] if single else state


def _most_specific(a, b):
    """The shape known of a value that has shape ``a`` or shape ``b``."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def _relaxed(shape, invariant):
    return TensorShape(invariant) if invariant is not None else shape


def _traced_while(cond, step, structure, shape_invariants, maximum_iterations):
    flat = [convert_to_tensor(t) if not isinstance(t, Variable) else t._as_tensor() for t in _flatten(structure)]
    invariants = shape_invariants or _invariants(structure, None)
    counter = maximum_iterations is not None
    if counter:
        limit = convert_to_tensor(maximum_iterations, dtype="int32")
        flat = [convert_to_tensor(np.int32(0))] + flat
        invariants = [None] + invariants

    def cond_fn(*tensors):
        state = _pack(structure, tensors[1:] if counter else tensors)
        result = convert_to_tensor(cond(*state))
        if counter:
            result = math_ops.logical_and(math_ops.less(tensors[0], limit), result)
        return result

    def body_fn(*tensors):
        new = _flatten(step(_pack(structure, tensors[1:] if counter else tensors)))
        return [math_ops.add(tensors[0], np.int32(1))] + new if counter else new

    for _ in range(2):
        specs = [(TensorSpec(_relaxed(t.shape, inv), t.dtype), t._value) for t, inv in zip(flat, invariants)]
        (cond_f, body_f), _, shared = trace_subgraphs([cond_fn, body_fn], specs, "while",
                                                      "while_loop's cond and body")
        shaped = _first_writes(flat, body_f.graph.structured_outputs)
        if all(a is b for a, b in zip(shaped, flat)):
            break
        flat = shaped   # a TensorArray whose element shape the first write sets: traced again with it
    _check_shape_free(cond_fn, body_fn, flat, invariants, specs, (cond_f, body_f), shared)
    (out,) = cond_f.graph.structured_outputs
    if out.dtype.name != "bool" or out.shape.rank not in (None, 0):
        raise TypeError(f"cond of tf.while_loop must return a scalar boolean, got {out}")
    for i, (t, o, inv) in enumerate(zip(flat, body_f.graph.structured_outputs, invariants)):
        if o.dtype != t.dtype:
            raise TypeError(f"Loop variable {i} enters the loop with dtype {t.dtype.name}, but has dtype "
                            f"{o.dtype.name} after one iteration.")
        allowed = _relaxed(t.shape, inv)
        if not allowed.is_compatible_with(o.shape):
            raise ValueError(f"Input tensor '{t}' enters the loop with shape {t.shape}, but has shape {o.shape} "
                             "after one iteration. To allow the shape to vary across iterations, use the "
                             "`shape_invariants` argument of tf.while_loop to specify a less-specific shape.")
    results = execute("While", tuple(flat) + tuple(shared), {"cond": cond_f, "body": body_f})
    for out, invariant in zip(results, invariants):
        if invariant is not None and invariant.rank is not None:
            out._static_shape = invariant   # a relaxed dimension is unknown after the loop, as in TensorFlow
    final = list(results[:len(flat)])
    return _pack(structure, final[1:] if counter else final)


def _check_shape_free(cond_fn, body_fn, flat, invariants, specs, traced, shared):
    """A loop variable whose shape_invariants leave a dimension unknown takes other sizes in later
    iterations, but the body was traced at its first size: traced again at another size, the body
    must give the same graph (as tf.function checks an input_signature), or the loop is refused."""
    relaxed = [inv is not None and inv.rank is not None and None in inv.dims for inv in invariants]
    if not any(relaxed):   # (a TensorArray's buffer may grow too, but only runs its own shape-free ops)
        return

    def other_size(spec_value, is_relaxed):
        spec, value = spec_value
        if not is_relaxed:
            return spec_value
        shape = tuple(d + 1 if spec.shape.dims[i] is None else d for i, d in enumerate(value.shape))
        return spec, np.ones(shape, value.dtype)
    others = [other_size(sv, r) for sv, r in zip(specs, relaxed)]
    again, _, shared_again = trace_subgraphs([cond_fn, body_fn], others, "while", "while_loop's cond and body")

    def fingerprint(functions, outer):
        constants = [(c._value.dtype.str, c._value.shape, c._value.tobytes()) for c in outer
                     if not isinstance(c, GraphTensor)]
        return [f.graph.signature_of_nodes() for f in functions], constants
    if fingerprint(traced, shared) != fingerprint(again, shared_again):
        raise ValueError("The body or condition of this tf.while_loop depends on the size of a loop variable that "
                         "shape_invariants leave unknown (traced at two sizes, it gives two different graphs), so "
                         "it cannot serve the sizes later iterations have: compute sizes with tf.shape, not from "
                         "Python values")


def _first_writes(flat, outputs):
    """``flat`` with each empty TensorArray buffer that the body gives an element shape replaced by zeros
    of that shape (so the loop variable keeps one shape across iterations)."""
    out = []
    for t, o in zip(flat, outputs):
        before, after = t._value.shape, o._value.shape
        if t._value.size == 0 and len(before) >= 1 and len(after) >= 1 and before[0] == after[0] \
                and before[1:] != after[1:] and o.shape.is_fully_defined():
            rows = array_ops.shape(t)[0]
            t = execute("TensorListReserve", (rows,), {"dtype": t.dtype.name, "element_shape": list(after[1:])})
        out.append(t)
    return out


def _invariants(structure, invariants):
    """One shape invariant (TensorShape or None) per flat loop tensor; a TensorArray's buffer may grow."""
    if isinstance(structure, TensorArray):
        return [TensorShape(None)]
    if nest.is_nested(structure):
        keys = sorted(structure, key=nest._sort_key) if isinstance(structure, dict) else range(len(structure))
        if invariants is not None and (not nest.is_nested(invariants) or len(invariants) != len(structure)):
            raise ValueError(f"shape_invariants {invariants} do not have the structure of loop_vars {structure}")
        return [s for k in keys for s in _invariants(structure[k], None if invariants is None else invariants[k])]
    return [None if invariants is None else TensorShape(invariants)]


def _differentiable(t):
    return t.dtype.is_floating or t.dtype.is_complex


@RegisterGradient("While")
def _while_grad(op, *upstream):
    body = op.attrs["body"]
    _refuse_rerun([body], "tf.while_loop")
    n = output_count(body)
    if not any(_differentiable(t) for t in op.inputs[:n]):
        return [None] * len(op.inputs)
    upstream = [convert_to_tensor(g) for g in upstream[:n]]
    arguments = list(op.inputs) + [op.outputs[n]] + [upstream[i] for i in range(n) if _differentiable(op.inputs[i])]
    if recording.tracing_graph() is not None:
        return _while_gradient(body, n, arguments)
    # Eagerly, the two gradient loops run as While nodes of a graph traced once per body and shapes (the
    # loops' iterations replay sub-graphs on arrays instead of dispatching each op); an outer tape records
    # those nodes, so the gradient of this gradient is built the same way.
    key = tuple((t.dtype.name, tuple(t.shape)) for t in arguments)
    cache = body.__dict__.setdefault("_gradient_functions", {})
    function = cache.get(key)
    if function is None:
        graph = FuncGraph(f"{body.name}_gradient")
        with recording.tracing_into(graph):
            placeholders = [graph.placeholder(TensorSpec.from_tensor(t), t._value) for t in arguments]
            graph.set_outputs(_while_gradient(body, n, placeholders))
        function = cache[key] = ConcreteFunction(graph)
    return function.call_flat(arguments)


def _while_gradient(body, n, arguments):
    """The While node's input gradients. ``arguments``: its inputs (n loop variables, then the captured
    tensors), its iteration count, then the upstream gradients of its differentiable loop variables."""
    n_inputs = len(arguments) - 1 - sum(1 for t in arguments[:n] if _differentiable(t))
    x0, captured = list(arguments[:n]), list(arguments[n:n_inputs])
    count, upstream_used = arguments[n_inputs], list(arguments[n_inputs + 1:])
    var_idx = [i for i in range(n) if _differentiable(x0[i])]
    cap_idx = [j for j, t in enumerate(captured) if _differentiable(t)]
    upstream = dict(zip(var_idx, upstream_used))

    # (1) the states before each iteration, stacked: x_0 .. x_{N-1} in buffers of N rows
    def history_body(k, *rest):
        state, stacks = list(rest[:n]), list(rest[n:])
        for i, (x, first) in enumerate(zip(state, x0)):
            if tuple(x.shape) != tuple(first.shape):
                raise ValueError(f"Cannot differentiate tf.while_loop: loop variable {i} changes shape across "
                                 f"iterations ({first.shape} to {x.shape}); tapeflow stacks the loop variables of "
                                 "each iteration for the gradient, which needs one shape (give a TensorArray a "
                                 "fixed size instead of dynamic_size)")
        stacks = [write_row(s, k, x) for s, x in zip(stacks, state)]
        return [math_ops.add(k, np.int32(1))] + list(body.call_flat(state + captured)) + stacks

    history = while_loop(lambda k, *_: math_ops.less(k, count), history_body,
                         [convert_to_tensor(np.int32(0))] + x0 + [reserve_like(count, x) for x in x0])
    stacks = history[1 + n:]

    # (2) the cotangents, from the last iteration back to the first
    def backward_body(k, *rest):
        g_vars, g_caps = list(rest[:len(var_idx)]), list(rest[len(var_idx):])
        state = [get_item(s, k) for s in stacks]
        sources = state + captured
        wanted = var_idx + [n + j for j in cap_idx]
        grads = _vjp(body, sources, wanted, g_vars, var_idx)
        return ([math_ops.subtract(k, np.int32(1))] + list(grads[:len(var_idx)])
                + [math_ops.add(a, b) for a, b in zip(g_caps, grads[len(var_idx):])])

    g0 = [upstream[i] for i in var_idx]
    caps0 = [zeros_like(captured[j]) for j in cap_idx]
    result = while_loop(lambda k, *_: math_ops.greater_equal(k, 0), backward_body,
                        [math_ops.subtract(count, np.int32(1))] + g0 + caps0)
    grads = [None] * n_inputs
    for i, g in zip(var_idx, result[1:1 + len(var_idx)]):
        grads[i] = g
    for j, g in zip(cap_idx, result[1 + len(var_idx):]):
        grads[n + j] = g
    return grads


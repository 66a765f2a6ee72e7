"""tf.function: traces a Python function into a graph of ops and replays it.

Tracing runs the Python function once per input signature on *symbolic*
tensors (GraphTensor). A symbolic tensor carries a placeholder value so every
op's forward really runs (shapes and dtypes come out right), and each op is
recorded as a node: op type, attributes, and which earlier tensors feed it.
Variables read are captured by reference; other outside tensors become
constants. AutoGraph (tapeflow/autograph, ``autograph=True``) first rewrites
the function's ``if``/``while``/``for`` statements (and those of the user
functions it calls) so that those on tensors or datasets become If/While nodes
(tapeflow/control_flow.py); other Python control flow is unrolled at trace
time, and using a symbolic tensor as a Python bool is an error.

Calling the function replays the nodes one by one through the normal op
dispatch (``execute``), so an active tape records the replay and gradients
flow with no special case. When nothing records, graph_replay runs the same
nodes on raw arrays instead, skipping the dispatch.

With an input_signature that leaves dimensions unknown, the function is traced
twice with different placeholder sizes: if both traces agree the graph is
shape-polymorphic and serves every shape; otherwise graphs are specialised to
the concrete shapes they are called with. As TensorFlow traces a signature once,
only the first of these traces is counted (experimental_get_tracing_count) and
prints; the others run with stdout silenced.
"""
import collections
import contextlib
import functools
import io
import uuid
import weakref

import numpy as np

from .framework import nest
from .framework.conversion import convert_to_tensor
from .framework.dtypes import from_numpy
from .framework import recording
from .framework.recording import (execute, execute_state, forward_of, record, state_node_parts,
                                  state_op_variable_counts, trace_forward_of)
from .framework.registry import RegisterGradient
from .framework.tensor import Tensor, next_id
from .framework.tensor_shape import TensorShape
from .framework.tensor_spec import TensorSpec
from .config.execution import functions_run_eagerly
from .framework.logging_util import warn
from .framework import variables as _variables_module
from .framework.variables import Variable, assign_shape_error
from .framework.op_purity import SHAPE_FROM_SHAPES, is_pure
from .graph_passes import optimized_copy
from .graph_replay import ASSIGN, ASSIGN_METHODS, READ, ArrayReplay, output_count_error

_RECENT_CALLS = 10      # the window of the retracing warning
_FREQUENT_TRACES = 5    # traces in that window that make it warn
_BOUND_SIGNATURES_KEPT = 1024   # how many (argument, shape, dtype) matches of an input_signature are remembered
VARIABLE_READ = "__VariableRead__"
VARIABLE_ASSIGN = "__VariableAssign__"


class GraphTensor(Tensor):
    """A symbolic tensor inside a graph being traced (with a placeholder value)."""
    __slots__ = ("_graph", "_static_shape")

    def __init__(self, value, graph, static_shape=None, tensor_id=None):
        self._value = np.asarray(value) if not isinstance(value, (np.ndarray, np.generic)) else value
        self._id = next_id() if tensor_id is None else tensor_id
        self._graph = graph
        self._static_shape = static_shape

    @property
    def shape(self):
        return self._static_shape if self._static_shape is not None else TensorShape(self._value.shape)

    @property
    def graph(self):
        return self._graph

    def _symbolic_error(self, what):
        return TypeError(
            f"{what} is not allowed for a symbolic tf.Tensor inside a tf.function. AutoGraph converts "
            "`if`, `while` and `for` statements of the tf.function and of the user functions it calls (not of "
            "library code, lambdas, comprehensions, functions marked do_not_convert, nor with autograph=False): "
            "use tf.cond / tf.while_loop or tensor ops such as tf.where there.")

    def __bool__(self):
        raise self._symbolic_error("Using it as a Python bool")

    def __float__(self):
        raise self._symbolic_error("Converting it to a Python float")

    def __int__(self):
        value = self._shape_function_value()
        if value is None:
            raise self._symbolic_error("Converting it to a Python int")
        return int(value)

    def __index__(self):
        value = self._shape_function_value()
        if value is None:
            raise self._symbolic_error("Using it as an index")
        return int(value)

    def _shape_function_value(self):
        """A scalar integer computed from the shapes of a graph specialised to them (``tf.shape(x)[0]`` in a
        step traced by fit) is a Python int, as a static dimension is (FuncGraph.shape_function_value)."""
        if self._value.ndim != 0 or self._value.dtype.kind not in "iu":
            return None
        return self._graph.shape_function_value(self)

    def numpy(self):
        raise self._symbolic_error("Calling .numpy()")

    def __repr__(self):
        return f"<tf.Tensor '{self._graph.name}/{self._id}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self):
        return f'Tensor("{self._graph.name}/{self._id}", shape={self.shape}, dtype={self.dtype.name})'


class OutputLeaf:
    """A leaf of a traced function's output structure: a tensor reference or a Python value."""
    __slots__ = ("ref", "python")

    def __init__(self, ref=None, python=None):
        self.ref = ref
        self.python = python


def _note_variable_created(variable):
    graph = recording.tracing_graph()
    while graph is not None:
        graph.created_variables = True
        graph = graph.parent


_variables_module.creation_observers.append(_note_variable_created)


class FuncGraph:
    """The recorded nodes of one trace.

    A reference to a tensor is one of ``("in", i)`` (input i), ``("const", i)``,
    ``("capture", i)`` (a tensor of an enclosing graph; gradient graphs only) or
    ``("node", k, j)`` (output j of node k). Nodes are ``[op_type, refs, attrs, n_out]``.
    """

    created_variables = False   # set when a tf.Variable is created while this graph (or a child) is traced
    exact_shapes = False        # the graph runs only on inputs of its placeholders' shapes (see _trace)
    argument_variable_count = 0  # variables[:n] are the variable arguments of the traced call (by first use)

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.nodes = []
        self.inputs = []
        self.input_specs = []
        self.constants = []
        self.variables = []
        self.captures = []
        self.outputs = None
        self.custom_gradients = {}
        self._refs = {}
        self._alive = []

    # -- references --------------------------------------------------------
    def _register(self, tensor, ref):
        self._refs[id(tensor)] = ref
        self._alive.append(tensor)

    def ref(self, tensor):
        ref = self._refs.get(id(tensor))
        if ref is not None:
            return ref
        if isinstance(tensor, GraphTensor) and tensor._graph is not self:
            if not self._is_ancestor(tensor._graph):
                raise ValueError(f"{tensor} belongs to another tf.function graph ({tensor._graph.name}); "
                                 "pass it to this function as an argument instead.")
            ref = ("capture", len(self.captures))
            self.captures.append(tensor)
        else:
            ref = ("const", len(self.constants))
            self.constants.append(np.array(tensor._value))
        self._register(tensor, ref)
        return ref

    def _is_ancestor(self, graph):
        parent = self.parent
        while parent is not None:
            if parent is graph:
                return True
            parent = parent.parent
        return False

    def variable_index(self, var):
        for i, v in enumerate(self.variables):
            if v is var:
                return i
        self.variables.append(var)
        return len(self.variables) - 1

    # -- building ------------------------------------------------------------
    def placeholder(self, spec, value):
        t = GraphTensor(value, self, static_shape=spec.shape)
        self._register(t, ("in", len(self.inputs)))
        self.inputs.append(t)
        self.input_specs.append(spec)
        return t

    def _emit(self, op_type, inputs, attrs, results):
        k = len(self.nodes)
        refs = [self.ref(t) for t in inputs]
        outputs = tuple(GraphTensor(r, self) for r in results)
        for j, o in enumerate(outputs):
            self._register(o, ("node", k, j))
        self.nodes.append([op_type, refs, dict(attrs), len(outputs)])
        return outputs

    def add_op(self, op_type, inputs, attrs):
        """Runs the op on placeholder values and records it (called by ``execute`` while tracing)."""
        forward, num_outputs = trace_forward_of(op_type)
        result = forward(*[t._value for t in inputs], **attrs)
        results = (result,) if num_outputs == 1 else tuple(result)
        outputs = self._emit(op_type, inputs, attrs, results)
        if recording.recording_anything():
            record(op_type, tuple(inputs), outputs, attrs or None)
        return outputs[0] if num_outputs == 1 else outputs

    def read_variable(self, var):
        index = self.variable_index(var)
        t = GraphTensor(var._value, self, tensor_id=var._id)
        k = len(self.nodes)
        self._register(t, ("node", k, 0))
        self.nodes.append([VARIABLE_READ, [], {"variable": index}, 1])
        return t

    def assign_variable(self, var, value, mode):
        value = convert_to_tensor(value, dtype=var.dtype)
        if tuple(value.shape) != tuple(var.shape):
            raise assign_shape_error(var, value.shape)
        self.nodes.append([VARIABLE_ASSIGN, [self.ref(value)], {"variable": self.variable_index(var), "mode": mode}, 0])

    def add_state_op(self, op_type, variables, inputs, attrs):
        """Records a state op (``execute_state`` while tracing): its ``variables`` attribute holds the
        indices of the variables it updates. Nothing runs now."""
        refs = [self.ref(convert_to_tensor(t)) for t in inputs]
        indices = tuple(self.variable_index(getattr(v, "_parent", v)) for v in variables)
        self.nodes.append([op_type, refs, {**attrs, "variables": indices}, 0])

    def is_live(self, tensor):
        """Whether ``tensor``'s value can change from call to call: it is computed in this graph
        from an input, a capture or a variable read, not from constants only."""
        ref = self._refs.get(id(tensor))
        if ref is None or ref[0] != "node":
            return ref is not None and ref[0] != "const"
        live = []   # nodes are in execution order: one pass up to the tensor's node
        for op_type, refs, _, _ in self.nodes[:ref[1] + 1]:
            live.append(op_type == VARIABLE_READ
                        or any(r[0] != "const" and (r[0] != "node" or live[r[1]]) for r in refs))
        return live[ref[1]]

    def shape_function_value(self, tensor):
        """The trace's value of ``tensor`` when it is the same at every call: the graph runs only on inputs of
        the shapes it is traced at (``exact_shapes``) and ``tensor`` is computed from shapes alone
        (``tf.shape(x)[0]``, pure ops on it and constants), not from input or variable values, nor from the
        shape of a tensor whose shape depends on values (``tf.boolean_mask``). None otherwise."""
        if not self.exact_shapes:
            return None
        ref = self._refs.get(id(tensor))
        if ref is None or ref[0] not in ("node", "const"):
            return None
        if ref[0] == "const":
            return tensor._value
        fixed_shape, value_free = [], []    # per node, in execution order
        for op_type, refs, _, _ in self.nodes[:ref[1] + 1]:
            shapes_fixed = all(r[0] in ("in", "const") or (r[0] == "node" and fixed_shape[r[1]]) for r in refs)
            if op_type == VARIABLE_READ:
                fixed_shape.append(True)
                value_free.append(False)
            elif op_type == "Shape":
                fixed_shape.append(True)
                value_free.append(shapes_fixed)
            else:
                fixed_shape.append(shapes_fixed and op_type in SHAPE_FROM_SHAPES)
                value_free.append(is_pure(op_type)
                                  and all(r[0] == "const" or (r[0] == "node" and value_free[r[1]]) for r in refs))
        return tensor._value if value_free[ref[1]] else None

    def set_outputs(self, structure):
        """Python numbers returned become tensors (constants of the graph), as in TensorFlow."""
        def as_output(leaf):
            if isinstance(leaf, Variable):
                return leaf._as_tensor()
            if isinstance(leaf, (bool, int, float, np.generic)) and not isinstance(leaf, str):
                return convert_to_tensor(leaf)
            if leaf is None or isinstance(leaf, (Tensor, str)):
                return leaf
            raise TypeError(f"tf.function can only return tensors, variables, Python scalars, strings and None "
                            f"(in lists, tuples and dicts), got {type(leaf).__name__}")

        def to_ref(leaf):
            return OutputLeaf(ref=self.ref(leaf)) if isinstance(leaf, Tensor) else OutputLeaf(python=leaf)
        self.structured_outputs = nest.map_structure(as_output, structure)
        self.outputs = nest.map_structure(to_ref, self.structured_outputs)

    def get_operations(self):
        """The graph's operations (placeholders, then nodes), with ``name``, ``type``, ``inputs``, ``outputs``."""
        from .function_introspection import operations_of
        return operations_of(self)

    def as_graph_def(self):
        """The graph as a GraphDef-like object: ``.node`` lists nodes with ``name``, ``op`` and ``input``."""
        from .function_introspection import graph_def_of
        return graph_def_of(self)

    # -- comparing traces ------------------------------------------------------
    def signature_of_nodes(self):
        """What two traces must share to be the same graph: nodes, attributes and constants."""
        def comparable(attrs):
            items = []
            for key, value in sorted(attrs.items(), key=lambda kv: kv[0]):
                if key == "_gradient_op_type":  # a unique name per trace: compare the gradient graph instead
                    value = self.custom_gradients[value]["graph"].signature_of_nodes()
                elif isinstance(value, ConcreteFunction):   # a control-flow node's branch or loop body
                    value = value.graph.signature_of_nodes()
                items.append((key, value))
            return items
        nodes = [(op, [tuple(r) for r in refs], comparable(attrs), n) for op, refs, attrs, n in self.nodes]
        constants = [(c.dtype.str, c.shape, c.tobytes()) for c in self.constants]
        return nodes, constants


# ------------------------------------------------------------------ replay ---
class ConcreteFunction:
    """One traced graph, callable with tensors; replays through the normal op dispatch."""

    def __init__(self, graph, polymorphic=True, name=None):
        self.graph = graph
        self.polymorphic = polymorphic
        self.name = name or graph.name
        traced = getattr(graph, "traced_shapes", None)
        self.traced_shapes = list(traced) if traced is not None else [tuple(t._value.shape) for t in graph.inputs]
        self._compile()

    def _compile(self):
        g = self.graph
        # The replay runs the graph as the passes leave it (graph_passes/); self.graph stays as traced.
        static_shapes = [tuple(shape) if spec.shape.is_fully_defined() or not self.polymorphic else None
                         for spec, shape in zip(g.input_specs, self.traced_shapes)]
        self.optimized = optimized = optimized_copy(g, static_shapes)
        self._graph_constants = optimized.constants
        self._constants = [Tensor(c) for c in optimized.constants]
        plan = []
        node_slot = []
        slot = 0
        for op_type, refs, attrs, n_out in optimized.nodes:
            node_slot.append(slot)
            plan.append((op_type, tuple(refs), attrs, n_out))
            slot += n_out
        self._node_slot = node_slot
        self._plan = [(op, tuple(self._slot(r) for r in refs), attrs, n_out, node_slot[k])
                      for k, (op, refs, attrs, n_out) in enumerate(plan)]
        self._n_slots = slot
        output_refs = iter(optimized.outputs)

        def output_slot(leaf):
            ref = next(output_refs)
            return leaf if ref is None else OutputLeaf(ref=self._slot(ref))
        self._output_slots = None if g.outputs is None else nest.map_structure(output_slot, g.outputs)
        self._array_replay = ArrayReplay(self._plan, slot, len(g.input_specs), len(optimized.constants),
                                         self._output_slots,
                                         {VARIABLE_READ: READ, VARIABLE_ASSIGN: ASSIGN})

    jit_compile = False     # set by tf.function(jit_compile=True): calls nothing records run compiled code
    _compiled = None

    def compiled(self):
        """The graph compiled to numba kernels (tapeflow/jit), built at the first compiled call."""
        if self._compiled is None:
            from .jit import CompiledGraph
            self._compiled = CompiledGraph(self.optimized, self.graph.outputs)
        return self._compiled

    def _slot(self, ref):
        kind = ref[0]
        if kind == "node":
            return ("s", self._node_slot[ref[1]] + ref[2])
        if kind == "in":
            return ("i", ref[1])
        if kind == "const":
            return ("c", ref[1])
        return ("x", ref[1])

    @property
    def structured_input_signature(self):
        return tuple(self.graph.input_specs)

    @property
    def structured_outputs(self):
        """The traced outputs' structure (symbolic tensors and Python values), as TensorFlow shows it."""
        return getattr(self.graph, "structured_outputs", None)

    @property
    def variables(self):
        return tuple(self.graph.variables)

    @property
    def trainable_variables(self):
        return tuple(v for v in self.graph.variables if v.trainable)

    def _check_inputs(self, tensors):
        specs = self.graph.input_specs
        if len(tensors) != len(specs):
            raise TypeError(f"{self.name}: expected {len(specs)} tensor arguments, got {len(tensors)}")
        out = []
        for i, (t, spec) in enumerate(zip(tensors, specs)):
            if isinstance(t, Variable):
                t = t._as_tensor()
            elif isinstance(t, Tensor):     # a tensor keeps its dtype: a mismatch is the caller's TypeError
                pass
            else:
                t = convert_to_tensor(t, dtype=spec.dtype)
            if t.dtype != spec.dtype:
                raise TypeError(f"{self.name}: argument {i} has dtype {t.dtype.name}, expected {spec.dtype.name}")
            shape = self.traced_shapes[i]
            if not spec.shape.is_compatible_with(t.shape) or (not self.polymorphic and tuple(t.shape) != shape):
                expected = spec.shape if self.polymorphic else TensorShape(shape)
                raise ValueError(f"{self.name}: argument {i} has shape {t.shape}, which is not compatible with "
                                 f"the traced shape {expected}")
            out.append(t)
        return out

    def __call__(self, *args, **kwargs):
        traced = getattr(self.graph, "structured_inputs", None)
        if kwargs or self.graph.argument_variable_count or (traced is not None and traced[1]):
            tensors, variables = self._bind_structured(args, kwargs)
            return self.call_flat(self._check_inputs(tensors), variables=variables)
        return self.call_flat(self._check_inputs(nest.flatten(list(args))))

    def _bind_structured(self, args, kwargs):
        """(tensors, variables) of a call by the traced function's parameters, keywords included, laid out
        as the trace's arguments were."""
        traced = getattr(self.graph, "structured_inputs", None)
        if traced is None:
            raise TypeError(f"{self.name}: this concrete function takes tensors by position only")
        args, kwargs = _arranged_like(self.graph.python_function, traced, args, kwargs, self.name)
        try:
            nest.assert_same_structure(traced, [args, kwargs], check_types=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{self.name}: the arguments do not have the structure of the traced ones: {e}") from None
        flat, flat_traced = nest.flatten([args, kwargs]), nest.flatten(traced)
        tensors, variables = [], []
        for given, leaf in zip(flat, flat_traced):
            if isinstance(leaf, TensorSpec):
                tensors.append(given)
            elif not isinstance(leaf, Variable) and not _same_python_value(given, leaf):
                raise TypeError(f"{self.name}: the trace was made with the Python value {leaf!r} where "
                                f"{given!r} is given; trace another concrete function for it")
            elif isinstance(leaf, Variable):
                if not isinstance(given, Variable):
                    raise TypeError(f"{self.name}: expected a tf.Variable where the trace had one, got "
                                    f"{type(given).__name__}")
                if not any(given is v for v in variables):
                    variables.append(given)
        if len(variables) != self.graph.argument_variable_count:
            raise TypeError(f"{self.name}: the variable arguments alias differently from the traced call")
        return tensors, variables if variables else None

    def call_flat(self, inputs, captures=(), variables=None):
        """Replays the nodes on ``inputs`` (while tracing another function, this inlines them).

        ``variables``: the call's variable arguments, in place of those the trace was called with."""
        graph_variables = self.graph.variables
        if variables is not None:
            graph_variables = list(variables) + graph_variables[self.graph.argument_variable_count:]
        state = recording.current()
        if state is None or not (state.graph is not None or state.tapes or state.accumulators or state.watchers
                                 or recording.numerics_checked()):
            replay = self.compiled() if self.jit_compile else self._array_replay
            return replay(inputs, self._graph_constants, captures, graph_variables)
        values = [None] * self._n_slots
        constants = self._constants
        variables = graph_variables

        def get(s):
            kind, i = s
            if kind == "s":
                return values[i]
            if kind == "i":
                return inputs[i]
            if kind == "c":
                return constants[i]
            return captures[i]

        for op_type, slots, attrs, n_out, out in self._plan:
            if op_type == VARIABLE_READ:
                values[out] = variables[attrs["variable"]]._as_tensor()
                continue
            args = tuple(get(s) for s in slots)
            if state_op_variable_counts(op_type) is not None:
                indices, own = state_node_parts(attrs)
                execute_state(op_type, [variables[i] for i in indices], args, own)
                continue
            if op_type == VARIABLE_ASSIGN:
                var = variables[attrs["variable"]]
                getattr(var, ASSIGN_METHODS[attrs["mode"]])(args[0])
                continue
            result = execute(op_type, args, attrs or None)
            if forward_of(op_type)[1] == 1:
                values[out] = result
            elif len(result) == n_out:
                values[out:out + n_out] = list(result)
            else:
                raise output_count_error(op_type, n_out, len(result))
        if self._output_slots is None:
            return None
        return nest.map_structure(lambda leaf: get(leaf.ref) if leaf.ref is not None else leaf.python,
                                  self._output_slots)


# ------------------------------------------------------------- tracing ---
def _leaf_key(leaf):
    if isinstance(leaf, Variable):
        return ("variable", leaf)   # keyed by spec and aliasing in _variable_keys
    if isinstance(leaf, (Tensor, np.ndarray, np.generic)):
        t = convert_to_tensor(leaf)
        return ("tensor", tuple(t._value.shape), t.dtype.name)
    if isinstance(leaf, TensorSpec):
        return ("tensor", None if leaf.shape.rank is None else tuple(leaf.shape.as_list()), leaf.dtype.name)
    try:
        hash(leaf)
    except TypeError:
        raise TypeError(f"tf.function arguments must be tensors or hashable Python values, got "
                        f"{type(leaf).__name__}") from None
    return ("python", type(leaf).__name__, leaf)


def _variable_keys(leaves):
    """Variables are keyed as TensorFlow keys them: by shape, dtype and trainability, and by which arguments
    are the same variable, not by identity (one trace serves every variable of that spec)."""
    seen = []
    out = []
    for leaf in leaves:
        if leaf[0] != "variable":
            out.append(leaf)
            continue
        var = leaf[1]
        alias = next((i for i, v in enumerate(seen) if v is var), None)
        if alias is None:
            alias = len(seen)
            seen.append(var)
        out.append(("variable", tuple(var._value.shape), var.dtype.name, bool(var.trainable), alias))
    return out


def _argument_variables(structure):
    """The distinct Variables among a call's arguments, in flatten order."""
    out = []
    for leaf in nest.flatten(structure):
        if isinstance(leaf, Variable) and not any(leaf is v for v in out):
            out.append(leaf)
    return out


def _same_python_value(given, traced):
    try:
        return type(given) is type(traced) and bool(given == traced)
    except Exception:
        return given is traced


def _python_only(structure):
    return not any(isinstance(leaf, (TensorSpec, Variable)) for leaf in nest.flatten(structure))


def _arranged_like(python_function, traced, args, kwargs, name):
    """A concrete function's call arguments laid out as its trace's were ([positional], {keyword}):
    each given by position or by keyword, as the Python function's parameters allow."""
    import inspect
    traced_args, traced_kwargs = traced
    if not kwargs and len(args) == len(traced_args) and not traced_kwargs:
        return list(args), {}
    try:
        signature = inspect.signature(python_function)
        call = dict(signature.bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: {e}") from None
    new_args = []
    for param_name, param in signature.parameters.items():
        if len(new_args) >= len(traced_args):
            break
        if param.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            if param_name in call:
                new_args.append(call.pop(param_name))
            elif _python_only(traced_args[len(new_args)]):    # a Python value the trace holds: bound already
                new_args.append(traced_args[len(new_args)])
            else:
                raise TypeError(f"{name}: missing required argument {param_name!r}")
        elif param.kind is inspect.Parameter.VAR_POSITIONAL:
            new_args.extend(call.pop(param_name, ()))
        else:
            break
    var_keyword = next((n for n, p in signature.parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD),
                       None)
    extra = dict(call.pop(var_keyword, {})) if var_keyword else {}
    new_kwargs = {}
    for key in traced_kwargs:
        if key in call:
            new_kwargs[key] = call.pop(key)
        elif key in extra:
            new_kwargs[key] = extra.pop(key)
        elif _python_only(traced_kwargs[key]):
            new_kwargs[key] = traced_kwargs[key]
        else:
            raise TypeError(f"{name}: missing required argument {key!r}")
    if call or extra or len(new_args) != len(traced_args):
        unexpected = sorted(call) + sorted(extra)
        raise TypeError(f"{name}: the arguments do not match the traced call"
                        + (f" (unexpected: {', '.join(unexpected)})" if unexpected else ""))
    return new_args, new_kwargs


_STRUCTURE_KEYS = {}    # number of flat positional arguments -> their structure key


def _structure_key(structure):
    """The nesting of a call's arguments, leaves left out."""
    return repr(nest.map_structure(lambda _: 0, structure))


_PYTHON_LEAF_TYPES = (int, float, bool, str, type(None))    # arguments the key holds by value


def _flat_args_key(args):
    """(key, tensors) as ``_canonical`` builds them, computed directly when every argument is a Tensor or a
    Python scalar, string or None (no nesting, arrays or variables); None otherwise."""
    leaves, tensors = [], []
    for a in args:
        kind = type(a)
        if kind is Tensor:
            v = a._value
            leaves.append(("tensor", v.shape, from_numpy(v.dtype).name))
            tensors.append(a)
        elif kind in _PYTHON_LEAF_TYPES:
            leaves.append(("python", kind.__name__, a))
        else:
            return None
    structure = _STRUCTURE_KEYS.get(len(args))
    if structure is None:
        structure = _STRUCTURE_KEYS[len(args)] = _structure_key([[None] * len(args), {}])
    return (tuple(leaves), structure), tensors


def _trace(python_function, name, args, kwargs, specs, dummy_values, creates_variables=True, exact_shapes=None):
    """Traces ``python_function``; tensor leaves of args become placeholders (in flatten order).

    ``creates_variables``: whether the function may create tf.Variables (on its first call only, as in
    TensorFlow). ``exact_shapes``: whether the graph will run only on inputs of the placeholders' shapes
    (by default: when the specs are fully defined)."""
    graph = FuncGraph(name)
    graph.creates_variables = creates_variables
    graph.exact_shapes = all(s.shape.is_fully_defined() for s in specs) if exact_shapes is None else exact_shapes
    specs_left = iter(specs)
    graph.structured_inputs = nest.map_structure(
        lambda leaf: next(specs_left) if isinstance(leaf, (Tensor, np.ndarray, np.generic, TensorSpec)) else leaf,
        [list(args), dict(kwargs)])
    graph.python_function = python_function
    argument_variables = _argument_variables([list(args), dict(kwargs)])
    for var in argument_variables:
        graph.variable_index(var)
    graph.argument_variable_count = len(argument_variables)
    with recording.tracing_into(graph):
        placeholders = iter([graph.placeholder(s, v) for s, v in zip(specs, dummy_values)])

        def substitute(leaf):
            if isinstance(leaf, (Tensor, np.ndarray, np.generic, TensorSpec)):
                return next(placeholders)
            return leaf
        call_args = nest.map_structure(substitute, list(args))
        call_kwargs = nest.map_structure(substitute, dict(kwargs))
        result = python_function(*call_args, **call_kwargs)
        graph.set_outputs(result)
    return graph


class Function:
    """A Python function that runs as traced graphs (``tf.function``)."""

    def __init__(self, python_function, input_signature=None, name=None, jit_compile=None, **options):
        self._jit_compile = bool(jit_compile)
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(nest.flatten(input_signature))
        self._name = name or getattr(python_function, "__name__", "function")
        self._options = options
        self._reduce_retracing = bool(options.get("reduce_retracing"))
        self._relaxed = {}      # reduce_retracing: shape-free key -> [specs so far, generalised trace or None]
        self._cache = {}
        self._bound_signatures = set()   # (argument index, shape, numpy dtype) seen to match the input_signature
        self._tracing_count = 0
        self._recent_calls = collections.deque(maxlen=_RECENT_CALLS)
        self._bound = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        return self._python_function

    def _traced_function(self):
        """What a trace runs: the Python function, with its control flow converted by AutoGraph
        (``autograph=True``, the default)."""
        if not self._options.get("autograph", True):
            return self._python_function
        converted = getattr(self, "_converted", None)
        if converted is None:   # user code only, as for the functions it calls (tapeflow's own is not converted)
            from .autograph.calls import converted_target
            converted = self._converted = converted_target(self._python_function)
        return converted

    @property
    def input_signature(self):
        return None if self._input_signature is None else tuple(self._input_signature)

    def experimental_get_tracing_count(self):
        return self._tracing_count

    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(functools.partial(self._python_function, instance), self._input_signature,
                             name=self._name, jit_compile=self._jit_compile, **self._options)
            bound._instance = weakref.ref(instance)
            self._bound[instance] = bound
        return bound

    # -- signatures ------------------------------------------------------------
    def _canonical(self, args, kwargs):
        """(cache key, the call's tensors in flatten order, [args, kwargs] for a trace)."""
        if self._input_signature is not None:
            return self._bind_signature(args, kwargs)
        if not kwargs:
            fast = _flat_args_key(args)
            if fast is not None:     # the common call: tensors and Python scalars, no nesting
                return fast[0], fast[1], [list(args), {}]
        flat_args = nest.flatten([list(args), kwargs])
        leaves = [_leaf_key(leaf) for leaf in flat_args]
        if any(leaf[0] == "variable" for leaf in leaves):
            leaves = _variable_keys(leaves)
        key = (tuple(leaves), _structure_key([list(args), kwargs]))
        tensors = [convert_to_tensor(leaf) for leaf in flat_args
                   if isinstance(leaf, (Tensor, np.ndarray, np.generic)) and not isinstance(leaf, Variable)]
        return key, tensors, [list(args), kwargs]

    def _bind_signature(self, args, kwargs):
        if kwargs:
            raise TypeError(f"{self._name}: keyword arguments are not supported with an input_signature")
        plain = all(type(a) is Tensor for a in args)
        flat = list(args) if plain else nest.flatten(list(args))
        if len(flat) != len(self._input_signature):
            raise TypeError(f"{self._name}: the input_signature has {len(self._input_signature)} tensors, "
                            f"but {len(flat)} were given")
        tensors = []
        bound = self._bound_signatures
        for i, (leaf, spec) in enumerate(zip(flat, self._input_signature)):
            if isinstance(leaf, Variable):
                t = leaf._as_tensor()
            elif isinstance(leaf, Tensor):
                t = leaf
            else:
                t = convert_to_tensor(leaf, dtype=spec.dtype)
            seen = (i, t._value.shape, t._value.dtype)
            if seen not in bound:
                if t.dtype != spec.dtype or not spec.shape.is_compatible_with(t.shape):
                    raise TypeError(f"Binding inputs to tf.function {self._name!r} failed: argument {i} "
                                    f"{TensorSpec.from_tensor(t)} does not match {spec}")
                if len(bound) < _BOUND_SIGNATURES_KEPT:
                    bound.add(seen)
            tensors.append(t)
        structured = list(tensors) if plain else nest.pack_sequence_as(list(args), tensors)
        return ("signature",), tensors, [structured, {}]

    def _counted_trace(self, args, kwargs, specs, dummy_values, exact_shapes=None):
        """A trace that experimental_get_tracing_count counts. As in TensorFlow, the first trace may create
        variables; if it did, the function is traced again with creation disallowed, so one that creates
        variables on every trace raises ValueError at its first call.

        TensorFlow counts and prints that second trace too; here it is silent and not counted, because
        tapeflow's Keras trainer builds its metrics inside the first train step (Keras on TensorFlow builds
        them before tracing), and a fit must print and count its train_step traces as Keras does."""
        first_call = self._tracing_count == 0
        graph = _trace(self._traced_function(), self._name, args, kwargs, specs, dummy_values, first_call,
                       exact_shapes)
        self._tracing_count += 1
        if first_call and graph.created_variables:
            with contextlib.redirect_stdout(io.StringIO()):
                graph = _trace(self._traced_function(), self._name, args, kwargs, specs, dummy_values, False,
                               exact_shapes)
        return graph

    def _concrete_for(self, key, tensors, structured, concrete_shapes=True):
        args, kwargs = structured
        entry = self._cache.get(key)
        if entry is not None:
            if entry.polymorphic:
                return entry
            specialised = entry.specialised.get(tuple(tuple(t.shape) for t in tensors))
            if specialised is not None:
                return specialised
        if self._input_signature is None and self._reduce_retracing:
            relaxed = self._relaxed_concrete(key, tensors, structured)
            if relaxed is not None:
                return relaxed
        if self._input_signature is None:
            specs = [TensorSpec.from_tensor(t) for t in tensors]
            graph = self._counted_trace(args, kwargs, specs, [t._value for t in tensors])
            entry = ConcreteFunction(graph, polymorphic=True, name=self._name)
            self._cache[key] = entry
            return entry
        if entry is None:
            entry = self._trace_signature(args)
            self._cache[key] = entry
            if entry.polymorphic or not concrete_shapes:
                return entry
        # The input_signature's graph depends on the placeholder sizes: this call's shapes get a graph of their
        # own. TensorFlow traces an input_signature once, so this trace is silent and not counted.
        concrete = [TensorSpec(t.shape, t.dtype) for t in tensors]
        with contextlib.redirect_stdout(io.StringIO()):
            graph = _trace(self._traced_function(), self._name, args, {}, concrete, [t._value for t in tensors],
                           False)
        specialised = ConcreteFunction(graph, polymorphic=False, name=self._name)
        entry.specialised[tuple(tuple(t.shape) for t in tensors)] = specialised
        return specialised

    def _relaxed_concrete(self, key, tensors, structured):
        """reduce_retracing: a call whose tensor shapes differ from an earlier trace of the same structure,
        dtypes and ranks is traced once with the differing dimensions unknown, and that trace serves every
        later call it fits. None: trace the exact shapes (the first call of a structure)."""
        relaxed_key = (tuple(("tensor", len(k[1]), k[2]) if k[0] == "tensor" else k for k in key[0]), key[1])
        record = self._relaxed.get(relaxed_key)
        if record is None:
            if self._options.get("relax_batch_dimension"):
                return self._batch_relaxed_trace(relaxed_key, tensors, structured)
            self._relaxed[relaxed_key] = [[TensorSpec.from_tensor(t) for t in tensors], None]
            return None
        specs, entry = record
        fits = all(s.shape.is_compatible_with(t.shape) for s, t in zip(specs, tensors))
        if fits and getattr(entry, "batch_relaxed", False):
            return self._batch_specialised(entry, specs, tensors, structured)
        if entry is None or not fits:
            earlier = [tuple(s.shape) for s in specs] if entry is None else entry.traced_shapes
            previous = [np.full(shape, 1 if s.dtype.is_floating else 0, s.dtype._np)
                        for shape, s in zip(earlier, specs)]
            specs = [TensorSpec([a if a == b else None for a, b in zip(s.shape, t.shape)], t.dtype)
                     for s, t in zip(specs, tensors)]
            args, kwargs = structured
            graph = self._counted_trace(args, kwargs, specs, [t._value for t in tensors])
            try:     # a second, silent trace at the earlier shapes: does the graph depend on them? (not counted)
                with contextlib.redirect_stdout(io.StringIO()):
                    other = _trace(self._traced_function(), self._name, args, kwargs, specs, previous, False)
                polymorphic = graph.signature_of_nodes() == other.signature_of_nodes()
            except Exception:
                polymorphic = False
            entry = ConcreteFunction(graph, polymorphic=polymorphic, name=self._name)
            entry.specialised = {tuple(tuple(t.shape) for t in tensors): entry} if not polymorphic else {}
            record[:] = [specs, entry]
            self._cache[("relaxed",) + relaxed_key] = entry
            return entry
        if entry.polymorphic:
            return entry
        shapes = tuple(tuple(t.shape) for t in tensors)
        specialised = entry.specialised.get(shapes)
        if specialised is None:
            args, kwargs = structured
            graph = self._counted_trace(args, kwargs, [TensorSpec.from_tensor(t) for t in tensors],
                                        [t._value for t in tensors])
            specialised = entry.specialised[shapes] = ConcreteFunction(graph, polymorphic=False, name=self._name)
        return specialised

    def _batch_relaxed_trace(self, relaxed_key, tensors, structured):
        """relax_batch_dimension: the first call of a structure is traced at once with the leading dimension of
        every tensor unknown, as Keras traces a step on a dataset's batches (one trace, printed and counted).
        The graph serves the shapes it was traced at only: another batch size (the short last batch) gets a
        graph of its own, from a silent trace that is not counted (TensorFlow's one trace serves every size).
        Each graph being specialised to exact shapes, tf.shape values in it are constants (exact_shapes)."""
        specs = [TensorSpec((None,) + tuple(t.shape)[1:], t.dtype) if t.shape.rank else TensorSpec.from_tensor(t)
                 for t in tensors]
        args, kwargs = structured
        graph = self._counted_trace(args, kwargs, specs, [t._value for t in tensors], exact_shapes=True)
        entry = ConcreteFunction(graph, polymorphic=False, name=self._name)
        entry.specialised = {}
        entry.traced_key = tuple(tuple(t.shape) for t in tensors)
        entry.batch_relaxed = True
        self._relaxed[relaxed_key] = [specs, entry]
        self._cache[("relaxed",) + relaxed_key] = entry
        return entry

    def _batch_specialised(self, entry, specs, tensors, structured):
        """The graph of a batch-relaxed trace for this call's shapes (see _batch_relaxed_trace)."""
        shapes = tuple(tuple(t.shape) for t in tensors)
        if shapes == entry.traced_key:
            return entry
        specialised = entry.specialised.get(shapes)
        if specialised is None:
            args, kwargs = structured
            with contextlib.redirect_stdout(io.StringIO()):
                graph = _trace(self._traced_function(), self._name, args, kwargs, specs,
                               [t._value for t in tensors], False, exact_shapes=True)
            specialised = entry.specialised[shapes] = ConcreteFunction(graph, polymorphic=False, name=self._name)
        return specialised

    def _trace_signature(self, args):
        """Traces the input_signature; checks whether the graph is shape-polymorphic."""
        specs = self._input_signature
        unknown = any(s.shape.rank is None or None in s.shape.dims for s in specs)
        graph = self._counted_trace(args, {}, specs, [_sized_dummy(s, 2) for s in specs])
        polymorphic = not (unknown and self._jit_compile)  # compiled code is specialised to each call's shapes
        if unknown and polymorphic:  # a second, silent trace at other sizes: is the graph shape-specialised? (not counted)
            with contextlib.redirect_stdout(io.StringIO()):
                other = _trace(self._traced_function(), self._name, args, {}, specs,
                               [_sized_dummy(s, 3) for s in specs], False)
            polymorphic = graph.signature_of_nodes() == other.signature_of_nodes()
        entry = ConcreteFunction(graph, polymorphic=polymorphic, name=self._name)
        entry.specialised = {}
        return entry

    # -- calling -------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if functions_run_eagerly():
            return self._python_function(*args, **kwargs)
        if recording.tracing_graph() is not None:
            return self._traced_function()(*args, **kwargs)  # nested tf.function: traced inline, converted
        key, tensors, structured = self._canonical(args, kwargs)
        traced_before = self._tracing_count
        concrete = self._concrete_for(key, tensors, structured)
        concrete.jit_compile = self._jit_compile
        self._note_call(self._tracing_count > traced_before)
        if concrete.graph.argument_variable_count:
            return concrete.call_flat(tensors, variables=_argument_variables(structured))
        return concrete.call_flat(tensors)

    def _note_call(self, traced):
        """TensorFlow's warning when most recent calls traced again (each trace costs a Python run)."""
        recent = self._recent_calls
        recent.append(traced)
        if traced and sum(recent) >= _FREQUENT_TRACES:
            warn(f"{sum(recent)} out of the last {len(recent)} calls to {self._python_function!r} triggered "
                 "tf.function retracing. Tracing is expensive and the excessive number of tracings could be due "
                 "to (1) creating @tf.function repeatedly in a loop, (2) passing tensors with different shapes, "
                 "(3) passing Python objects instead of tensors. For (1), please define your @tf.function outside "
                 "of the loop. For (2), @tf.function has reduce_retracing=True option that can avoid unnecessary "
                 "retracing. For (3), please refer to https://www.tensorflow.org/guide/function#controlling_retracing"
                 " and https://www.tensorflow.org/api_docs/python/tf/function for  more details.")

    def pretty_printed_concrete_signatures(self, verbose=True):
        from .function_introspection import pretty_printed_signature
        return "\n\n".join(pretty_printed_signature(c, verbose) for c in self.traced_concrete_functions())

    def traced_concrete_functions(self):
        """Every graph traced so far: each cached trace, then the shape-specialised ones it holds."""
        out = []
        for entry in self._cache.values():
            out.append(entry)
            out.extend(getattr(entry, "specialised", {}).values())
        return out

    def get_concrete_function(self, *args, **kwargs):
        concrete = self._get_concrete_function(*args, **kwargs)
        concrete.jit_compile = self._jit_compile
        return concrete

    def _get_concrete_function(self, *args, **kwargs):
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        if all(isinstance(a, TensorSpec) for a in nest.flatten([list(args), kwargs])) and (args or kwargs):
            specs = nest.flatten([list(args), kwargs])
            if self._input_signature is not None:
                entry = self._cache.get(("signature",))
                if entry is None:
                    entry = self._trace_signature(list(args))
                    self._cache[("signature",)] = entry
                return entry
            key = self._canonical(args, kwargs)[0]
            entry = self._cache.get(key)
            if entry is None:
                graph = self._counted_trace(list(args), kwargs, specs, [s.dummy_value() for s in specs])
                entry = self._cache[key] = ConcreteFunction(graph, polymorphic=True, name=self._name)
            return entry
        flat = nest.flatten([list(args), kwargs])
        if self._input_signature is None and any(isinstance(a, TensorSpec) for a in flat):
            # TensorSpecs beside Python values (pow.get_concrete_function(a=TensorSpec(...), b=2)) or tensors
            key = self._canonical(args, kwargs)[0]
            entry = self._cache.get(key)
            if entry is None:
                leaves = [leaf if isinstance(leaf, TensorSpec) else convert_to_tensor(leaf) for leaf in flat
                          if isinstance(leaf, (Tensor, np.ndarray, np.generic, TensorSpec))
                          and not isinstance(leaf, Variable)]
                specs = [leaf if isinstance(leaf, TensorSpec) else TensorSpec.from_tensor(leaf) for leaf in leaves]
                values = [leaf.dummy_value() if isinstance(leaf, TensorSpec) else leaf._value for leaf in leaves]
                graph = self._counted_trace(list(args), kwargs, specs, values)
                entry = self._cache[key] = ConcreteFunction(graph, polymorphic=True, name=self._name)
            return entry
        key, tensors, structured = self._canonical(args, kwargs)
        return self._concrete_for(key, tensors, structured, concrete_shapes=False)

    def concrete_functions(self):
        return list(self._cache.values())

    def __repr__(self):
        return f"<tapeflow.function.Function {self._name}>"


def _sized_dummy(spec, size):
    """A placeholder with unknown dimensions of ``size``; an unknown rank becomes rank size - 2,
    so two traces at sizes 2 and 3 also differ in rank."""
    if spec.shape.rank is None:
        shape = (size,) * (size - 2)
    else:
        shape = tuple(size if d is None else d for d in spec.shape)
    fill = 1 if spec.dtype.is_floating or spec.dtype.is_complex else b"" if spec.dtype.name == "string" else 0
    return np.full(shape, fill, dtype=spec.dtype._np)


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_relax_shapes=None, name=None, **kwargs):
    """Decorator/function turning ``func`` into a traced ``Function`` (``tf.function``)."""
    relax = bool(reduce_retracing or experimental_relax_shapes)     # experimental_relax_shapes: the old name
    if func is None:
        return lambda f: Function(f, input_signature=input_signature, name=name, reduce_retracing=relax,
                                  jit_compile=jit_compile, autograph=autograph)
    return Function(func, input_signature=input_signature, name=name, reduce_retracing=relax,
                    jit_compile=jit_compile, autograph=autograph)


# ------------------------------------------------------ custom gradients ---
def traced_custom_gradient_call(f, args, kwargs):
    """custom_gradient while tracing: outputs pass through an IdentityN node whose
    ``_gradient_op_type`` names a gradient registered for this call. The gradient
    function is itself traced into a graph, so SavedModel can store it."""
    from .custom_gradient import _accepts_variables, _run_body
    if kwargs:
        raise ValueError("The custom_gradient decorator currently supports keywords arguments only when eager "
                         "execution is enabled.")
    graph = recording.tracing_graph()
    inputs = [a._as_tensor() if isinstance(a, Variable) else convert_to_tensor(a) for a in args]
    outputs, grad_fn, variables = _run_body(f, [a if isinstance(a, Variable) else t for a, t in zip(args, inputs)], {})
    variables = [v for v in variables if not any(v is a for a in args)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses "
                        f"variables: {variables}")
    flat_outputs = [convert_to_tensor(o) for o in nest.flatten(outputs)]
    var_reads = [v._as_tensor() for v in variables]
    gradient_graph = _trace_gradient_function(graph, grad_fn, flat_outputs, len(inputs), variables)
    captured = list(gradient_graph.captures)
    identity_inputs = flat_outputs + inputs + var_reads + captured
    op_name = f"CustomGradient-{uuid.uuid4().hex}"
    RegisterGradient(op_name)(custom_gradient_function(ConcreteFunction(gradient_graph, name=op_name),
                                                       len(flat_outputs), len(inputs) + len(var_reads),
                                                       len(captured)))
    graph.custom_gradients[op_name] = {"graph": gradient_graph, "n_outputs": len(flat_outputs),
                                       "n_differentiable": len(inputs) + len(var_reads),
                                       "n_captures": len(captured)}
    results = execute("IdentityN", tuple(identity_inputs), {"_gradient_op_type": op_name})
    return nest.pack_sequence_as(outputs, list(results[:len(flat_outputs)]))


def _trace_gradient_function(parent, grad_fn, outputs, n_inputs, variables):
    """Traces ``grad_fn(*upstream[, variables=])`` into a child graph of ``parent``."""
    from .custom_gradient import make_gradient_function
    graph = FuncGraph(parent.name + "_grad", parent=parent)
    wrapped = make_gradient_function(grad_fn, n_inputs, variables)
    with recording.tracing_into(graph):
        upstream = [graph.placeholder(TensorSpec.from_tensor(o), np.zeros_like(o._value)) for o in outputs]
        grads = wrapped(None, *upstream)
        graph.set_outputs([g if g is not None else None for g in grads])
    return graph


def custom_gradient_function(gradient_function, n_outputs, n_differentiable, n_captures):
    """The gradient of an IdentityN custom-gradient node, replaying the traced ``gradient_function``.

    The node's inputs are its outputs' values, then the differentiable inputs and variable reads,
    then the tensors the gradient graph captures; only the differentiable ones get gradients.
    """
    def gradient(op, *upstream):
        captures = list(op.inputs[n_outputs + n_differentiable:])
        grads = gradient_function.call_flat(list(upstream[:n_outputs]), captures)
        return [None] * n_outputs + list(grads) + [None] * n_captures
    return gradient

"""What the tf.function guide shows of a traced function: its signature, printed as TensorFlow prints
it, and the operations of its graph."""
import inspect

from .framework import nest
from .framework.tensor_spec import TensorSpec


def _describe(value):
    if isinstance(value, TensorSpec):
        return repr(value)
    if isinstance(value, (list, tuple, dict)) and nest.flatten(value):
        return repr(nest.map_structure(lambda leaf: leaf if isinstance(leaf, TensorSpec) else _Literal(leaf),
                                       value))
    return f"Literal[{value!r}]"


class _Literal:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Literal[{self.value!r}]"


def _parameters(graph):
    """(name, kind, description) per parameter of the traced Python function, as it was called."""
    args, kwargs = graph.structured_inputs
    try:
        signature = inspect.signature(graph.python_function)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [(f"arg_{i}", "POSITIONAL_ONLY", _describe(v)) for i, v in enumerate(args)] + [
            (k, "KEYWORD_ONLY", _describe(v)) for k, v in kwargs.items()]
    rows = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            rows.extend((f"{name}_{i}", "POSITIONAL_ONLY", _describe(v)) for i, v in enumerate(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            rows.extend((k, "KEYWORD_ONLY", _describe(v)) for k, v in value.items())
        else:
            rows.append((name, kind.name, _describe(value)))
    return rows


def _output_type(graph):
    def spec(leaf):
        return TensorSpec.from_tensor(leaf) if hasattr(leaf, "_value") else _Literal(leaf)
    structure = getattr(graph, "structured_outputs", None)
    if structure is None:
        return "NoneTensorSpec()"
    return repr(nest.map_structure(spec, structure)) if nest.flatten(structure) else repr(structure)


def pretty_printed_signature(concrete, verbose=True):
    """``Input Parameters / Output Type / Captures`` of one concrete function (TensorFlow 2.21's layout)."""
    graph = concrete.graph
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {description}" for name, kind, description in _parameters(graph)] or ["  None"]
    lines += ["Output Type:", f"  {_output_type(graph)}", "Captures:"]
    captured = list(graph.variables)
    lines += [f"  {id(v)}: TensorSpec(shape=(), dtype=tf.resource, name=None)" for v in captured] or ["  None"]
    return "\n".join(lines)


class Operation:
    """One operation of a traced graph, as ``graph.get_operations()`` lists them."""

    def __init__(self, name, op_type, inputs, outputs):
        self.name = name
        self.type = op_type
        self.inputs = inputs
        self.outputs = outputs

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


_TYPE_OF_SPECIAL_NODE = {"__VariableRead__": "ReadVariableOp", "__VariableAssign__": "AssignVariableOp",
                         "__PythonCall__": "PyFunc"}
# Python's operators name their ops as TensorFlow's math_ops wrappers do (``a + a`` is the node "add").
_NAME_OF_OP = {"AddV2": "add", "Mul": "mul", "Sub": "sub", "RealDiv": "truediv"}
_ASSIGN_OP_OF_MODE = {"assign": "AssignVariableOp", "add": "AssignAddVariableOp",
                      "sub": "AssignSubVariableOp"}


def operations_of(graph):
    names = {}

    def unique(base):
        count = names.get(base, 0)
        names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    operations = []
    tensor_parameters = [name for name, _, description in _parameters(graph) if description.startswith("TensorSpec")]
    if len(tensor_parameters) != len(graph.input_specs):   # nested structures: TensorFlow's args_<i> names
        tensor_parameters = [f"args_{i}" for i in range(len(graph.input_specs))]
    for i, (spec, name) in enumerate(zip(graph.input_specs, tensor_parameters)):
        operations.append(Operation(unique(spec.name or name), "Placeholder", [], [graph.inputs[i]]))
    for op_type, refs, attrs, n_out in graph.nodes:
        shown = _TYPE_OF_SPECIAL_NODE.get(op_type, op_type)
        if op_type == "__VariableAssign__":
            shown = _ASSIGN_OP_OF_MODE.get(attrs.get("mode"), shown)
        operations.append(Operation(unique(_NAME_OF_OP.get(shown, shown)), shown, list(refs), n_out))
    return operations


# ------------------------------------------------------------------ GraphDef ---
def _text_value(value):
    if isinstance(value, bool):
        return f"b: {str(value).lower()}"
    if isinstance(value, int):
        return f"i: {value}"
    if isinstance(value, float):
        return f"f: {value!r}"
    if isinstance(value, str):
        return f"s: {value!r}".replace("'", '"')
    return f"s: {str(value)!r}".replace("'", '"')


class NodeDef:
    """One node of ``graph.as_graph_def()``: ``name``, ``op``, ``input`` (TensorFlow's "name", "name:1" and
    "^name" forms) and ``attr``."""

    def __init__(self, name, op, inputs=(), attr=None):
        self.name = name
        self.op = op
        self.input = list(inputs)
        self.attr = dict(attr or {})

    def __repr__(self):
        return f"<NodeDef {self.name!r} op={self.op}>"

    def __str__(self):
        lines = ["node {", f'  name: "{self.name}"', f'  op: "{self.op}"']
        lines += [f'  input: "{i}"' for i in self.input]
        for key, value in self.attr.items():
            lines += ["  attr {", f'    key: "{key}"', "    value {", f"      {_text_value(value)}", "    }", "  }"]
        return "\n".join(lines + ["}"])


class GraphDef:
    """What ``FuncGraph.as_graph_def()`` gives: ``node``, a list of NodeDef; prints in GraphDef text form."""

    def __init__(self, nodes):
        self.node = nodes

    def __str__(self):
        return "\n".join(str(n) for n in self.node) + "\n"

    __repr__ = __str__


def graph_def_of(graph):
    """The nodes of a traced graph as TensorFlow lays out a function's GraphDef: placeholders, then the ops
    (constants as Const nodes, variables through resource placeholders), then an Identity per output."""
    from .framework import nest
    operations = operations_of(graph)
    n_inputs = len(graph.input_specs)
    taken = {op.name for op in operations}
    nodes = [NodeDef(op.name, "Placeholder", attr={"dtype": spec.dtype.name, "shape": str(spec.shape)})
             for op, spec in zip(operations, graph.input_specs)]

    def unique(base):
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    constants, resources = {}, {}

    def resource(index):
        if index not in resources:
            resources[index] = unique(f"{getattr(graph.variables[index], '_shared_name', 'Variable')}/resource")
            nodes.append(NodeDef(resources[index], "Placeholder", attr={"dtype": "resource"}))
        return resources[index]

    def source(ref):
        kind = ref[0]
        if kind == "in":
            return operations[ref[1]].name
        if kind == "node":
            name = operations[n_inputs + ref[1]].name
            return name if ref[2] == 0 else f"{name}:{ref[2]}"
        if kind == "const":
            if ref[1] not in constants:
                constants[ref[1]] = unique("Const")
                nodes.append(NodeDef(constants[ref[1]], "Const"))
            return constants[ref[1]]
        return unique(f"capture_{ref[1]}")

    for op, (op_type, refs, attrs, _) in zip(operations[n_inputs:], graph.nodes):
        inputs = [source(r) for r in refs]
        if op_type == "__VariableRead__":
            inputs = [resource(attrs["variable"])]
        elif op_type == "__VariableAssign__":
            inputs = [resource(attrs["variable"])] + inputs
        elif "variables" in attrs:
            inputs = [resource(i) for i in attrs["variables"]] + inputs
        plain = {k: v for k, v in attrs.items() if isinstance(v, (bool, int, float, str)) and not k.startswith("_")
                 and k not in ("variable", "variables", "mode")}
        nodes.append(NodeDef(op.name, op.type, inputs, plain))
    outputs = [leaf.ref for leaf in nest.flatten(graph.outputs) if getattr(leaf, "ref", None) is not None] \
        if graph.outputs is not None else []
    for ref in outputs:
        nodes.append(NodeDef(unique("Identity"), "Identity", [source(ref)]))
    return GraphDef(nodes)

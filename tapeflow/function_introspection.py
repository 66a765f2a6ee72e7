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
        operations.append(Operation(unique(shown), shown, list(refs), n_out))
    return operations

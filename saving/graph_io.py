"""Traced graphs as plain data: JSON for nodes and structure, arrays stored separately.

Loading builds nothing but registered ops, with attributes that are JSON values
(lists come back as tuples), so reading a graph can never run code from the file.
"""
import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import host_array
from tapeflow.framework.tensor_spec import TensorSpec
from tapeflow.framework.recording import forward_of, state_op_variable_counts
from tapeflow.function import VARIABLE_ASSIGN, VARIABLE_READ, ConcreteFunction, OutputLeaf

_INTERNAL_NODES = (VARIABLE_READ, VARIABLE_ASSIGN)


def encode_structure(structure):
    if isinstance(structure, OutputLeaf):
        return {"ref": list(structure.ref)} if structure.ref is not None else {"python": structure.python}
    if isinstance(structure, dict):
        return {"dict": {str(k): encode_structure(v) for k, v in structure.items()}}
    if isinstance(structure, tuple):
        return {"tuple": [encode_structure(v) for v in structure]}
    if isinstance(structure, list):
        return {"list": [encode_structure(v) for v in structure]}
    raise TypeError(f"Cannot save an output of type {type(structure).__name__}")


def decode_structure(data):
    if "ref" in data:
        return OutputLeaf(ref=tuple(data["ref"]))
    if "python" in data:
        return OutputLeaf(python=data["python"])
    if "dict" in data:
        return {k: decode_structure(v) for k, v in data["dict"].items()}
    if "tuple" in data:
        return tuple(decode_structure(v) for v in data["tuple"])
    if "list" in data:
        return [decode_structure(v) for v in data["list"]]
    raise ValueError(f"Corrupt saved graph: unknown output entry {sorted(data)}")


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def traced_shapes(graph):
    """The input shapes a graph was traced at (a loaded graph keeps them as data)."""
    if isinstance(graph, LoadedGraph):
        return graph.traced_shapes
    return [host_array(t).shape for t in graph.inputs]


def graph_to_data(graph, variable_ids, gradient_names):
    """(JSON-able dict, list of constant arrays) for a FuncGraph.

    ``variable_ids`` maps id(Variable) -> object index; ``gradient_names`` maps a
    node's ``_gradient_op_type`` to the name it is saved under (or None to drop it).
    """
    _refuse_unsaveable(graph.name, graph)
    nodes = []
    for op_type, refs, attrs, n_out in graph.nodes:
        attrs = dict(attrs)
        if "variable" in attrs and op_type in _INTERNAL_NODES:
            attrs["variable"] = variable_ids[id(graph.variables[attrs["variable"]])]
        if state_op_variable_counts(op_type) is not None:
            attrs["variables"] = [variable_ids[id(graph.variables[i])] for i in attrs["variables"]]
        if "_gradient_op_type" in attrs:
            saved = gradient_names.get(attrs["_gradient_op_type"])
            attrs["_gradient_op_type"] = saved if saved is not None else attrs["_gradient_op_type"]
        for key, value in attrs.items():
            if isinstance(value, ConcreteFunction):   # a control-flow node's branch, loop condition or body
                attrs[key] = {"subgraph": subgraph_to_data(value, variable_ids, gradient_names)}
        nodes.append({"op": op_type, "inputs": [list(r) for r in refs], "attrs": attrs, "num_outputs": n_out})
    data = {
        "name": graph.name,
        "inputs": [s.to_json() for s in graph.input_specs],
        "traced_shapes": [list(shape) for shape in traced_shapes(graph)],
        "n_captures": len(graph.captures),
        "nodes": nodes,
        "outputs": encode_structure(graph.outputs),
        "n_constants": len(graph.constants),
        "constant_specs": [{"shape": list(np.shape(c)), "dtype": dtypes.as_dtype(np.asarray(c).dtype).name}
                           for c in graph.constants],
    }
    return data, list(graph.constants)


def _refuse_unsaveable(name, graph):
    """A node holding a live Python object captured at trace time (a tf.data dataset, in the graph or
    one of its control-flow sub-graphs) has no data form."""
    for op_type, _, attrs, _ in graph.nodes:
        if op_type in _INTERNAL_NODES:
            continue
        describe = getattr(forward_of(op_type)[0], "unsaveable_capture", None)
        if describe is not None:
            raise ValueError(f"Cannot save the traced function {name!r}: its graph captures {describe(attrs)}, "
                             "which it iterates at each call. A dataset is a Python pipeline, not data a "
                             "SavedModel can hold; save a function that takes the batches as arguments (a "
                             "train_step(x, y)) and iterate the dataset outside it.")
        for value in attrs.values():
            if isinstance(value, ConcreteFunction):
                _refuse_unsaveable(name, value.graph)


def subgraph_to_data(function, variable_ids, gradient_names):
    """A control-flow sub-graph as data: a graph whose inputs are all explicit (no constants, no captures),
    with the specs of its outputs (what the node stands for while a trace inlines it)."""
    graph = function.graph
    if graph.constants or graph.captures:
        raise ValueError(f"Cannot save the control-flow sub-graph {graph.name!r}: it was traced outside a "
                         "tf.function and holds constants")
    data, _ = graph_to_data(graph, variable_ids, gradient_names)
    data["output_specs"] = [{"shape": list(np.shape(v)), "dtype": dtypes.as_dtype(np.asarray(v).dtype).name}
                            for v in function.trace_outputs]
    return data


def _subgraph(data, variables, gradient_names):
    function = ConcreteFunction(LoadedGraph(data, [], variables, gradient_names), name=data["name"])
    function.trace_outputs = [np.zeros(spec["shape"], dtypes.as_dtype(spec["dtype"])._np)
                              for spec in data["output_specs"]]
    return function


class LoadedGraph:
    """The parts of a FuncGraph that ConcreteFunction replays, rebuilt from validated saved data
    (saving/graph_validation.py has checked every field).

    ``variables``: the loaded objects by index; ``gradient_names``: a saved custom gradient's name
    -> the name it is bound to for this load (a node naming an unsaved gradient keeps its name).
    """

    def __init__(self, data, constants, variables, gradient_names):
        self.name = data["name"]
        self.input_specs = [TensorSpec.from_json(s) for s in data["inputs"]]
        self.traced_shapes = [tuple(s) for s in data["traced_shapes"]]
        self.constants = constants
        self.captures = [None] * data["n_captures"]
        self.custom_gradients = {}   # bound name -> saved gradient, filled in once all are loaded (re-saving)
        self.variables = []
        self.nodes = []
        index_of = {}
        for node in data["nodes"]:
            op_type = node["op"]
            attrs = {k: _subgraph(v["subgraph"], variables, gradient_names) if isinstance(v, dict) else _tuples(v)
                     for k, v in node["attrs"].items()}
            if op_type in _INTERNAL_NODES:
                attrs["variable"] = self._variable_index(attrs["variable"], variables, index_of)
            if state_op_variable_counts(op_type) is not None:
                attrs["variables"] = tuple(self._variable_index(obj, variables, index_of)
                                           for obj in attrs["variables"])
            if "_gradient_op_type" in attrs:
                attrs["_gradient_op_type"] = gradient_names.get(attrs["_gradient_op_type"], attrs["_gradient_op_type"])
            self.nodes.append([op_type, [tuple(r) for r in node["inputs"]], attrs, node["num_outputs"]])
        self.outputs = decode_structure(data["outputs"])

    def _variable_index(self, obj, variables, index_of):
        """The graph's index of loaded object ``obj`` (a variable), adding it on first use."""
        if obj not in index_of:
            index_of[obj] = len(self.variables)
            self.variables.append(variables[obj])
        return index_of[obj]

"""Functional models: a graph of layer calls from ``Input`` tensors to outputs.

Calling layers on KerasTensors records Nodes; ``Model(inputs, outputs)``
walks them back from the outputs, orders them, and replays them on real
tensors in ``call``. Its config lists every layer with its inbound nodes in
Keras 3's JSON form, so ``from_config`` can rebuild the same graph.
"""
import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, math_ops

from ..core.input_layer import InputLayer
from ..input_spec import InputSpec
from ..keras_tensor import KerasTensor
from .model import Model
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object
from .. import backend
from ..utils import tree


def _flatten_io(structure):
    """The tensors of a model's inputs or outputs in Keras's order: a dict by sorted key, as keras.tree flattens
    it (model.outputs, output_names, the order of layers and weights follow)."""
    if isinstance(structure, dict):
        return [structure[k] for k in sorted(structure)]
    if isinstance(structure, (list, tuple)):
        return [t for item in structure for t in _flatten_io(item)]
    return [structure]


def _pack_io(structure, flat):
    """The inverse of ``_flatten_io``: ``flat`` laid out as ``structure`` (a dict filled by sorted key, in its
    own key order)."""
    leaves = iter(flat)

    def pack(node):
        if isinstance(node, dict):
            values = {k: next(leaves) for k in sorted(node)}
            return type(node)((k, values[k]) for k in node)
        if isinstance(node, (list, tuple)):
            items = [pack(item) for item in node]
            return type(node)(*items) if hasattr(node, "_fields") else type(node)(items)
        return next(leaves)
    return pack(structure)


def match_input_rank(x, input_shape):
    """``x`` with a trailing axis of size 1 added or removed to match the rank of ``input_shape``, as Keras does
    for model inputs: a 1-D array fed to ``Input((1,))`` becomes a column, ``(n, 2, 1)`` fed to ``Input((2,))``
    a matrix. Other ranks are left for the layers to reject."""
    shape = getattr(x, "shape", None)
    if shape is None or x is None:
        return x
    rank, expected = len(shape), len(input_shape)
    if rank == expected - 1 and input_shape[-1] == 1:
        new_shape = tuple(shape) + (1,)
    elif rank == expected + 1 and rank > 1 and shape[-1] == 1:
        new_shape = tuple(shape)[:-1]
    else:
        return x
    if isinstance(x, KerasTensor):
        return KerasTensor(new_shape, dtype=x.dtype, record_history=False)
    x = convert_to_tensor(x)
    return array_ops.expand_dims(x, -1) if len(new_shape) > rank else array_ops.squeeze(x, [-1])


def _cast_to_input_dtype(x, dtype):
    """A numeric tensor fed to a numeric Input of another dtype is cast to the Input's dtype, as in Keras."""
    if not isinstance(x, Tensor) or dtype is None:
        return x
    target = dtypes.as_dtype(dtype)
    numeric = (lambda d: d.is_floating or d.is_integer or d.is_bool)
    if x.dtype == target or not (numeric(x.dtype) and numeric(target)):
        return x
    return math_ops.cast(x, target)


def map_graph(inputs, outputs):
    """(nodes in execution order, layers in Keras order, {depth: nodes}) of the graph from inputs to outputs."""
    order, finished, active = [], set(), set()

    def visit(node):
        if id(node) in finished:
            return
        if id(node) in active:
            raise ValueError("The functional graph contains a cycle.")
        active.add(id(node))
        for parent in node.parent_nodes:
            visit(parent)
        active.discard(id(node))
        finished.add(id(node))
        order.append(node)

    for t in outputs:
        layer, node_index, _ = t._keras_history
        visit(layer._inbound_nodes[node_index])
    input_ids = {id(t) for t in inputs}
    for node in order:
        if node.is_input and not any(id(t) in input_ids for t in node.output_tensors):
            t = node.output_tensors[0]
            raise ValueError(f"Graph disconnected: cannot find parent for tensor {t} at layer "
                             f"'{node.operation.name}'. The model's inputs are {[i.name for i in inputs]}; every "
                             "Input used to compute the outputs must be listed in `inputs`.")
    depth = {id(n): 0 for n in order}
    for node in reversed(order):
        for parent in node.parent_nodes:
            depth[id(parent)] = max(depth[id(parent)], depth[id(node)] + 1)
    # Input nodes sit at the deepest level, as in Keras.
    deepest = max(depth.values()) if depth else 0
    for node in order:
        if node.is_input:
            depth[id(node)] = deepest
    by_depth = {}
    for node in order:
        by_depth.setdefault(depth[id(node)], []).append(node)
    by_depth = {d: by_depth[d] for d in sorted(by_depth, reverse=True)}
    layers, seen = [], set()
    for d in by_depth:
        for node in by_depth[d]:
            if id(node.operation) not in seen:
                seen.add(id(node.operation))
                layers.append(node.operation)
    return order, layers, by_depth


@keras_export("keras.src.models.functional.Functional")
class Functional(Model):
    """A model defined by ``Model(inputs, outputs)``."""
    _autocast_inputs = False

    _has_symbolic_graph = True  # output shapes come from the graph, without running it

    def __init__(self, inputs, outputs, name=None, **kwargs):
        trainable = kwargs.pop("trainable", True)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to Model: {kwargs}")
        Model.__init__(self, name=name or backend.unique_name("functional"), trainable=trainable)
        for label, value in (("inputs", inputs), ("outputs", outputs)):
            for t in _flatten_io(value):
                if not isinstance(t, KerasTensor) or t._keras_history is None:
                    raise ValueError(f"All `{label}` of a functional Model must come from `keras.Input` or from "
                                     f"calling layers on it (KerasTensors). Received: {label}={value} including "
                                     f"{t!r} of type {type(t).__name__}")
        self.__dict__["_inputs_struct"] = inputs
        self.__dict__["_outputs_struct"] = outputs
        flat_inputs = _flatten_io(inputs)
        flat_outputs = _flatten_io(outputs)
        for t in flat_inputs:
            if not isinstance(t._keras_history[0], InputLayer):
                raise ValueError(f"Model inputs must come from `keras.Input` (thus holding past layer metadata). "
                                 f"Received: {t} produced by layer '{t._keras_history[0].name}'")
        self.__dict__["_inputs"] = flat_inputs
        self.__dict__["_outputs"] = flat_outputs
        nodes, layers, by_depth = map_graph(flat_inputs, flat_outputs)
        self.__dict__["_nodes"] = nodes
        self.__dict__["_node_ids"] = {id(n) for n in nodes}
        self.__dict__["_nodes_by_depth"] = by_depth
        self.__dict__["_run_nodes"] = [n for n in nodes if not n.is_input]
        for layer in layers:
            if not any(existing is layer for existing in self._layers):
                self._layers.append(layer)
        if not isinstance(inputs, dict):
            specs = [InputSpec(shape=t.shape, allow_last_axis_squeeze=True) for t in flat_inputs]
            self.input_spec = specs[0] if len(specs) == 1 and not isinstance(inputs, (list, tuple)) else specs
        self.built = True
        self._lock_state()

    # -- running the graph ------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # A dict keyed by Input names feeds a model built on a list (or a single Input): reorder it first, so the
        # input specs are checked against the right tensors.
        if args and isinstance(args[0], dict) and not isinstance(self._inputs_struct, dict):
            args = (self._dict_to_input_struct(args[0]),) + args[1:]
        return Model.__call__(self, *args, **kwargs)

    def _dict_to_input_struct(self, data):
        names = self.input_names
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f'Missing data for input "{missing[0]}". You passed a data dictionary with keys '
                             f"{list(data)}. Expected the following keys: {names}")
        return _pack_io(self._inputs_struct, [data[n] for n in names])

    def _flat_call_inputs(self, inputs):
        struct = self._inputs_struct
        if isinstance(struct, dict):
            if not isinstance(inputs, dict):
                raise ValueError(f"Model '{self.name}' expects a dict of inputs with keys {list(struct)}; "
                                 f"received {type(inputs).__name__}")
            missing = [k for k in struct if k not in inputs]
            if missing:
                raise ValueError(f"Missing input(s) {missing} for model '{self.name}'.")
            flat = [inputs[k] for k in sorted(struct)]
        elif isinstance(inputs, dict):
            flat = _flatten_io(self._dict_to_input_struct(inputs))
        else:
            flat = _flatten_io(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(flat) != len(self._inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self._inputs)} input(s), but it received "
                             f"{len(flat)} input tensors.")
        return [_cast_to_input_dtype(match_input_rank(x, t.shape), t.dtype) for x, t in zip(flat, self._inputs)]

    def call(self, inputs, training=None, mask=None):
        values = {}
        for t, value in zip(self._inputs, self._flat_call_inputs(inputs)):
            values[id(t)] = value
        for node in self._run_nodes:
            args, kwargs = node.arguments(values)
            if "training" not in kwargs:
                kwargs = dict(kwargs, training=training)
            outputs = node.operation(*args, **kwargs)
            for t, value in zip(node.output_tensors, tree.flatten(outputs)):
                values[id(t)] = value
        return _pack_io(self._outputs_struct, [values[id(t)] for t in self._outputs])

    def compute_output_spec(self, inputs, training=None, mask=None):
        values = {}
        for t, value in zip(self._inputs, self._flat_call_inputs(inputs)):
            values[id(t)] = value
        for node in self._run_nodes:
            args, kwargs = node.arguments(values)
            outputs = node.operation._symbolic_output(*args, **kwargs)
            for t, value in zip(node.output_tensors, tree.flatten(outputs)):
                values[id(t)] = value
        return _pack_io(self._outputs_struct, [values[id(t)] for t in self._outputs])

    def compute_output_shape(self, input_shape):
        specs = tree.map_shape_structure(lambda s: KerasTensor(s), input_shape)
        return tree.map_structure(lambda t: t.shape, self.compute_output_spec(specs))

    def _output_names(self):
        """What compile's dicts and dict targets are keyed by: a dict of outputs' keys, else the output layers'
        names (in output order)."""
        if isinstance(self._outputs_struct, dict):
            return sorted(self._outputs_struct)
        return self.output_names

    @property
    def output_names(self):
        return [t._keras_history[0].name for t in self._outputs]

    @property
    def input_names(self):
        return [t._keras_history[0].name for t in self._inputs]

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        shapes = [t.shape for t in self._inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [t.shape for t in self._outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    # -- config -----------------------------------------------------------------------
    def get_config(self):
        node_index = {}
        for layer in self._layers:
            kept = [n for n in layer._inbound_nodes if id(n) in self._node_ids]
            for i, node in enumerate(kept):
                node_index[id(node)] = i

        def history(t):
            layer, index, tensor_index = t._keras_history
            return [layer.name, node_index.get(id(layer._inbound_nodes[index]), index), tensor_index]

        def serialize_arg(x):
            if isinstance(x, KerasTensor):
                return {"class_name": "__keras_tensor__",
                        "config": {"shape": list(x.shape), "dtype": x.dtype, "keras_history": history(x)}}
            if isinstance(x, Tensor):     # a constant operand of an operation (``h + position``)
                return {"class_name": "__tensor__", "config": {"value": x.numpy().tolist(), "dtype": x.dtype.name}}
            return serialize_keras_object(x)

        layers = []
        for layer in self._layers:
            config = serialize_keras_object(layer)
            config["name"] = layer.name
            config["inbound_nodes"] = [
                {"args": tree.map_structure(serialize_arg, list(node.call_args)),
                 "kwargs": {k: tree.map_structure(serialize_arg, v) for k, v in node.call_kwargs.items()
                            if k != "training"}}
                for node in layer._inbound_nodes if id(node) in self._node_ids and not node.is_input]
            layers.append(config)

        def io(struct):
            if isinstance(struct, dict):
                return {k: history(v) for k, v in struct.items()}
            if isinstance(struct, (list, tuple)):
                return [io(v) for v in struct]
            return history(struct)
        return {"name": self.name, "trainable": self.trainable, "layers": layers,
                "input_layers": io(self._inputs_struct), "output_layers": io(self._outputs_struct)}


def constant_operand(config):
    """A constant tensor stored in a node's arguments (``{"value": nested list, "dtype": name}``)."""
    if not isinstance(config, dict) or not isinstance(config.get("dtype"), str):
        raise ValueError(f"A __tensor__ argument needs a 'value' and a 'dtype' name, got {config!r}")
    dtype = dtypes.as_dtype(config["dtype"])
    if not (dtype.is_floating or dtype.is_integer or dtype.is_bool):
        raise ValueError(f"A __tensor__ argument must be numeric or boolean, got dtype {config['dtype']!r}")
    return convert_to_tensor(np.array(config.get("value"), dtype=dtype.as_numpy_dtype))


def functional_from_config(cls, config, custom_objects=None):
    """Rebuilds a functional model: create every layer, then replay the inbound nodes until all are done."""
    created = {}
    pending = []
    for layer_data in config["layers"]:
        # A config without a name (a custom get_config returning only its constructor arguments) gives the layer
        # a fresh name, as in Keras; the graph refers to it by the saved name below.
        layer_config = {k: v for k, v in layer_data.items() if k not in ("inbound_nodes", "name")}
        layer = deserialize_keras_object(layer_config, custom_objects=custom_objects)
        created[layer_data.get("name", layer.name)] = layer
        pending.append((layer, list(layer_data.get("inbound_nodes", []))))

    def tensor_from_history(history):
        name, node_index, tensor_index = history[:3]
        layer = created[name]
        if node_index >= len(layer._inbound_nodes):
            raise LookupError(name)
        return layer._inbound_nodes[node_index].output_tensors[tensor_index]

    def resolve(x):
        if isinstance(x, dict) and x.get("class_name") == "__keras_tensor__":
            return tensor_from_history(x["config"]["keras_history"])
        if isinstance(x, dict) and x.get("class_name") == "__tensor__":
            return constant_operand(x.get("config"))
        if isinstance(x, dict) and "class_name" in x:
            return deserialize_keras_object(x, custom_objects=custom_objects)
        if isinstance(x, dict):
            return {k: resolve(v) for k, v in x.items()}
        if isinstance(x, list):
            return [resolve(v) for v in x]
        return x

    def node_call(layer, node):
        if isinstance(node, dict):
            args = [resolve(a) for a in node.get("args", [])]
            kwargs = {k: resolve(v) for k, v in node.get("kwargs", {}).items()}
        else:  # Keras 2: [[layer_name, node_index, tensor_index, kwargs], ...]
            tensors = [tensor_from_history(entry) for entry in node]
            kwargs = node[0][3] if node and len(node[0]) > 3 and isinstance(node[0][3], dict) else {}
            args = [tensors[0] if len(tensors) == 1 else tensors]
        # A mask passed explicitly as graph tensors (``Attention()([q, v], mask=[qm, vm])``) is an input of
        # the node; any other stored mask is dropped.
        if not any(isinstance(t, KerasTensor) for t in tree.flatten(kwargs.get("mask"))):
            kwargs.pop("mask", None)
        layer(*args, **kwargs)

    progress = True
    while progress and any(nodes for _, nodes in pending):
        progress = False
        for layer, nodes in pending:
            while nodes:
                try:
                    node_call(layer, nodes[0])
                except LookupError:
                    break
                nodes.pop(0)
                progress = True
    stuck = [layer.name for layer, nodes in pending if nodes]
    if stuck:
        raise ValueError(f"Could not rebuild the functional graph: the inbound nodes of layer(s) {stuck} refer to "
                         "layers or nodes that do not exist in the config.")

    def io(struct):
        if isinstance(struct, dict):
            return {k: io(v) for k, v in struct.items()}
        if isinstance(struct, list) and struct and isinstance(struct[0], str):
            return tensor_from_history(struct)
        if isinstance(struct, list):
            return [io(v) for v in struct]
        raise ValueError(f"Invalid input/output layer spec in the config: {struct!r}")
    inputs = io(config["input_layers"])
    outputs = io(config["output_layers"])
    # Keras 2 wrote a single input or output as a one-element list.
    if isinstance(inputs, list) and len(inputs) == 1:
        inputs = inputs[0]
    if isinstance(outputs, list) and len(outputs) == 1:
        outputs = outputs[0]
    return cls(inputs=inputs, outputs=outputs, name=config.get("name"), trainable=config.get("trainable", True))

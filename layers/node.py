"""Node: one call of a layer on symbolic tensors, an edge of a functional graph."""
from tapeflow import nest

from .keras_tensor import KerasTensor


class Node:
    """``operation`` called on ``call_args``/``call_kwargs`` gave ``outputs``."""

    def __init__(self, operation, call_args=(), call_kwargs=None, outputs=None):
        self.operation = operation
        self.call_args = tuple(call_args)
        self.call_kwargs = dict(call_kwargs or {})
        self.outputs = outputs
        self.output_tensors = [t for t in nest.flatten(outputs) if isinstance(t, KerasTensor)]
        self.input_tensors = [t for t in nest.flatten((self.call_args, self.call_kwargs))
                              if isinstance(t, KerasTensor)]
        node_index = len(operation._inbound_nodes)
        operation._inbound_nodes.append(self)
        for i, t in enumerate(self.output_tensors):
            t._keras_history = (operation, node_index, i)
        self.parent_nodes = []
        for t in self.input_tensors:
            layer, index, _ = t._keras_history
            self.parent_nodes.append(layer._inbound_nodes[index])

    @property
    def is_input(self):
        return not self.input_tensors

    def arguments(self, values):
        """call_args/call_kwargs with every KerasTensor replaced by ``values[id(tensor)]``."""
        def fill(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x
        args = nest.map_structure(fill, self.call_args) if self.input_tensors else self.call_args
        kwargs = nest.map_structure(fill, self.call_kwargs) if self.call_kwargs else {}
        return args, kwargs

    def __repr__(self):
        return f"<Node {self.operation.name}: {len(self.input_tensors)} inputs -> {len(self.output_tensors)} outputs>"

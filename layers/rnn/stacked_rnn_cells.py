"""StackedRNNCells: cells run one after the other at each step, as one cell."""
from ..layer import Layer
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object


def _sizes(cell):
    size = cell.state_size
    return list(size) if isinstance(size, (list, tuple)) else [size]


@keras_export("keras.layers.StackedRNNCells")
class StackedRNNCells(Layer):
    """Each cell's output is the next cell's input; the states are the cells' states, in order, flat."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` attribute. "
                                 f"Received: cell={cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [size for cell in self.cells for size in _sizes(cell)]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _sizes(last)[0]

    def get_initial_state(self, batch_size=None):
        from tapeflow.ops import array_ops
        states = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                own = cell.get_initial_state(batch_size=batch_size)
                states.extend(own if isinstance(own, (list, tuple)) else [own])
            else:
                states.extend(array_ops.zeros((batch_size, s), self.compute_dtype) for s in _sizes(cell))
        return states

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if not cell.built:
                cell.build(shape)
                cell.built = True
            out = getattr(cell, "output_size", None) or _sizes(cell)[0]
            shape = shape[:-1] + (out,)
        self.built = True

    def call(self, inputs, states, training=False):
        new_states = []
        position = 0
        x = inputs
        for cell in self.cells:
            count = len(_sizes(cell))
            own = list(states[position:position + count])
            position += count
            x, own_new = cell(x, own, training=training)
            new_states.extend(own_new if isinstance(own_new, (list, tuple)) else [own_new])
        return x, new_states

    def reset_dropout_mask(self):
        for cell in self.cells:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()

    def reset_recurrent_dropout_mask(self):
        for cell in self.cells:
            if hasattr(cell, "reset_recurrent_dropout_mask"):
                cell.reset_recurrent_dropout_mask()

    def get_config(self):
        config = super().get_config()
        config["cells"] = [serialize_keras_object(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_keras_object(c, custom_objects=custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)

"""Bidirectional: one copy of an RNN reads the sequence forward, another backward; their outputs merge."""
from tapeflow.ops import array_ops, math_ops

from ..layer import Layer
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object

MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy(layer, name, go_backwards=None):
    config = layer.get_config()
    config["name"] = name
    if go_backwards is not None:
        config["go_backwards"] = go_backwards
    return type(layer).from_config(config)


def _removeprefix(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


@keras_export("keras.layers.Bidirectional")
class Bidirectional(Layer):
    """``merge_mode``: "concat" (default), "sum", "mul", "ave", or None for the list [forward, backward]."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer) or not hasattr(layer, "go_backwards"):
            raise ValueError(f"Please initialize `Bidirectional` layer with a recurrent layer instance (with a "
                             f"`go_backwards` argument). Received: {layer}")
        if merge_mode not in MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        base = _removeprefix(_removeprefix(layer.name, "forward_"), "backward_")
        self.forward_layer = _copy(layer, "forward_" + base)
        if backward_layer is None:
            self.backward_layer = _copy(layer, "backward_" + base, go_backwards=not layer.go_backwards)
        else:
            if backward_layer.go_backwards == layer.go_backwards:
                raise ValueError("Forward layer and backward layer should have different `go_backwards` values. "
                                 f"Received: forward go_backwards={layer.go_backwards}, backward "
                                 f"go_backwards={backward_layer.go_backwards}")
            self.backward_layer = backward_layer
        for attr in ("return_sequences", "return_state", "stateful"):
            if getattr(self.forward_layer, attr) != getattr(self.backward_layer, attr):
                raise ValueError(f"Forward layer and backward layer should have the same `{attr}`.")
        self.merge_mode = merge_mode
        self.return_sequences = self.forward_layer.return_sequences
        self.return_state = self.forward_layer.return_state
        self.stateful = self.forward_layer.stateful
        for sub in (self.forward_layer, self.backward_layer):
            sub.zero_output_for_mask = self.return_sequences
        self.supports_masking = True
        self.__dict__["_initial_weights"] = weights

    def build(self, sequences_shape, initial_state_shape=None):
        self.forward_layer.build(sequences_shape)
        self.backward_layer.build(sequences_shape)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self.__dict__["_initial_weights"] = None

    def call(self, sequences, initial_state=None, mask=None, training=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        kwargs = {"training": training}
        if mask is not None:
            kwargs["mask"] = mask
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = array_ops.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = array_ops.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = math_ops.add(y, y_rev)
        elif self.merge_mode == "ave":
            output = math_ops.multiply(math_ops.add(y, y_rev), 0.5)
        elif self.merge_mode == "mul":
            output = math_ops.multiply(y, y_rev)
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def reset_states(self):
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    reset_state = reset_states

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shape = self.forward_layer.compute_output_shape(sequences_shape)
        states = []
        if self.return_state:
            shape, states = shape[0], list(shape[1:])
        if self.merge_mode == "concat":
            out = [tuple(shape[:-1]) + (None if shape[-1] is None else 2 * shape[-1],)]
        elif self.merge_mode is None:
            out = [tuple(shape), tuple(shape)]
        else:
            out = [tuple(shape)]
        if self.return_state:
            return out + states + states
        return out[0] if len(out) == 1 else out

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        outputs = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state:
            count = len(self.forward_layer.cell.state_size) if isinstance(
                self.forward_layer.cell.state_size, (list, tuple)) else 1
            return outputs + [None] * (2 * count)
        return outputs if self.merge_mode is None else output_mask

    def get_config(self):
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        config["layer"] = serialize_keras_object(self.forward_layer)
        config["backward_layer"] = serialize_keras_object(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"], custom_objects=custom_objects)
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize_keras_object(config["backward_layer"],
                                                                custom_objects=custom_objects)
        return cls(**config)

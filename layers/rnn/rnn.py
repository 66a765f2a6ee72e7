"""RNN: runs a cell over the steps of a sequence.

Two paths give the same numbers. When the cell is a built-in one whose math
the fused kernels compute exactly (``cell.fused_cell(training)`` names it:
standard tanh/sigmoid activations, no recurrent dropout while training), the
inputs of all steps are projected with one matmul and the recurrence runs as
one ``RNNSequence`` op (tapeflow/ops/rnn_ops.py). Any other cell, user-written
ones included, is called step by step.

Masks follow Keras: a masked step keeps the states, and its output is the
previous output (zeros with ``zero_output_for_mask``); with ``go_backwards``
the steps are read last to first and the outputs come out in that order.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, math_ops, rnn_ops

from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object
from ..utils import tree
from .dropout_rnn_cell import DropoutRNNCell
from .stacked_rnn_cells import StackedRNNCells


def builtin_cell(cell_class, cell_kwargs, layer_kwargs):
    """The cell of an LSTM/GRU/SimpleRNN layer, named as Keras names it, with the layer's dtype and trainable."""
    return cell_class(name=_cell_name(cell_class), dtype=layer_kwargs.get("dtype"),
                      trainable=layer_kwargs.get("trainable", True), **cell_kwargs)


def _cell_name(cell_class):
    return {"LSTMCell": "lstm_cell", "GRUCell": "gru_cell", "SimpleRNNCell": "simple_rnn_cell"}[cell_class.__name__]


def _state_sizes(cell):
    size = cell.state_size
    return list(size) if isinstance(size, (list, tuple)) else [size]


def _state_shape(size):
    """The shape of one state after the batch axis: ``10`` -> (10,), a nested ``[20, 30]`` -> (20, 30)."""
    return tuple(int(d) for d in size) if isinstance(size, (list, tuple)) else (int(size),)


def _output_shapes(size):
    """The per-sample shapes of a cell's output: one shape, or a list of them for a nested ``output_size``."""
    if isinstance(size, (list, tuple)) and any(isinstance(d, (list, tuple)) for d in size):
        return [_state_shape(d) for d in size]
    return _state_shape(size)


def _flat_shapes(shapes):
    """The shapes of a (possibly nested) structure of input shapes, in order."""
    if tree.is_shape(shapes):
        return [tuple(shapes)]
    return [tuple(s) for s in shapes] if all(tree.is_shape(s) for s in shapes) else [
        s for part in shapes for s in _flat_shapes(part)]


def _as_tensor(x, dtype):
    if isinstance(x, Variable):
        x = x.value()
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(x, dtype=dtype))
    return x


@keras_export("keras.layers.RNN")
class RNN(Layer):
    """``RNN(cell)``: a cell is a layer with ``state_size`` whose ``call(inputs, states)`` returns
    ``(output, new_states)``; a list of cells is stacked."""
    cell_class = None   # the built-in layers (LSTM, GRU, SimpleRNN): their cell's class, whose config they flatten

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell, dtype=kwargs.get("dtype"))
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(f"Argument `cell` should have a `call` method and a `state_size` attribute. "
                             f"Received: cell={cell}")
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self.__dict__["_state_values"] = None  # stateful: the states between calls (not weights, as in Keras)

    # -- building ---------------------------------------------------------------------
    def build(self, sequences_shape, initial_state_shape=None):
        # A user cell may take nested inputs (a tuple of sequences): each is (batch, steps, features...).
        nested = not tree.is_shape(sequences_shape)
        for shape in _flat_shapes(sequences_shape):
            if len(shape) < 3 or nested and self.cell_class is not None:
                raise ValueError(f"Layer '{self.name}' expects inputs of shape (batch, steps, features...); "
                                 f"received input shape {sequences_shape}")
        step_shape = tree.map_shape_structure(lambda shape: (shape[0],) + tuple(shape[2:]), sequences_shape)
        sequences_shape = _flat_shapes(sequences_shape)[0]
        if not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            batch = sequences_shape[0]
            if batch is None:
                raise ValueError(f"Layer '{self.name}' is stateful: it needs a fixed batch size. Pass "
                                 "`batch_size` to the Input (e.g. `keras.Input(shape, batch_size=32)`).")
            self.__dict__["_state_values"] = [
                Variable(np.zeros((batch,) + _state_shape(size), self.compute_dtype), trainable=False,
                         name="rnn_state")
                for size in _state_sizes(self.cell)]
        self.built = True

    @property
    def states(self):
        return self._state_values

    def reset_states(self):
        """Sets the states of a stateful layer back to zeros."""
        if self._state_values is not None:
            for v in self._state_values:
                v.assign(np.zeros(v.shape, v.dtype.name))

    reset_state = reset_states

    # -- running ------------------------------------------------------------------------
    def get_initial_state(self, batch_size):
        if hasattr(self.cell, "get_initial_state"):
            states = self.cell.get_initial_state(batch_size=batch_size)
            return list(states) if isinstance(states, (list, tuple)) else [states]
        return [array_ops.zeros((batch_size,) + _state_shape(size), self.compute_dtype)
                for size in _state_sizes(self.cell)]

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        nested = not isinstance(sequences, Tensor)
        first = tree.flatten(sequences)[0]
        batch, steps = host_array(first).shape[:2]
        if steps == 0:
            raise ValueError(f"Layer '{self.name}' received a sequence of 0 time steps (input shape "
                             f"{tuple(host_array(first).shape)}); it needs at least one.")
        if initial_state is not None:
            initial_state = initial_state if isinstance(initial_state, (list, tuple)) else [initial_state]
            states = [_as_tensor(s, self.compute_dtype) for s in initial_state]
        elif self.stateful:
            states = [v.value() for v in self._state_values]
        else:
            states = self.get_initial_state(batch)
        if len(states) != len(_state_sizes(self.cell)):
            raise ValueError(f"Layer '{self.name}' expects {len(_state_sizes(self.cell))} initial state(s), "
                             f"received {len(states)}.")
        if mask is not None:
            mask = math_ops.cast(mask, "bool")
        reset = [getattr(self.cell, name, None) for name in ("reset_dropout_mask", "reset_recurrent_dropout_mask")]
        for fn in reset:
            if fn is not None:
                fn()
        if not nested:
            self._draw_dropout_masks(sequences, states)
        fused = getattr(self.cell, "fused_cell", None)
        kind = None
        if fused is not None and not nested and host_array(sequences).dtype in (np.float32, np.float64):
            kind = fused(training)  # the fused kernels compute in float32 and float64 only
        if kind is not None:
            outputs, states = self._run_fused(kind, sequences, states, mask, training)
        else:
            outputs, states = self._run_steps(sequences, states, mask, training)
        for fn in reset:
            if fn is not None:
                fn()
        if self.stateful:
            for v, s in zip(self._state_values, states):
                v.assign(s)
        output = outputs if self.return_sequences else tree.map_structure(lambda o: o[:, -1], outputs)
        if self.return_state:
            return [output] + list(states)
        return output

    def _draw_dropout_masks(self, sequences, states):
        """Keras draws a cell's dropout masks at the start of every call, in training or not, so its seed
        generator moves on alike; the steps use them in training."""
        cell = self.cell
        if isinstance(cell, DropoutRNNCell):
            cell.get_dropout_mask(sequences[:, 0])
            cell.get_recurrent_dropout_mask(states[0])

    def _mask_in_order(self, mask):
        return array_ops.reverse(mask, [1]) if self.go_backwards else mask

    def _zero_masked(self, outputs, mask):
        if self.zero_output_for_mask and mask is not None:
            keep = math_ops.cast(self._mask_in_order(mask), outputs.dtype)
            outputs = math_ops.multiply(outputs, array_ops.expand_dims(keep, -1))
        return outputs

    def _run_fused(self, kind, x, states, mask, training):
        cell = self.cell
        if training and cell.dropout > 0:
            x = math_ops.multiply(x, array_ops.expand_dims(cell.get_dropout_mask(x[:, 0]), 1))
        z = math_ops.matmul(x, cell.kernel)
        recurrent_bias = input_bias = None
        if kind == "gru":
            if cell.bias is not None:
                z = math_ops.add(z, cell.bias[0])
                recurrent_bias = cell.bias[1]
            else:
                recurrent_bias = array_ops.zeros((3 * cell.units,), z.dtype)
        elif cell.bias is not None:
            input_bias = cell.bias  # added inside the op, where the pre-activations are formed anyway
        H, C = rnn_ops.rnn_sequence(z, cell.recurrent_kernel, states[0], kind,
                                    c0=states[1] if kind == "lstm" else None, recurrent_bias=recurrent_bias,
                                    mask=mask, go_backwards=self.go_backwards, input_bias=input_bias)
        new_states = [H[:, -1], C[:, -1]] if kind == "lstm" else [H[:, -1]]
        return self._zero_masked(H, mask), new_states

    def _run_steps(self, x, states, mask, training):
        steps = host_array(tree.flatten(x)[0]).shape[1]
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        nested = not isinstance(x, Tensor)
        prev_output = None
        outputs = []
        for t in order:
            step = tree.map_structure(lambda seq: seq[:, t], x) if nested else x[:, t]
            out, new_states = self.cell(step, list(states), training=training)
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if mask is not None:
                def keep(new, old):
                    m = array_ops.reshape(mask[:, t], [-1] + [1] * (len(new.shape) - 1))
                    return array_ops.where(m, new, old)
                if prev_output is None:
                    first = states[0]
                    prev_output = (first if isinstance(out, Tensor) and tuple(first.shape) == tuple(out.shape)
                                   else tree.map_structure(array_ops.zeros_like, out))
                new_states = [keep(n, s) for n, s in zip(new_states, states)]
                out = tree.map_structure(keep, out, prev_output)
            prev_output = out
            outputs.append(out)
            states = new_states
        if isinstance(out, Tensor):
            return self._zero_masked(array_ops.stack(outputs, axis=1), mask), states
        stacked = [self._zero_masked(array_ops.stack(leaves, axis=1), mask)
                   for leaves in zip(*[tree.flatten(o) for o in outputs])]
        return tree.pack_sequence_as(outputs[0], stacked), states

    # -- shapes, masks, config -----------------------------------------------------------
    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        sequences_shape = _flat_shapes(sequences_shape)[0]
        size = getattr(self.cell, "output_size", None)
        if size is None:
            size = _state_sizes(self.cell)[0]
        batch = sequences_shape[0]
        leading = (batch, sequences_shape[1]) if self.return_sequences else (batch,)
        per_sample = _output_shapes(size)
        output = ([leading + s for s in per_sample] if isinstance(per_sample, list) else leading + per_sample)
        if self.return_state:
            return [output] + [(batch,) + _state_shape(s) for s in _state_sizes(self.cell)]
        return output

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(_state_sizes(self.cell))
        return output_mask

    def get_config(self):
        config = super().get_config()
        config.update({"return_sequences": self.return_sequences, "return_state": self.return_state,
                       "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                       "zero_output_for_mask": self.zero_output_for_mask})
        if self.cell_class is None:
            config["cell"] = serialize_keras_object(self.cell)
        else:
            cell_config = self.cell.get_config()
            for key in ("name", "trainable", "dtype"):
                cell_config.pop(key, None)
            config.update(cell_config)
            config["activity_regularizer"] = serialize_keras_object(self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if cls.cell_class is None:
            config["cell"] = deserialize_keras_object(config["cell"], custom_objects=custom_objects)
            return super().from_config(config)
        return super().from_config(deserialize_nested_objects(config))

"""SimpleRNNCell and SimpleRNN: h = activation(x @ kernel + h_prev @ recurrent_kernel + bias)."""
from tapeflow.ops import math_ops

from .. import activations
from ..serialization_lib import keras_export
from .cell_base import BuiltinCell
from .rnn import RNN, builtin_cell


@keras_export("keras.layers.SimpleRNNCell")
class SimpleRNNCell(BuiltinCell):
    gates = 1
    seed_generator_first = True

    def call(self, sequence, states, training=False):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        x, h_rec = self._step_inputs(sequence, h_prev, training)
        out = math_ops.matmul(x, self.kernel)
        if self.bias is not None:
            out = math_ops.add(out, self.bias)
        out = math_ops.add(out, math_ops.matmul(h_rec, self.recurrent_kernel))
        if self.activation is not None:
            out = self.activation(out)
        return out, ([out] if isinstance(states, (list, tuple)) else out)

    def fused_cell(self, training):
        if training and self.recurrent_dropout > 0 or not self._standard((self.activation, activations.tanh)):
            return None
        return "simple"


_CELL_ARGS = ("units", "activation", "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
              "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
              "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "seed")


@keras_export("keras.layers.SimpleRNN")
class SimpleRNN(RNN):
    """A fully-connected RNN; the whole sequence runs as one fused op when the cell is standard."""
    cell_class = SimpleRNNCell

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        cell_kwargs = {k: v for k, v in locals().items() if k in _CELL_ARGS}
        super().__init__(builtin_cell(self.cell_class, cell_kwargs, kwargs),
                         return_sequences=return_sequences, return_state=return_state, go_backwards=go_backwards,
                         stateful=stateful, unroll=unroll, zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["seed"]  # Keras's SimpleRNN config has no seed (its cell's has)
        return config

"""LSTMCell and LSTM (Keras gate order [i, f, c, o]; ``unit_forget_bias`` starts the forget bias at one)."""
import numpy as np

from tapeflow.ops import math_ops

from .. import activations
from ..serialization_lib import keras_export
from .cell_base import BuiltinCell
from .rnn import RNN, builtin_cell


class _UnitForgetBias:
    """Bias initializer: [init(units), ones(units), init(2*units)]."""

    def __init__(self, base, units):
        self.base, self.units = base, units

    def __call__(self, shape, dtype=None):
        u = self.units
        parts = [np.asarray(self.base((u,), dtype=dtype)), np.ones((u,), dtype=dtype or "float32"),
                 np.asarray(self.base((2 * u,), dtype=dtype))]
        return np.concatenate(parts)


@keras_export("keras.layers.LSTMCell")
class LSTMCell(BuiltinCell):
    gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [units, units]

    def bias_init(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def call(self, sequence, states, training=False):
        h_prev, c_prev = states[0], states[1]
        if training and self.mask_count() > 1:     # the gates' own dropout masks
            return self._call_per_gate(sequence, h_prev, c_prev, training)
        x, h_rec = self._step_inputs(sequence, h_prev, training)
        z = math_ops.add(math_ops.matmul(x, self.kernel), math_ops.matmul(h_rec, self.recurrent_kernel))
        if self.bias is not None:
            z = math_ops.add(z, self.bias)
        u = self.units
        i, f, g, o = (z[:, k * u:(k + 1) * u] for k in range(4))
        act, rec_act = self.activation, self.recurrent_activation
        c = math_ops.add(math_ops.multiply(rec_act(f), c_prev), math_ops.multiply(rec_act(i), act(g)))
        h = math_ops.multiply(rec_act(o), act(c))
        return h, [h, c]

    def _call_per_gate(self, sequence, h_prev, c_prev, training):
        """Keras's implementation 1: each gate (x_k @ W_k + b_k) + h_k @ R_k from its own masked x_k, h_k."""
        xs, hs = self._gate_step_inputs(sequence, h_prev, training)
        pre = []
        for k in range(4):
            x_k = math_ops.matmul(xs[k], self._block(self.kernel, k))
            if self.bias is not None:
                x_k = math_ops.add(x_k, self._block(self.bias, k))
            pre.append(math_ops.add(x_k, math_ops.matmul(hs[k], self._block(self.recurrent_kernel, k))))
        i, f, g, o = pre
        act, rec_act = self.activation, self.recurrent_activation
        c = math_ops.add(math_ops.multiply(rec_act(f), c_prev), math_ops.multiply(rec_act(i), act(g)))
        h = math_ops.multiply(rec_act(o), act(c))
        return h, [h, c]

    def fused_cell(self, training):
        if training and self.mask_count() > 1 or not self._standard(
                (self.activation, activations.tanh), (self.recurrent_activation, activations.sigmoid)):
            return None
        return "lstm"

    def get_config(self):
        config = super().get_config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["unit_forget_bias"] = self.unit_forget_bias
        return config


_CELL_ARGS = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
              "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer",
              "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
              "bias_constraint", "dropout", "recurrent_dropout", "seed")


@keras_export("keras.layers.LSTM")
class LSTM(RNN):
    """Long Short-Term Memory; the whole sequence runs as one fused op when the cell is standard."""
    cell_class = LSTMCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, use_cudnn="auto", zero_output_for_mask=False,
                 **kwargs):
        cell_kwargs = {k: v for k, v in locals().items() if k in _CELL_ARGS}
        super().__init__(builtin_cell(self.cell_class, cell_kwargs, kwargs),
                         return_sequences=return_sequences, return_state=return_state, go_backwards=go_backwards,
                         stateful=stateful, unroll=unroll, zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **kwargs)



"""GRUCell and GRU (Keras gate order [z, r, h]).

reset_after=True (the default): hh = tanh(x W_h + b_h + r * (h R_h + rb_h)), bias of shape (2, 3*units)
holding the input and the recurrent bias; reset_after=False: hh = tanh(x W_h + (r * h) R_h + b_h).
Then h = z * h_prev + (1 - z) * hh.
"""
from tapeflow.ops import math_ops

from .. import activations
from ..serialization_lib import keras_export
from .cell_base import BuiltinCell
from .rnn import RNN, builtin_cell


@keras_export("keras.layers.GRUCell")
class GRUCell(BuiltinCell):
    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def input_bias(self):
        """The bias added to x @ kernel (the first row when reset_after), or None."""
        if self.bias is None:
            return None
        return self.bias[0] if self.reset_after else self.bias

    def call(self, sequence, states, training=False):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        if training and self.mask_count() > 1:     # the gates' own dropout masks
            h = self._call_per_gate(sequence, h_prev, training)
            return h, ([h] if isinstance(states, (list, tuple)) else h)
        x, h_rec = self._step_inputs(sequence, h_prev, training)
        u = self.units
        xz = math_ops.matmul(x, self.kernel)
        if self.bias is not None:
            xz = math_ops.add(xz, self.input_bias())
        x_z, x_r, x_h = xz[:, :u], xz[:, u:2 * u], xz[:, 2 * u:]
        rec_act = self.recurrent_activation
        if self.reset_after:
            rec = math_ops.matmul(h_rec, self.recurrent_kernel)
            if self.bias is not None:
                rec = math_ops.add(rec, self.bias[1])
            z = rec_act(math_ops.add(x_z, rec[:, :u]))
            r = rec_act(math_ops.add(x_r, rec[:, u:2 * u]))
            hh = self.activation(math_ops.add(x_h, math_ops.multiply(r, rec[:, 2 * u:])))
        else:
            rec = math_ops.matmul(h_rec, self.recurrent_kernel[:, :2 * u])
            z = rec_act(math_ops.add(x_z, rec[:, :u]))
            r = rec_act(math_ops.add(x_r, rec[:, u:]))
            hh = self.activation(math_ops.add(
                x_h, math_ops.matmul(math_ops.multiply(r, h_rec), self.recurrent_kernel[:, 2 * u:])))
        h = math_ops.add(math_ops.multiply(z, h_prev), math_ops.multiply(math_ops.subtract(1.0, z), hh))
        return h, ([h] if isinstance(states, (list, tuple)) else h)

    def _call_per_gate(self, sequence, h_prev, training):
        """Keras's implementation 1: the z, r and h gates each from their own masked input and state."""
        xs, hs = self._gate_step_inputs(sequence, h_prev, training)
        M, W, R = math_ops, self.kernel, self.recurrent_kernel
        x_z, x_r, x_h = (M.matmul(xs[k], self._block(W, k)) for k in range(3))
        ib = self.input_bias()
        if ib is not None:
            x_z, x_r, x_h = (M.add(x, self._block(ib, k)) for k, x in enumerate((x_z, x_r, x_h)))
        rec_z, rec_r = M.matmul(hs[0], self._block(R, 0)), M.matmul(hs[1], self._block(R, 1))
        rb = self.bias[1] if self.reset_after and self.bias is not None else None
        if rb is not None:
            rec_z, rec_r = M.add(rec_z, self._block(rb, 0)), M.add(rec_r, self._block(rb, 1))
        z = self.recurrent_activation(M.add(x_z, rec_z))
        r = self.recurrent_activation(M.add(x_r, rec_r))
        if self.reset_after:
            rec_h = M.matmul(hs[2], self._block(R, 2))
            if rb is not None:
                rec_h = M.add(rec_h, self._block(rb, 2))
            rec_h = M.multiply(r, rec_h)
        else:
            rec_h = M.matmul(M.multiply(r, hs[2]), self._block(R, 2))
        hh = self.activation(M.add(x_h, rec_h))
        return M.add(M.multiply(z, h_prev), M.multiply(M.subtract(1.0, z), hh))

    def fused_cell(self, training):
        if training and self.mask_count() > 1 or not self._standard(
                (self.activation, activations.tanh), (self.recurrent_activation, activations.sigmoid)):
            return None
        return "gru" if self.reset_after else "gru_v1"

    def get_config(self):
        config = super().get_config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["reset_after"] = self.reset_after
        return config


_CELL_ARGS = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
              "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
              "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
              "recurrent_dropout", "reset_after", "seed")


@keras_export("keras.layers.GRU")
class GRU(RNN):
    """Gated Recurrent Unit; the whole sequence runs as one fused op when the cell is standard."""
    cell_class = GRUCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True, use_cudnn="auto",
                 zero_output_for_mask=False, **kwargs):
        cell_kwargs = {k: v for k, v in locals().items() if k in _CELL_ARGS}
        super().__init__(builtin_cell(self.cell_class, cell_kwargs, kwargs),
                         return_sequences=return_sequences, return_state=return_state, go_backwards=go_backwards,
                         stateful=stateful, unroll=unroll, zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **kwargs)

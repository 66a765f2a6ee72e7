"""ConvLSTMCell and ConvLSTM, the base of ConvLSTM1D/2D/3D: an LSTM whose products are convolutions.

Keras 3's cell: with the kernel (kernel_size + (channels, 4*filters)) and the
recurrent kernel (kernel_size + (filters, 4*filters)) split in Keras's gate order
[i, f, c, o] along their last axis,

    z = conv(x_t, kernel; strides, padding, dilation_rate) + bias + conv(h, recurrent_kernel; stride 1, "same")
    c' = rec_act(z_f) * c + rec_act(z_i) * act(z_c),    h' = rec_act(z_o) * act(c')

The states h and c have the spatial shape of the input convolution's output and
``filters`` channels. The layer runs the input convolution of all time steps as
one convolution over (batch * steps) images, then the recurrence step by step;
each step is built from tapeflow ops, so gradients of any order follow.
"""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, conv_ops, math_ops

from .. import activations
from ..argument_validation import (conv_output_length, standardize_data_format, standardize_padding,
                                   standardize_tuple, tf_data_format)
from ..convolutional.base_conv import add_bias, check_filters, check_strides_and_dilation
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import serialize_keras_object
from .cell_base import set_weight_arguments
from .dropout_rnn_cell import DropoutRNNCell
from .lstm import _UnitForgetBias
from .rnn import RNN

_CELL_ARGS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation",
              "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer",
              "bias_initializer", "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer",
              "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
              "recurrent_dropout", "seed")


class ConvLSTMCell(DropoutRNNCell, Layer):
    """One step of a ConvLSTM over ``rank`` spatial axes: ``call(x_t, [h, c])`` returns ``(h', [h', c'])``."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_filters(filters)
        self.rank = rank
        self.filters = filters
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        check_strides_and_dilation(self.strides, self.dilation_rate)
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.unit_forget_bias = bool(unit_forget_bias)
        set_weight_arguments(self, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                             recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
                             bias_constraint, dropout, recurrent_dropout, seed, seed_generator_first=True)
        self.state_size = [filters, filters]
        self.output_size = filters
        self.__dict__["_dropout_mask"] = None
        self.__dict__["_recurrent_dropout_mask"] = None
        self.bias = None

    @property
    def channel_axis(self):
        return -1 if self.data_format == "channels_last" else 1

    def build(self, step_shape):
        if len(step_shape) != self.rank + 2:
            raise ValueError(f"ConvLSTMCell over {self.rank} spatial axes expects steps of rank {self.rank + 2} "
                             f"(batch, spatial..., channels); received shape {tuple(step_shape)}")
        channels = step_shape[self.channel_axis]
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to a ConvLSTM should be defined. Received "
                             f"step shape {tuple(step_shape)}")
        width = 4 * self.filters
        self.kernel = self.add_weight(shape=self.kernel_size + (int(channels), width), name="kernel",
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=self.kernel_size + (self.filters, width),
                                                name="recurrent_kernel", initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            init = _UnitForgetBias(self.bias_initializer, self.filters) if self.unit_forget_bias \
                else self.bias_initializer
            self.bias = self.add_weight(shape=(width,), name="bias", initializer=init,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    # -- the math -----------------------------------------------------------------------
    def state_spatial_shape(self, spatial):
        """The states' spatial lengths for inputs of spatial lengths ``spatial`` (None where unknown)."""
        return tuple(conv_output_length(n, k, self.padding, s, d) for n, k, s, d in
                     zip(spatial, self.kernel_size, self.strides, self.dilation_rate))

    def state_shape(self, batch, spatial):
        lengths = self.state_spatial_shape(spatial)
        if self.data_format == "channels_last":
            return (batch,) + lengths + (self.filters,)
        return (batch, self.filters) + lengths

    def mask_count(self):
        return 4    # Keras's ConvLSTM cell masks each gate's input and state with a mask of its own

    def input_projection(self, x):
        """``conv(x, kernel) + bias`` for a batch of input images (dropout already applied)."""
        return self._input_conv(x, self.kernel, self.bias)

    def gate_projections(self, xs):
        """The input projection with gate k computed from ``xs[k]`` (its own dropout mask applied)."""
        return array_ops.concat([self._input_conv(x, self._gate(self.kernel, k, -1),
                                                  None if self.bias is None else self._gate(self.bias, k, -1))
                                 for k, x in enumerate(xs)], self.channel_axis)

    def _input_conv(self, x, kernel, bias):
        z = conv_ops.convolution(x, kernel, strides=self.strides, padding=self.padding.upper(),
                                 data_format=tf_data_format(self.data_format, self.rank),
                                 dilations=self.dilation_rate)
        return z if bias is None else add_bias(z, bias, self.data_format, self.rank)

    def _recurrent_conv(self, h, kernel):
        return conv_ops.convolution(h, kernel, strides=(1,) * self.rank, padding="SAME",
                                    data_format=tf_data_format(self.data_format, self.rank))

    def recurrent_step(self, z, states, training=False):
        """The step from the input projection ``z`` and the states [h, c]: ``(h', [h', c'])``."""
        h, c = states[0], states[1]
        if training and self.recurrent_dropout > 0:
            masks = self.get_recurrent_dropout_mask(h)
            rec = array_ops.concat([self._recurrent_conv(math_ops.multiply(h, m), self._gate(self.recurrent_kernel,
                                                                                              k, -1))
                                    for k, m in enumerate(masks)], self.channel_axis)
        else:
            rec = self._recurrent_conv(h, self.recurrent_kernel)
        z = math_ops.add(z, rec)
        i, f, g, o = (self._gate(z, k, self.channel_axis) for k in range(4))
        act, rec_act = self.activation, self.recurrent_activation
        c = math_ops.add(math_ops.multiply(rec_act(f), c), math_ops.multiply(rec_act(i), act(g)))
        h = math_ops.multiply(rec_act(o), act(c))
        return h, [h, c]

    def _gate(self, z, k, axis):
        """Gate k's block of ``filters`` entries along ``axis`` (-1 or the channels-first axis 1)."""
        block = slice(k * self.filters, (k + 1) * self.filters)
        return z[..., block] if axis == -1 else z[:, block]

    def call(self, inputs, states, training=False):
        if training and self.dropout > 0:
            z = self.gate_projections([math_ops.multiply(inputs, m) for m in self.get_dropout_mask(inputs)])
        else:
            z = self.input_projection(inputs)
        return self.recurrent_step(z, states, training)

    def get_config(self):
        s = serialize_keras_object
        config = super().get_config()
        config.update({
            "rank": self.rank, "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation), "use_bias": self.use_bias,
            "kernel_initializer": s(self.kernel_initializer), "recurrent_initializer": s(self.recurrent_initializer),
            "bias_initializer": s(self.bias_initializer), "unit_forget_bias": self.unit_forget_bias,
            "kernel_regularizer": s(self.kernel_regularizer), "recurrent_regularizer": s(self.recurrent_regularizer),
            "bias_regularizer": s(self.bias_regularizer), "kernel_constraint": s(self.kernel_constraint),
            "recurrent_constraint": s(self.recurrent_constraint), "bias_constraint": s(self.bias_constraint),
            "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout, "seed": self.seed,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))


class ConvLSTM(RNN):
    """The ConvLSTM layers' shared body; ConvLSTM1D/2D/3D fix ``rank``. Inputs are (batch, steps, spatial...,
    channels) (channels_last) or (batch, steps, channels, spatial...) (channels_first)."""
    cell_class = ConvLSTMCell

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        cell_kwargs = {k: v for k, v in locals().items() if k in _CELL_ARGS}
        cell = ConvLSTMCell(rank, name="conv_lstm_cell", dtype=kwargs.get("dtype"),
                            trainable=kwargs.get("trainable", True), **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, activity_regularizer=activity_regularizer,
                         **kwargs)
        self.rank = rank
        self.input_spec = InputSpec(ndim=rank + 3)

    def _spatial(self, sequences_shape):
        step = tuple(sequences_shape[2:])
        return step[:-1] if self.cell.data_format == "channels_last" else step[1:]

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) != self.rank + 3:
            raise ValueError(f"Layer '{self.name}' expects inputs of rank {self.rank + 3} (batch, steps, "
                             f"{self.rank} spatial axes and channels); received input shape {sequences_shape}")
        if not self.cell.built:
            self.cell.build((sequences_shape[0],) + sequences_shape[2:])
        if self.stateful:
            shape = self.cell.state_shape(sequences_shape[0], self._spatial(sequences_shape))
            if any(d is None for d in shape):
                raise ValueError(f"Layer '{self.name}' is stateful: it needs a fixed batch size and spatial "
                                 f"shape; received input shape {sequences_shape}")
            self.__dict__["_state_values"] = [
                Variable(np.zeros(shape, self.compute_dtype), trainable=False, name="rnn_state") for _ in range(2)]
        self.built = True

    def get_initial_state(self, batch_size):
        raise NotImplementedError("A ConvLSTM's initial state depends on the input's spatial shape: "
                                  "it is made in call().")

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if initial_state is None and not self.stateful:
            rows = host_array(sequences).shape  # this call's (a traced step is specialised to them)
            shape = self.cell.state_shape(rows[0], self._spatial(rows))
            initial_state = [array_ops.zeros(shape, self.compute_dtype) for _ in range(2)]
        return super().call(sequences, initial_state=initial_state, mask=mask, training=training)

    def _step_mask(self, mask_t, like):
        """A (batch,) step mask shaped to broadcast over a state ``like`` (batch, ...)."""
        return array_ops.reshape(mask_t, [-1] + [1] * (len(like.shape) - 1))

    def _run_steps(self, x, states, mask, training):
        cell = self.cell
        batch, steps = host_array(x).shape[:2]
        if mask is not None and len(mask.shape) != 2:
            raise ValueError(f"Layer '{self.name}' takes a mask of shape (batch, steps); received a mask of shape "
                             f"{tuple(mask.shape)}")
        # the input convolution of every step at once, over (batch * steps) images
        images = [-1] + list(x.shape[2:])
        if training and cell.dropout > 0:     # each gate's own mask, the same at every step
            z = cell.gate_projections([array_ops.reshape(math_ops.multiply(x, array_ops.expand_dims(m, 1)), images)
                                       for m in cell.get_dropout_mask(x[:, 0])])
        else:
            z = cell.input_projection(array_ops.reshape(x, images))
        z = array_ops.reshape(z, [batch, steps] + list(z.shape[1:]))
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        prev_output, outputs = None, []
        for t in order:
            out, new_states = cell.recurrent_step(z[:, t], states, training)
            if mask is not None:
                keep = self._step_mask(mask[:, t], out)
                prev_output = states[0] if prev_output is None else prev_output
                new_states = [array_ops.where(keep, n, s) for n, s in zip(new_states, states)]
                out = array_ops.where(keep, out, prev_output)
            prev_output = out
            outputs.append(out)
            states = new_states
        return self._zero_masked(array_ops.stack(outputs, axis=1), mask), states

    def _zero_masked(self, outputs, mask):
        if self.zero_output_for_mask and mask is not None:
            keep = math_ops.cast(self._mask_in_order(mask), outputs.dtype)
            outputs = math_ops.multiply(outputs, array_ops.reshape(keep, list(keep.shape) +
                                                                   [1] * (len(outputs.shape) - 2)))
        return outputs

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        state = self.cell.state_shape(sequences_shape[0], self._spatial(sequences_shape))
        output = state[:1] + (sequences_shape[1],) + state[1:] if self.return_sequences else state
        if self.return_state:
            return [output, state, state]
        return output

    def get_config(self):
        config = super().get_config()
        config.pop("rank", None)
        return config

"""What the built-in cells (SimpleRNNCell, LSTMCell, GRUCell) share: arguments, weights, config."""
from tapeflow.keras_ops import random as keras_random

from .. import activations, constraints, initializers, regularizers
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import serialize_keras_object
from .dropout_rnn_cell import DropoutRNNCell, check_rate


def set_weight_arguments(cell, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
                         bias_constraint, dropout, recurrent_dropout, seed, seed_generator_first=False):
    """The arguments every recurrent cell (dense or convolutional) takes for its kernels, bias and dropout.

    The cell's ``seed_generator`` (its dropout masks') is made before the initializers or after them, as
    Keras's cell of that kind makes it: an unseeded one takes Python's next random number, as an unseeded
    initializer does, so the order decides which numbers each gets."""
    if seed_generator_first:
        cell.seed_generator = keras_random.SeedGenerator(seed)
    cell.kernel_initializer = initializers.get(kernel_initializer)
    cell.recurrent_initializer = initializers.get(recurrent_initializer)
    cell.bias_initializer = initializers.get(bias_initializer)
    cell.kernel_regularizer = regularizers.get(kernel_regularizer)
    cell.recurrent_regularizer = regularizers.get(recurrent_regularizer)
    cell.bias_regularizer = regularizers.get(bias_regularizer)
    cell.kernel_constraint = constraints.get(kernel_constraint)
    cell.recurrent_constraint = constraints.get(recurrent_constraint)
    cell.bias_constraint = constraints.get(bias_constraint)
    cell.dropout = check_rate("dropout", dropout)
    cell.recurrent_dropout = check_rate("recurrent_dropout", recurrent_dropout)
    cell.seed = seed
    if not seed_generator_first:
        cell.seed_generator = keras_random.SeedGenerator(seed)


class BuiltinCell(DropoutRNNCell, Layer):
    """``gates`` blocks of ``units`` columns in kernel (input_dim, gates*units) and recurrent_kernel."""
    gates = 1
    seed_generator_first = False     # Keras's SimpleRNNCell makes it before its initializers, LSTM/GRU after

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, "
                             f"got {units}.")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        set_weight_arguments(self, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                             recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
                             bias_constraint, dropout, recurrent_dropout, seed, self.seed_generator_first)
        self.state_size = units
        self.output_size = units
        self.__dict__["_dropout_mask"] = None
        self.__dict__["_recurrent_dropout_mask"] = None
        self.bias = None

    def build(self, input_shape):
        width = self.gates * self.units
        self.kernel = self.add_weight(shape=(input_shape[-1], width), name="kernel",
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(self.units, width), name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight(shape=self.bias_shape(), name="bias", initializer=self.bias_init(),
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def bias_shape(self):
        return (self.gates * self.units,)

    def bias_init(self):
        return self.bias_initializer

    def fused_cell(self, training):
        """The RNNSequence cell computing this cell exactly, or None when only the step path applies."""
        return None

    def get_config(self):
        s = serialize_keras_object
        config = super().get_config()
        config.update({
            "units": self.units, "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": s(self.kernel_initializer), "recurrent_initializer": s(self.recurrent_initializer),
            "bias_initializer": s(self.bias_initializer), "kernel_regularizer": s(self.kernel_regularizer),
            "recurrent_regularizer": s(self.recurrent_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "kernel_constraint": s(self.kernel_constraint), "recurrent_constraint": s(self.recurrent_constraint),
            "bias_constraint": s(self.bias_constraint), "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout, "seed": self.seed,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

    def get_initial_state(self, batch_size=None):
        from tapeflow.ops import array_ops
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        return [array_ops.zeros((batch_size, size), self.compute_dtype) for size in sizes]

    def mask_count(self):
        return self.gates if self.recurrent_dropout > 0 else 1

    def _gate_step_inputs(self, inputs, h_prev, training):
        """Per gate (Keras's "implementation 1", used with recurrent dropout): the cell's input and previous
        state after that gate's dropout mask (training only)."""
        from tapeflow.ops import math_ops
        xs, hs = [inputs] * self.gates, [h_prev] * self.gates
        if training and self.dropout > 0:
            xs = [math_ops.multiply(inputs, m) for m in self.get_dropout_mask(inputs)]
        if training and self.recurrent_dropout > 0:
            hs = [math_ops.multiply(h_prev, m) for m in self.get_recurrent_dropout_mask(h_prev)]
        return xs, hs

    def _block(self, weight, k):
        return weight[..., k * self.units:(k + 1) * self.units]

    def _step_inputs(self, inputs, h_prev, training):
        """The cell's input and previous state after dropout (training only)."""
        from tapeflow.ops import math_ops
        if training and self.dropout > 0:
            inputs = math_ops.multiply(inputs, self.get_dropout_mask(inputs))
        if training and self.recurrent_dropout > 0:
            h_prev = math_ops.multiply(h_prev, self.get_recurrent_dropout_mask(h_prev))
        return inputs, h_prev

    def _standard(self, *pairs):
        """True when every (function, reference) pair is the very activation the fused kernels compute."""
        return all(fn is ref for fn, ref in pairs)

"""DropoutRNNCell: the dropout masks of a recurrent cell, drawn once per sequence and reused at every step."""
from tapeflow.framework.tensor import host_array
from tapeflow.ops import random_ops


class DropoutRNNCell:
    """Mixin of the built-in cells: ``dropout`` applies to the inputs, ``recurrent_dropout`` to the state
    entering the recurrent product, with the same mask at every step of a sequence (Keras's contract).
    The RNN layer calls ``reset_dropout_mask`` / ``reset_recurrent_dropout_mask`` after each sequence."""

    def get_dropout_mask(self, step_inputs):
        if self._dropout_mask is None and self.dropout > 0:
            self.__dict__["_dropout_mask"] = random_ops.dropout_mask(
                host_array(step_inputs).shape, self.dropout, step_inputs.dtype, self.seed)
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_state):
        if self._recurrent_dropout_mask is None and self.recurrent_dropout > 0:
            self.__dict__["_recurrent_dropout_mask"] = random_ops.dropout_mask(
                host_array(step_state).shape, self.recurrent_dropout, step_state.dtype, self.seed)
        return self._recurrent_dropout_mask

    def reset_dropout_mask(self):
        self.__dict__["_dropout_mask"] = None

    def reset_recurrent_dropout_mask(self):
        self.__dict__["_recurrent_dropout_mask"] = None


def check_rate(name, value):
    if not 0 <= value <= 1:
        raise ValueError(f"Received an invalid value for argument `{name}`, expected a float between 0 and 1. "
                         f"Received: {name}={value}")
    return min(1.0, max(0.0, float(value)))

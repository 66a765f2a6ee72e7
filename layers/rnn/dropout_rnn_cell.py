"""DropoutRNNCell: the dropout masks of a recurrent cell, drawn once per sequence and reused at every step."""
from tapeflow.keras_ops import random as keras_random
from tapeflow.ops import array_ops


class DropoutRNNCell:
    """Mixin of the built-in cells: ``dropout`` applies to the inputs, ``recurrent_dropout`` to the state
    entering the recurrent product, with the same mask at every step of a sequence (Keras's contract).
    The RNN layer calls ``reset_dropout_mask`` / ``reset_recurrent_dropout_mask`` after each sequence. A mask
    is Keras's: dropout applied to ones, drawn from the cell's ``seed_generator``."""

    def mask_count(self):
        """How many masks of each kind a step uses: one, or one per gate (a list) where Keras's cell computes
        its gates apart (LSTM and GRU with recurrent dropout: Keras's "implementation 1")."""
        return 1

    def get_dropout_mask(self, step_inputs):
        if self._dropout_mask is None and self.dropout > 0:
            self.__dict__["_dropout_mask"] = self._draw_masks(step_inputs, self.dropout)
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_state):
        if self._recurrent_dropout_mask is None and self.recurrent_dropout > 0:
            self.__dict__["_recurrent_dropout_mask"] = self._draw_masks(step_state, self.recurrent_dropout)
        return self._recurrent_dropout_mask

    def _draw_masks(self, like, rate):
        masks = [keras_random.dropout(array_ops.ones_like(like), rate, seed=self.seed_generator)
                 for _ in range(self.mask_count())]
        return masks[0] if len(masks) == 1 else masks

    def reset_dropout_mask(self):
        self.__dict__["_dropout_mask"] = None

    def reset_recurrent_dropout_mask(self):
        self.__dict__["_recurrent_dropout_mask"] = None


def check_rate(name, value):
    if not 0 <= value <= 1:
        raise ValueError(f"Received an invalid value for argument `{name}`, expected a float between 0 and 1. "
                         f"Received: {name}={value}")
    return min(1.0, max(0.0, float(value)))

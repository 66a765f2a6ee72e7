"""ConvLSTM2D: a ConvLSTM over sequences of 2-D inputs (see conv_lstm.py)."""
from ..serialization_lib import keras_export
from .conv_lstm import ConvLSTM


@keras_export("keras.layers.ConvLSTM2D")
class ConvLSTM2D(ConvLSTM):
    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(2, filters, kernel_size, **kwargs)

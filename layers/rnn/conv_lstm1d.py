"""ConvLSTM1D: a ConvLSTM over sequences of 1-D inputs (see conv_lstm.py)."""
from ..serialization_lib import keras_export
from .conv_lstm import ConvLSTM


@keras_export("keras.layers.ConvLSTM1D")
class ConvLSTM1D(ConvLSTM):
    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(1, filters, kernel_size, **kwargs)

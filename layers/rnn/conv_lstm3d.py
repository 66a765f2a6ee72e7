"""ConvLSTM3D: a ConvLSTM over sequences of 3-D inputs (see conv_lstm.py)."""
from ..serialization_lib import keras_export
from .conv_lstm import ConvLSTM


@keras_export("keras.layers.ConvLSTM3D")
class ConvLSTM3D(ConvLSTM):
    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(3, filters, kernel_size, **kwargs)

"""Conv1D: 1-D convolution (cross-correlation, as Keras) over the steps of a sequence.

"causal" padding is explicit padding of ``(kernel_size - 1) * dilation_rate`` steps on the left
(``BaseConv._tf_padding``).
"""
from ..serialization_lib import keras_export
from .base_conv import BaseConv


@keras_export("keras.layers.Conv1D")
class Conv1D(BaseConv):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, groups=groups, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, **kwargs)

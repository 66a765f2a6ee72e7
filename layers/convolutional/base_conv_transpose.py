"""BaseConvTranspose: the transposed convolution behind Conv1DTranspose and Conv2DTranspose.

The kernel is shaped ``kernel_size + (filters, input_channels)`` (a forward
convolution's kernel from the output back to the input), and the output length
per axis follows Keras's formula (``deconv_output_length``); the op is
``tf.nn.conv_transpose`` with that output shape.
"""
from tapeflow.framework.tensor import host_array
from tapeflow.ops import conv_ops

from .. import activations, constraints, initializers, regularizers
from ..argument_validation import deconv_output_length, standardize_tuple, tf_data_format
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import serialize_keras_object
from .base_conv import (bias_and_activation, channel_axis, check_filters, input_channels, set_window, spatial_dims,
                        spatial_output_shape)


class BaseConvTranspose(Layer):
    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_filters(filters)
        self.rank = rank
        self.filters = filters
        set_window(self, rank, kernel_size, strides, dilation_rate, padding, data_format)
        if output_padding is None:
            self.output_padding = None
        else:
            self.output_padding = standardize_tuple(output_padding, rank, "output_padding", allow_zero=True)
            for axis, (pad, stride) in enumerate(zip(self.output_padding, self.strides)):
                if pad >= stride:
                    raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. "
                                     f"At dimension {axis}, `output_padding` is {pad} but `strides` is {stride}. "
                                     f"Received: output_padding={self.output_padding}, strides={self.strides}")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=rank + 2)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        channels = input_channels(self, input_shape)
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (self.filters, channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channel_axis(self.data_format): channels})

    def _output_lengths(self, input_shape):
        pads = self.output_padding or (None,) * self.rank
        return [deconv_output_length(n, k, self.padding, p, s, d) for n, k, p, s, d in zip(
            spatial_dims(input_shape, self.data_format), self.kernel_size, pads, self.strides, self.dilation_rate)]

    def call(self, inputs):
        shape = tuple(host_array(inputs).shape)
        output_shape = spatial_output_shape(shape, self.data_format, self.filters, self._output_lengths(shape))
        y = conv_ops.conv_transpose(inputs, self.kernel, output_shape, strides=self.strides,
                                    padding=self.padding.upper(),
                                    data_format=tf_data_format(self.data_format, self.rank),
                                    dilations=self.dilation_rate)
        return bias_and_activation(self, y, self.rank)

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(input_shape, self.data_format, self.filters, self._output_lengths(input_shape))

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "output_padding": self.output_padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate, "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": s(self.kernel_initializer), "bias_initializer": s(self.bias_initializer),
            "kernel_regularizer": s(self.kernel_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "kernel_constraint": s(self.kernel_constraint), "bias_constraint": s(self.bias_constraint),
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

"""DepthwiseConv2D: each input channel convolved with its own ``depth_multiplier`` filters.

The kernel (Keras names it "kernel") is shaped (kh, kw, input_channels,
depth_multiplier); output channel ``c * depth_multiplier + m`` comes from input
channel ``c`` (``tf.nn.depthwise_conv2d``).
"""
from tapeflow.ops import conv_ops

from .. import activations, constraints, initializers, regularizers
from ..argument_validation import tf_data_format
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object
from .base_conv import (bias_and_activation, channel_axis, input_channels, set_window, spatial_output_shape,
                        window_lengths)


def check_depth_multiplier(depth_multiplier):
    if not isinstance(depth_multiplier, int) or isinstance(depth_multiplier, bool) or depth_multiplier <= 0:
        raise ValueError(f"Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                         f"Received depth_multiplier={depth_multiplier}.")


@keras_export("keras.layers.DepthwiseConv2D")
class DepthwiseConv2D(Layer):
    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_depth_multiplier(depth_multiplier)
        self.depth_multiplier = depth_multiplier
        set_window(self, 2, kernel_size, strides, dilation_rate, padding, data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=4)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        channels = input_channels(self, input_shape)
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
                                      initializer=self.depthwise_initializer,
                                      regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(channels * self.depth_multiplier,),
                                        initializer=self.bias_initializer, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=4, axes={channel_axis(self.data_format): channels})

    def call(self, inputs):
        y = conv_ops.depthwise_conv2d(inputs, self.kernel, self.strides, self.padding.upper(),
                                      data_format=tf_data_format(self.data_format, 2), dilations=self.dilation_rate)
        return bias_and_activation(self, y, 2)

    def compute_output_shape(self, input_shape):
        channels = input_shape[channel_axis(self.data_format)]
        out_channels = None if channels is None else channels * self.depth_multiplier
        return spatial_output_shape(input_shape, self.data_format, out_channels, window_lengths(self, input_shape))

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "depth_multiplier": self.depth_multiplier, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "depthwise_initializer": s(self.depthwise_initializer), "bias_initializer": s(self.bias_initializer),
            "depthwise_regularizer": s(self.depthwise_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "depthwise_constraint": s(self.depthwise_constraint), "bias_constraint": s(self.bias_constraint),
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

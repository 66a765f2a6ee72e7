"""BaseSeparableConv: a depthwise convolution then a 1x1 ("pointwise") one, for SeparableConv1D/2D.

Weights, in Keras's order: ``depthwise_kernel`` (kernel_size + (input_channels,
depth_multiplier)), ``pointwise_kernel`` ((1,) * rank + (input_channels *
depth_multiplier, filters)), ``bias`` (filters,). The 1-D form runs the 2-D op
on inputs with a height of 1.
"""
from tapeflow.ops import array_ops, conv_ops

from .. import activations, constraints, initializers, regularizers
from ..argument_validation import tf_data_format
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import serialize_keras_object
from .base_conv import (bias_and_activation, channel_axis, check_filters, input_channels, set_window,
                        spatial_output_shape, window_lengths)
from .depthwise_conv2d import check_depth_multiplier


class BaseSeparableConv(Layer):
    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_filters(filters)
        check_depth_multiplier(depth_multiplier)
        self.rank = rank
        self.filters = filters
        self.depth_multiplier = depth_multiplier
        set_window(self, rank, kernel_size, strides, dilation_rate, padding, data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=rank + 2)
        self.depthwise_kernel = None
        self.pointwise_kernel = None
        self.bias = None

    def build(self, input_shape):
        channels = input_channels(self, input_shape)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel", shape=(1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channel_axis(self.data_format): channels})

    def call(self, inputs):
        depthwise, pointwise = self.depthwise_kernel, self.pointwise_kernel
        strides, dilations = self.strides, self.dilation_rate
        x = inputs
        if self.rank == 1:  # as 2-D with a height of 1
            height_axis = 1 if self.data_format == "channels_last" else 2
            x = array_ops.expand_dims(x, height_axis)
            depthwise = array_ops.expand_dims(depthwise, 0)
            pointwise = array_ops.expand_dims(pointwise, 0)
            strides, dilations = (1,) + strides, (1,) + dilations
        y = conv_ops.separable_conv2d(x, depthwise, pointwise, strides, self.padding.upper(),
                                      data_format=tf_data_format(self.data_format, 2), dilations=dilations)
        if self.rank == 1:
            y = array_ops.squeeze(y, [height_axis])
        return bias_and_activation(self, y, self.rank)

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(input_shape, self.data_format, self.filters, window_lengths(self, input_shape))

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "depth_multiplier": self.depth_multiplier, "filters": self.filters, "kernel_size": self.kernel_size,
            "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate, "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "depthwise_initializer": s(self.depthwise_initializer),
            "pointwise_initializer": s(self.pointwise_initializer), "bias_initializer": s(self.bias_initializer),
            "depthwise_regularizer": s(self.depthwise_regularizer),
            "pointwise_regularizer": s(self.pointwise_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "depthwise_constraint": s(self.depthwise_constraint),
            "pointwise_constraint": s(self.pointwise_constraint), "bias_constraint": s(self.bias_constraint),
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

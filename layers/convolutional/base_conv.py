"""BaseConv: the N-D convolution layer behind Conv2D and Conv3D (Keras 3's arguments and config).

``call`` is ``activation(conv(inputs, kernel) + bias)`` with the kernel shaped
``kernel_size + (input_channels // groups, filters)``; the convolution is
``tf.nn.convolution`` (cross-correlation), whose gradients are convolutions again.
"""
from tapeflow.ops import conv_ops, nn_ops

from .. import activations, constraints, initializers, regularizers
from ..argument_validation import (conv_output_length, standardize_data_format, standardize_padding,
                                   standardize_tuple, tf_data_format)
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import serialize_keras_object


def channel_axis(data_format):
    return -1 if data_format == "channels_last" else 1


def input_channels(layer, input_shape):
    """The channel count of ``input_shape``; it must be known to build ``layer``."""
    channels = input_shape[channel_axis(layer.data_format)]
    if channels is None:
        raise ValueError(f"The channel dimension of the inputs to {type(layer).__name__} should be defined. "
                         f"Received input shape {tuple(input_shape)}")
    return int(channels)


def spatial_output_shape(input_shape, data_format, filters, lengths):
    """``input_shape`` with its spatial axes replaced by ``lengths`` and its channels by ``filters``."""
    batch = input_shape[0]
    if data_format == "channels_last":
        return (batch,) + tuple(lengths) + (filters,)
    return (batch, filters) + tuple(lengths)


def spatial_dims(input_shape, data_format):
    return tuple(input_shape[1:-1]) if data_format == "channels_last" else tuple(input_shape[2:])


def add_bias(y, bias, data_format, rank):
    return nn_ops.bias_add(y, bias, tf_data_format(data_format, rank))


def check_strides_and_dilation(strides, dilation_rate):
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                         f"strides={strides} and dilation_rate={dilation_rate}")


def check_filters(filters):
    if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
        raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                         f"Received filters={filters}.")


def set_window(layer, rank, kernel_size, strides, dilation_rate, padding, data_format, allow_causal=False):
    """The sliding-window arguments every convolution layer shares, checked and standardised."""
    layer.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
    layer.strides = standardize_tuple(strides, rank, "strides")
    layer.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
    check_strides_and_dilation(layer.strides, layer.dilation_rate)
    layer.padding = standardize_padding(padding, allow_causal=allow_causal)
    layer.data_format = standardize_data_format(data_format)


def window_lengths(layer, input_shape):
    """The output's spatial lengths for ``input_shape`` (a convolution, not a transposed one)."""
    return [conv_output_length(n, k, layer.padding, s, d) for n, k, s, d in zip(
        spatial_dims(input_shape, layer.data_format), layer.kernel_size, layer.strides, layer.dilation_rate)]


def bias_and_activation(layer, y, rank):
    """The end of every convolution layer's call: ``activation(y + bias)``."""
    if layer.bias is not None and layer.activation is activations.relu and layer.data_format == "channels_last":
        return nn_ops.bias_relu(y, layer.bias)  # one fused pass, forward and backward
    if layer.bias is not None:
        y = add_bias(y, layer.bias, layer.data_format, rank)
    if layer.activation is not activations.linear:
        y = layer.activation(y)
    return y


class BaseConv(Layer):
    """A convolution over ``rank`` spatial axes; subclasses fix ``rank``."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_filters(filters)
        if not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"The `groups` argument must be a positive integer. Received groups={groups}")
        if filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. "
                             f"Received: groups={groups}, filters={filters}.")
        self.rank = rank
        self.filters = filters
        self.groups = groups
        set_window(self, rank, kernel_size, strides, dilation_rate, padding, data_format, allow_causal=rank == 1)
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
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {channels} channels (full input "
                             f"shape is {tuple(input_shape)}).")
        self.kernel = self.add_weight(name="kernel",
                                      shape=self.kernel_size + (channels // self.groups, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channel_axis(self.data_format): channels})

    def _tf_padding(self):
        """"VALID"/"SAME", or explicit (before, after) pairs for "causal" (left padding only)."""
        if self.padding != "causal":
            return self.padding.upper()
        left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
        steps = [left, 0]
        return [[0, 0], steps, [0, 0]] if self.data_format == "channels_last" else [[0, 0], [0, 0], steps]

    def convolution_op(self, inputs, kernel):
        return conv_ops.convolution(inputs, kernel, strides=self.strides, padding=self._tf_padding(),
                                    data_format=tf_data_format(self.data_format, self.rank),
                                    dilations=self.dilation_rate)

    def call(self, inputs):
        return bias_and_activation(self, self.convolution_op(inputs, self.kernel), self.rank)

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(input_shape, self.data_format, self.filters, window_lengths(self, input_shape))

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "groups": self.groups, "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": s(self.kernel_initializer), "bias_initializer": s(self.bias_initializer),
            "kernel_regularizer": s(self.kernel_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "kernel_constraint": s(self.kernel_constraint), "bias_constraint": s(self.bias_constraint),
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

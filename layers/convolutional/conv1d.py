"""Conv1D: 1-D convolution (cross-correlation, as Keras) over the steps of a sequence.

The layer calls ``tf.nn.conv1d`` (the Conv op, whose gradients are convolutions
again, so every derivative order works); "causal" padding is explicit padding
of ``(kernel_size - 1) * dilation_rate`` steps on the left.
"""
import numpy as np

from tapeflow.ops import conv_ops, math_ops, nn_ops

from .. import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object


def _single_int(value, name):
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"The `{name}` argument must be a tuple of 1 integer. Received {name}={value}")
        value = value[0]
    if not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"The `{name}` argument must be a positive integer. Received {name}={value}")
    return int(value)


def conv_output_length(length, kernel_size, padding, stride, dilation):
    if length is None:
        return None
    span = (kernel_size - 1) * dilation + 1
    if padding == "valid":
        return max(0, (length - span) // stride + 1)
    return -(-length // stride)  # "same" and "causal"


@keras_export("keras.layers.Conv1D")
class Conv1D(Layer):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters}.")
        padding = padding.lower()
        if padding not in ("valid", "same", "causal"):
            raise ValueError(f"The `padding` argument must be one of 'valid', 'same', 'causal'. "
                             f"Received: padding={padding}")
        if groups != 1:
            raise ValueError(f"Conv1D: grouped convolution is not supported by tapeflow. Received groups={groups}")
        self.filters = filters
        self.kernel_size = (_single_int(kernel_size, "kernel_size"),)
        self.strides = (_single_int(strides, "strides"),)
        self.dilation_rate = (_single_int(dilation_rate, "dilation_rate"),)
        if self.strides[0] > 1 and self.dilation_rate[0] > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.padding = padding
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                             f"Received: data_format={data_format}")
        self.groups = 1
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=3)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        channels = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to Conv1D should be defined. Received input "
                             f"shape {tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = InputSpec(ndim=3, axes={axis: channels})
        self.built = True

    def _tf_padding(self):
        """The padding argument of tf.nn.conv1d (explicit pairs in NWC or NCW order for "causal")."""
        if self.padding != "causal":
            return self.padding.upper()
        left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
        steps = [left, 0]
        return [[0, 0], steps, [0, 0]] if self.data_format == "channels_last" else [[0, 0], [0, 0], steps]

    def call(self, inputs):
        data_format = "NWC" if self.data_format == "channels_last" else "NCW"
        y = conv_ops.conv1d(inputs, self.kernel, self.strides[0], self._tf_padding(), data_format,
                            self.dilation_rate[0])
        if self.bias is not None:
            y = math_ops.add(y, self.bias) if data_format == "NWC" else nn_ops.bias_add(y, self.bias, "NCW")
        if self.activation is not activations.linear:
            y = self.activation(y)
        return y

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_last":
            batch, length, _ = input_shape
        else:
            batch, _, length = input_shape
        steps = conv_output_length(length, self.kernel_size[0], self.padding, self.strides[0],
                                   self.dilation_rate[0])
        if self.data_format == "channels_last":
            return (batch, steps, self.filters)
        return (batch, self.filters, steps)

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "groups": self.groups, "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": s(self.kernel_initializer), "bias_initializer": s(self.bias_initializer),
            "kernel_regularizer": s(self.kernel_regularizer), "bias_regularizer": s(self.bias_regularizer),
            "kernel_constraint": s(self.kernel_constraint), "bias_constraint": s(self.bias_constraint),
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

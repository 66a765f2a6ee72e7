"""Conv1D: 1-D convolution (cross-correlation, as Keras) over the steps of a sequence.

The windows are gathered into a (batch, steps_out, kernel_size * channels)
tensor and multiplied by the flattened kernel, so the layer is made of
ordinary ops (gather, pad, reshape, matmul) and every derivative order works.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, math_ops

from . import activations, constraints, initializers, regularizers
from .input_spec import InputSpec
from .layer import Layer, deserialize_nested_objects
from .serialization_lib import keras_export, serialize_keras_object


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

    def _padding(self, length):
        k, s, d = self.kernel_size[0], self.strides[0], self.dilation_rate[0]
        span = (k - 1) * d + 1
        if self.padding == "valid":
            return 0, 0
        if self.padding == "causal":
            return span - 1, 0
        out = conv_output_length(length, k, "same", s, d)
        total = max((out - 1) * s + span - length, 0)
        return total // 2, total - total // 2

    def call(self, inputs):
        x = inputs
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 2, 1])
        batch, length, channels = x._value.shape
        left, right = self._padding(length)
        if left or right:
            x = array_ops.pad(x, [[0, 0], [left, right], [0, 0]])
        k, s, d = self.kernel_size[0], self.strides[0], self.dilation_rate[0]
        steps = conv_output_length(length + left + right, k, "valid", s, d)
        index = np.arange(steps)[:, None] * s + np.arange(k)[None, :] * d
        windows = array_ops.gather(x, Tensor(index.astype(np.int64)), axis=1)  # (batch, steps, k, channels)
        windows = array_ops.reshape(windows, (batch, steps, k * channels))
        y = math_ops.matmul(windows, array_ops.reshape(self.kernel, (k * channels, self.filters)))
        if self.bias is not None:
            y = math_ops.add(y, self.bias)
        if self.activation is not activations.linear:
            y = self.activation(y)
        if self.data_format == "channels_first":
            y = array_ops.transpose(y, [0, 2, 1])
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

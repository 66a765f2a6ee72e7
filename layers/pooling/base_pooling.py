"""BasePooling and BaseGlobalPooling: the window and whole-axis pooling layers.

Window pooling is ``tf.nn.max_pool``/``avg_pool`` ("same" averages count only
the real cells, not the padding); ``strides`` defaults to ``pool_size``.
"""
from tapeflow.ops import pooling_ops, reduction_ops

from ..argument_validation import (conv_output_length, standardize_data_format, standardize_padding,
                                   standardize_tuple, tf_data_format)
from ..input_spec import InputSpec
from ..layer import Layer


class BasePooling(Layer):
    def __init__(self, rank, pool_type, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(name=name, **kwargs)
        self.rank = rank
        self.pool_type = pool_type
        self.pool_size = standardize_tuple(pool_size, rank, "pool_size")
        self.strides = self.pool_size if strides is None else standardize_tuple(strides, rank, "strides")
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def call(self, inputs):
        pool = pooling_ops.max_pool if self.pool_type == "max" else pooling_ops.avg_pool
        return pool(inputs, self.pool_size, self.strides, self.padding.upper(),
                    data_format=tf_data_format(self.data_format, self.rank))

    def compute_output_shape(self, input_shape):
        channels_last = self.data_format == "channels_last"
        spatial = input_shape[1:-1] if channels_last else input_shape[2:]
        lengths = tuple(conv_output_length(n, k, self.padding, s)
                        for n, k, s in zip(spatial, self.pool_size, self.strides))
        if channels_last:
            return (input_shape[0],) + lengths + (input_shape[-1],)
        return (input_shape[0], input_shape[1]) + lengths

    def get_config(self):
        config = super().get_config()
        config.update({"pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                       "data_format": self.data_format})
        return config


class BaseGlobalPooling(Layer):
    def __init__(self, rank, pool_type, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.rank = rank
        self.pool_type = pool_type
        self.data_format = standardize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _spatial_axes(self):
        first = 1 if self.data_format == "channels_last" else 2
        return list(range(first, first + self.rank))

    def call(self, inputs):
        reduce = reduction_ops.reduce_max if self.pool_type == "max" else reduction_ops.reduce_mean
        return reduce(inputs, axis=self._spatial_axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        axes = self._spatial_axes()
        if self.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(input_shape))
        return tuple(d for i, d in enumerate(input_shape) if i not in axes)

    def get_config(self):
        config = super().get_config()
        config.update({"data_format": self.data_format, "keepdims": self.keepdims})
        return config

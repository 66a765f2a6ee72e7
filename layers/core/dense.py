"""Dense: ``activation(inputs @ kernel + bias)``."""
from tapeflow.ops import math_ops, nn_ops

from .. import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object


@keras_export("keras.layers.Dense")
class Dense(Layer):
    """A densely-connected layer; inputs of rank > 2 are contracted along their last axis."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, lora_rank=None,
                 lora_alpha=None, quantization_config=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
        if lora_rank is not None or quantization_config is not None:
            raise ValueError("Dense: LoRA and quantization are not supported by tapeflow. Received: "
                             f"lora_rank={lora_rank}, quantization_config={quantization_config}")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError(f"The last dimension of the inputs to a Dense layer should be defined. "
                             f"Found None. Full input shape received: {tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, self.units),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: input_dim})
        self.built = True

    def call(self, inputs, training=None):
        x = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None and self.activation is activations.relu:
            return nn_ops.bias_relu(x, self.bias)  # one fused pass, forward and backward
        if self.bias is not None:
            x = math_ops.add(x, self.bias)
        if self.activation is not None and self.activation is not activations.linear:  # None: set by the user
            x = self.activation(x)
        return x

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": serialize_keras_object(self.kernel_initializer),
            "bias_initializer": serialize_keras_object(self.bias_initializer),
            "kernel_regularizer": serialize_keras_object(self.kernel_regularizer),
            "bias_regularizer": serialize_keras_object(self.bias_regularizer),
            "kernel_constraint": serialize_keras_object(self.kernel_constraint),
            "bias_constraint": serialize_keras_object(self.bias_constraint),
            "quantization_config": None,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

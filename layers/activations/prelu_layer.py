"""PReLU: ``x`` for x >= 0, ``alpha * x`` below, with a learned ``alpha`` per input cell.

``alpha`` has the input's shape without the batch axis, with size 1 on the
``shared_axes`` (1-based, as Keras: axis 1 is the first non-batch axis).
"""
from tapeflow.ops import math_ops, nn_ops

from .. import constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object


@keras_export("keras.layers.PReLU")
class PReLU(Layer):
    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, (list, tuple)):
            self.shared_axes = list(shared_axes)
        else:
            self.shared_axes = [shared_axes]
        self.alpha = None

    def build(self, input_shape):
        param_shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            if not 1 <= axis < len(input_shape):
                raise ValueError(f"PReLU: shared_axes entry {axis} is not an axis of the inputs (1 to "
                                 f"{len(input_shape) - 1}; input shape {tuple(input_shape)})")
            param_shape[axis - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError(f"PReLU needs known sizes on every non-shared axis. Received input shape "
                             f"{tuple(input_shape)} with shared_axes={self.shared_axes}")
        self.alpha = self.add_weight(name="alpha", shape=param_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, len(input_shape)) if i not in (self.shared_axes or ())}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)

    def call(self, inputs):
        positive = nn_ops.relu(inputs)
        negative = math_ops.multiply(math_ops.negative(self.alpha), nn_ops.relu(math_ops.negative(inputs)))
        return math_ops.add(positive, negative)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"alpha_initializer": serialize_keras_object(self.alpha_initializer),
                       "alpha_regularizer": serialize_keras_object(self.alpha_regularizer),
                       "alpha_constraint": serialize_keras_object(self.alpha_constraint),
                       "shared_axes": self.shared_axes})
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

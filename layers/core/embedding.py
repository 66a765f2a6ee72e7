"""Embedding: integer indices -> rows of a trainable (input_dim, output_dim) matrix."""
import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops import array_ops, math_ops

from .. import constraints, initializers, regularizers
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object


@keras_export("keras.layers.Embedding")
class Embedding(Layer):
    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, lora_rank=None, quantization_config=None,
                 **kwargs):
        kwargs.pop("input_length", None)
        if kwargs.pop("quantization_config", None) is not None:   # Keras 3.15 writes null
            raise ValueError("Embedding: quantization is not supported by tapeflow.")
        super().__init__(**kwargs)
        for name, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Received an invalid value for argument `{name}`. Expected a positive integer. "
                                 f"Received: {name}={value}")
        if lora_rank is not None or quantization_config is not None:
            raise ValueError("Embedding: LoRA and quantization are not supported by tapeflow.")
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self._initial_weights = weights
        self.autocast = False

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim), name="embeddings",
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _convert_inputs(self, x):
        if isinstance(x, Tensor):
            return x
        arr = host_array(x)
        return Tensor(arr if arr.dtype.kind in "iu" else arr.astype(np.int32))

    def call(self, inputs):
        if host_array(inputs).dtype.kind not in "iu":
            inputs = math_ops.cast(inputs, "int32")
        return array_ops.gather(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def compute_output_spec(self, *args, **kwargs):
        from ..keras_tensor import KerasTensor
        return KerasTensor(self.compute_output_shape(args[0].shape), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "input_dim": self.input_dim, "output_dim": self.output_dim,
            "embeddings_initializer": s(self.embeddings_initializer),
            "embeddings_regularizer": s(self.embeddings_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "embeddings_constraint": s(self.embeddings_constraint), "mask_zero": self.mask_zero,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))

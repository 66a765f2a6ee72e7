"""TimeDistributed: applies a layer to every step of a sequence (the steps folded into the batch)."""
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops

from ..layer import Layer
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object


@keras_export("keras.layers.TimeDistributed")
class TimeDistributed(Layer):
    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        self.layer = layer
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {input_shape}")
        if not self.layer.built:
            self.layer.build((None,) + input_shape[2:])
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        shape = host_array(inputs).shape
        folded = array_ops.reshape(inputs, (shape[0] * shape[1],) + shape[2:])
        y = self.layer(folded, training=training)
        return array_ops.reshape(y, shape[:2] + tuple(host_array(y).shape[1:]))

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape((None,) + tuple(input_shape[2:]))
        return tuple(input_shape[:2]) + tuple(inner[1:])

    def get_config(self):
        config = super().get_config()
        config["layer"] = serialize_keras_object(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config.pop("layer"), custom_objects=custom_objects)
        return cls(**config)

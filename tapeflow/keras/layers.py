"""tf.keras.layers: the layer classes of tapeflow.layers."""
from tapeflow.layers import (Activation, Add, Average, BatchNormalization, Concatenate, Conv1D, Dense,  # noqa: F401
                             Dropout, Embedding, Flatten, Input, InputLayer, InputSpec, Layer, LayerNormalization,
                             Maximum, Minimum, Multiply, Reshape, Subtract)
from tapeflow.layers.serialization_lib import deserialize_keras_object as deserialize  # noqa: F401
from tapeflow.layers.serialization_lib import serialize_keras_object as serialize  # noqa: F401

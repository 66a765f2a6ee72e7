"""tf.keras.layers: the layer classes of tapeflow.layers."""
from tapeflow.layers import (Activation, Add, Average, BatchNormalization, Concatenate, Dense, Dropout,  # noqa: F401
                             Embedding, Flatten, Input, InputLayer, InputSpec, Layer, LayerNormalization,
                             Maximum, Minimum, Multiply, Reshape, Subtract)

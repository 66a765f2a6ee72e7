"""tf.keras.activations: re-exports tapeflow.layers.activations."""
from tapeflow.layers.activations import (deserialize, elu, exponential, gelu, get, hard_sigmoid,  # noqa: F401
                                         leaky_relu, linear, log_softmax, mish, relu, relu6, selu, serialize,
                                         sigmoid, silu, softmax, softplus, softsign, swish, tanh)

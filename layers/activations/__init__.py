"""Activation functions (``tf.keras.activations``).

Only functions here: ``layer.py`` imports this package, so the activation layers
(``activation.py``, ...) are imported by ``tapeflow.layers`` from their modules.
"""
from .functions import (deserialize, elu, exponential, gelu, get, hard_sigmoid, leaky_relu, linear,  # noqa: F401
                        log_softmax, logits_of, mish, relu, relu6, selu, serialize, sigmoid, silu,
                        softmax, softplus, softsign, swish, tanh)

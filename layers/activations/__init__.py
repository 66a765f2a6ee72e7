"""Activation functions (``tf.keras.activations``).

Only functions here: ``layer.py`` imports this package, so the activation layers
(``activation.py``, ``relu_layer.py``, ...) are imported by ``tapeflow.layers`` from their modules. The
layer modules whose Keras names would be those of functions (``relu``, ``softmax``, ...) carry a
``_layer`` suffix: importing a submodule ``relu`` would replace the function ``relu`` of this package.
"""
from .functions import (deserialize, elu, exponential, gelu, get, hard_sigmoid, leaky_relu, linear,  # noqa: F401
                        log_softmax, logits_of, mish, relu, relu6, selu, serialize, sigmoid, silu,
                        softmax, softplus, softsign, swish, tanh)

"""tf.nn"""
from .ops.math_ops import tanh  # noqa: F401
from .ops.linalg_ops import l2_normalize  # noqa: F401
from .ops.nn_ops import (batch_normalization, bias_add, dropout, elu, gelu, l2_loss, leaky_relu,  # noqa: F401
                         log_softmax, moments, relu, relu6, selu, sigmoid, sigmoid_cross_entropy_with_logits, silu,
                         softmax, softmax_cross_entropy_with_logits, softplus, softsign,
                         sparse_softmax_cross_entropy_with_logits, swish, weighted_cross_entropy_with_logits)
from .ops.nn_ops import log_sigmoid, top_k  # noqa: F401

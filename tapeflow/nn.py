"""tf.nn"""
from types import SimpleNamespace

from .ops.math_ops import tanh  # noqa: F401
from .ops.linalg_ops import l2_normalize  # noqa: F401
from .ops.nn_ops import (batch_normalization, bias_add, dropout, elu, gelu, l2_loss, leaky_relu,  # noqa: F401
                         log_softmax, moments, relu, relu6, selu, sigmoid, sigmoid_cross_entropy_with_logits, silu,
                         softmax, softmax_cross_entropy_with_logits, softplus, softsign,
                         sparse_softmax_cross_entropy_with_logits, swish, weighted_cross_entropy_with_logits)
from .ops.nn_ops import log_sigmoid, stateless_dropout, top_k  # noqa: F401
from .ops.conv_ops import (conv1d, conv1d_transpose, conv2d, conv2d_transpose, conv3d, conv3d_transpose,  # noqa: F401
                           conv_transpose, convolution, depthwise_conv2d, separable_conv2d)
from .ops.embedding_ops import embedding_lookup  # noqa: F401
from .ops.pooling_ops import (avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool, max_pool1d,  # noqa: F401
                              max_pool2d, max_pool3d)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The replica's loss scaled for data parallelism (see tapeflow.distribute.losses)."""
    from .distribute.losses import compute_average_loss as average
    return average(per_example_loss, sample_weight, global_batch_size)


def scale_regularization_loss(regularization_loss):
    """A regularization loss divided by the number of replicas (see tapeflow.distribute.losses)."""
    from .distribute.losses import scale_regularization_loss as scale
    return scale(regularization_loss)


experimental = SimpleNamespace(stateless_dropout=stateless_dropout)   # tf.nn.experimental

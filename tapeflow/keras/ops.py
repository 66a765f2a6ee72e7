"""tf.keras.ops (``from keras import ops``): re-exports tapeflow.keras_ops.

``ops.numpy``, ``ops.nn``, ``ops.core``, ``ops.math``, ``ops.linalg`` and
``ops.image`` are the namespaces of those names; every op is also reachable
directly (``ops.matmul``, ``ops.softmax``, ``ops.top_k``, ``ops.det``, ...).
"""
from tapeflow.keras_ops import core, image, linalg, math, nn, numpy  # noqa: F401
from tapeflow.keras_ops.core import (associative_scan, cast, cond, convert_to_numpy, convert_to_tensor,  # noqa: F401
                                     custom_gradient, dtype, fori_loop, is_tensor, map, saturate_cast, scan,
                                     scatter, scatter_update, shape, slice, slice_update, stop_gradient, switch,
                                     unstack, vectorized_map, while_loop)
from tapeflow.keras_ops.convolution import (average_pool, conv, conv_transpose, depthwise_conv,  # noqa: F401
                                            max_pool, separable_conv)
from tapeflow.keras_ops.image import rgb_to_grayscale  # noqa: F401
from tapeflow.keras_ops.linalg import cholesky, det, inv, norm, solve, solve_triangular  # noqa: F401
from tapeflow.keras_ops.math import (erf, erfinv, extract_sequences, in_top_k, logdet, logsumexp, rsqrt,  # noqa: F401
                                     segment_max, segment_sum, top_k)
from tapeflow.keras_ops.nn import (batch_normalization, binary_crossentropy, categorical_crossentropy,  # noqa: F401
                                   celu, dot_product_attention, elu, gelu, glu, hard_shrink, hard_sigmoid, hard_silu,
                                   hard_swish, hard_tanh, layer_normalization, leaky_relu, log_sigmoid, log_softmax,
                                   moments, multi_hot, normalize, one_hot, psnr, relu, relu6, rms_normalization, selu,
                                   sigmoid, silu, soft_shrink, softmax, softplus, softsign,
                                   sparse_categorical_crossentropy, sparse_plus, sparse_sigmoid, squareplus, swish,
                                   tanh_shrink, threshold)
from tapeflow.keras_ops.numpy import *  # noqa: F401,F403

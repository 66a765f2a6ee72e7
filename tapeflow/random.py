"""tf.random"""
from .ops.random_ops import (categorical, normal, set_seed, shuffle, stateless_normal,  # noqa: F401
                             stateless_uniform, truncated_normal, uniform)

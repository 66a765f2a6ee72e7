"""tf.random"""
from .ops.random_ops import (categorical, normal, set_seed, shuffle, stateless_normal,  # noqa: F401
                             stateless_uniform, truncated_normal, uniform)
from .random_generator import Generator, get_global_generator, set_global_generator  # noqa: F401

"""tf.random"""
from .ops.random_ops import categorical, normal, set_seed, shuffle, truncated_normal, uniform  # noqa: F401
from .ops.stateless_random_ops import (stateless_normal, stateless_truncated_normal,  # noqa: F401
                                       stateless_uniform)
from .random_generator import Generator, get_global_generator, set_global_generator  # noqa: F401

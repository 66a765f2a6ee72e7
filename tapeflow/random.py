"""tf.random"""
from types import SimpleNamespace

from .candidate_sampling import log_uniform_candidate_sampler  # noqa: F401
from .ops import stateless_random_ops as _stateless_ops
from .ops.random_ops import categorical, normal, set_seed, shuffle, truncated_normal, uniform  # noqa: F401
from .ops.stateless_random_ops import (stateless_categorical, stateless_normal,  # noqa: F401
                                       stateless_truncated_normal, stateless_uniform)
from .random_generator import Generator, get_global_generator, set_global_generator  # noqa: F401

experimental = SimpleNamespace(stateless_shuffle=_stateless_ops.stateless_shuffle)   # tf.random.experimental
